// args: [[1, 2, 3]]
// node: no (type annotations)
// expect: {"sum": 6, "first": 1, "label": "total 6"}
type Totals = { sum: number; first: number; label: string };
interface Unused { x: number }

function sum(xs: number[]): number {
  let s: number = 0;
  for (const x of xs) s += x;
  return s;
}

export default async function run(xs: number[]): Promise<Totals> {
  const s = sum(xs) as number;
  const first = xs[0]!;
  return { sum: s, first: first, label: `total ${s}` };
}
