// args: [[3, 1, 4, 1, 5]]
// expect: {"doubled": [6, 2, 8, 2, 10], "big": [3, 4, 5], "sum": 14, "product": 60, "indexed": [0, 1, 2, 3, 4], "words": "a-b-c", "empty": 7, "nested": [[1], [1, 2]]}
function double(x) {
  return x * 2;
}

export default async function run(xs) {
  const doubled = xs.map(double);
  const big = xs.filter((x) => x > 2);
  const sum = xs.reduce((a, b) => a + b, 0);
  const product = xs.reduce((a, b) => a * b);
  const indexed = xs.map((_x, i) => i);
  const words = ["a", "b", "c"].reduce((acc, w) => acc + "-" + w);
  const empty = [].reduce((a, b) => a + b, 7);
  const nested = [1, 2].map((n) => [1, 2].filter((k) => k <= n));
  return { doubled, big, sum, product, indexed, words, empty, nested };
}
