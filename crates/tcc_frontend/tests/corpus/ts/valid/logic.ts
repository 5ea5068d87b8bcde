// args: [0, "", 5]
export default async function run(a, b, d) {
  return [a || b, a && d, d && "yes", b || d, !a, !d, a ? 1 : 2, null === undefined, d !== null];
}
