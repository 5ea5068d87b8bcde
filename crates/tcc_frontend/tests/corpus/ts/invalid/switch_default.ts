export default async function run(x) {
  switch (x) {
    default:
      return 0;
    case 1:
      return 1;
  }
}
