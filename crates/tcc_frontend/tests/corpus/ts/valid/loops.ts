// args: [10]
export default async function run(n) {
  let total = 0;
  let i = 0;
  while (true) {
    i++;
    if (i > n) break;
    if (i % 3 === 0) continue;
    total += i;
  }
  const evens = [];
  for (let k = 0; k < n; k += 2) {
    evens.push(k);
  }
  let d = 0;
  do {
    d += 3;
  } while (d < 10);
  const seen = [];
  for (const e of evens) {
    if (e === 4) continue;
    seen.push(e * e);
  }
  return { total: total, evens: evens, d: d, seen: seen };
}
