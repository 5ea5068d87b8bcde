export default async function run() {
  return y;
}
