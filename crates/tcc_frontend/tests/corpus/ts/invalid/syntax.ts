export default async function run() {
  return 1 +;
}
