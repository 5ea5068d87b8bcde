export default async function run() {
  const f = () => x;
  let x = 1;
  return f();
}
