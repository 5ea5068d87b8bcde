// args: [[4, 8, 15, 16, 23, 42]]
function find(xs, target) {
  let i = 0;
  while (i < xs.length) {
    if (xs[i] === target) return i;
    i = i + 1;
  }
  return -1;
}

export default async function run(xs) {
  return [find(xs, 15), find(xs, 99), xs[xs.length - 2], xs.length];
}
