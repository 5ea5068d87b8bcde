const LIMIT = 3;
export default async function run() {
  LIMIT = 4;
  return LIMIT;
}
