// args: [6]
export default async function run(n) {
  let i = 0;
  let total = 0;
  const odd = [];
  while (i < n) {
    i = i + 1;
    if (i % 2 === 0) continue;
    total = total + i;
    odd.push(i);
  }
  return { total: total, odd: odd, count: odd.length };
}
