export default async function run() {
  const fs = [];
  for (let i = 0; i < 3; i++) {
    fs.push(() => i);
  }
  return fs;
}
