export default async function run() {
  var x = 1;
  return x;
}
