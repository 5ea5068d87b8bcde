// args: [5]
// A `break` inside `try` pops the handler and runs `finally`.
export default async function run(n) {
  const log = [];
  let i = 0;
  while (i < n) {
    i = i + 1;
    try {
      if (i === 3) break;
      log.push(i);
    } finally {
      log.push("f");
    }
  }
  try {
    throw "later";
  } catch (e) {
    log.push("caught");
  }
  return log;
}
