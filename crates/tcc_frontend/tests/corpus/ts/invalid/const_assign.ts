export default async function run() {
  const x = 1;
  x = 2;
  return x;
}
