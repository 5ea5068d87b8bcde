// args: []
function f(log) {
  try {
    log.push("body");
    return "from try";
  } finally {
    log.push("finally");
  }
}

export default async function run() {
  const log = [];
  const r = f(log);
  return [r, log];
}
