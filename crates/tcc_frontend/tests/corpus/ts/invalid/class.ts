export default async function run() {
  class A {}
}
