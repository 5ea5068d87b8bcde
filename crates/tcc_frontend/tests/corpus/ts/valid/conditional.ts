// args: [7, -2]
function sign(v) {
  return v > 0 ? "pos" : v === 0 ? "zero" : "neg";
}

export default async function run(a, b) {
  const big = a > b ? a : b;
  const both = a > 0 && b > 0;
  const either = a > 0 || b > 0;
  return [sign(a), sign(b), sign(0), big, both, either, !both];
}
