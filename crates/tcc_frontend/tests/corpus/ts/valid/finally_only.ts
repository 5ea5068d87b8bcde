// args: [2]
// A catch-less `finally` runs on the normal path.
export default async function run(x) {
  const log = [];
  try {
    log.push(x * 10);
  } finally {
    log.push("cleanup");
  }
  return log;
}
