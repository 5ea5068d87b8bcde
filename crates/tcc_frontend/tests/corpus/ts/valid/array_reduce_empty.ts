// node: no (JavaScript throws a TypeError object; the subset throws its message)
// expect: {"caught": "TypeError: Reduce of empty array with no initial value", "typed": [2, 4]}
export default async function run() {
  let caught = "";
  try {
    [].reduce((a: number, b: number) => a + b);
  } catch (e) {
    caught = e;
  }
  const typed: number[] = [1, 2].map((x: number): number => x * 2);
  return { caught, typed };
}
