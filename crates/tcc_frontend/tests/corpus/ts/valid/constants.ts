// args: [4]
const RATE = 3;
const LABEL = "total", OFFSET = -1.5;

function price(n) {
  return n * RATE + OFFSET;
}

export default async function run(n) {
  return { label: LABEL, value: price(n), rate: RATE };
}
