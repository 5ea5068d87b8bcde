// args: [0]
function risky(x) {
  if (x === 0) throw "zero";
  return 10 / x;
}

export default async function run(x) {
  const log = [];
  try {
    log.push("try");
    risky(x);
    log.push("unreached");
  } catch (e) {
    log.push("caught " + e);
  } finally {
    log.push("finally");
  }
  for (let i = 0; i < 5; i++) {
    try {
      if (i === 2) break;
      log.push(i);
    } finally {
      log.push("f");
    }
  }
  try {
    try {
      throw "inner";
    } finally {
      log.push("cleanup");
    }
  } catch (e) {
    log.push(e);
  }
  try {
    log.push("no catch");
  } finally {
    log.push("always");
  }
  return log;
}
