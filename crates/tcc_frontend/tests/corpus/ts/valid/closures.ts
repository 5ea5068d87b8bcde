// args: [3]
function makeCounter(start) {
  let count = start;
  return (by = 1) => {
    count += by;
    return count;
  };
}

export default async function run(n) {
  const c = makeCounter(n);
  c();
  c(10);
  const mul = (k) => (x) => x * k;
  const twice = mul(2);
  const helper = function (v) {
    return twice(v) + n;
  };
  return [c(), twice(21), helper(4)];
}
