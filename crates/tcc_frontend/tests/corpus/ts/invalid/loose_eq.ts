export default async function run(a) {
  return a == 1;
}
