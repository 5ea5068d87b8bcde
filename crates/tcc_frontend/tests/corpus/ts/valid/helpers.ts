// args: [4]
function fact(n) {
  if (n <= 1) return 1;
  return n * fact(n - 1);
}

function describe(x, label = "n") {
  return label + "=" + (x > 10 ? "big" : "small");
}

export default async function run(n) {
  return [fact(n), describe(fact(n)), describe(1, "one"), fact === fact];
}
