// args: []
export default async function run() {
  const d = { a: 1, b: [1, 2] };
  d.c = 3;
  d.b.push(3);
  d["e"] = "x";
  const xs = [3, 1, 2];
  xs[0] = 10;
  xs[2] += 5;
  const alias = xs;
  alias.push(99);
  return [d, xs, alias === xs, [1, 2] === [1, 2], xs[10], d.missing, d.b.length];
}
