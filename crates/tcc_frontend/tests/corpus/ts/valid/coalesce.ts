// args: [null, 0, "x"]
export default async function run(a, b, c) {
  const o = { v: undefined };
  return [a ?? "dflt", b ?? "dflt", c ?? "dflt", o.v ?? 7, o.missing ?? (a ?? 3)];
}
