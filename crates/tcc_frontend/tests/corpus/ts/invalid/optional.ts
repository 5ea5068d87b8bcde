export default async function run(o) {
  return o?.x;
}
