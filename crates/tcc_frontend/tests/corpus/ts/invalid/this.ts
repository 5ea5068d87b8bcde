export default async function run() {
  return this;
}
