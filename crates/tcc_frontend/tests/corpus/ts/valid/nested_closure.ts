// args: [5]
export default async function run(n) {
  const base = n * 2;
  function outer(k) {
    const extra = 1;
    function inner(j) {
      return base + extra + j + k;
    }
    return inner(10);
  }
  return [outer(1), outer(2), base];
}
