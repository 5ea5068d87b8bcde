// The end-to-end test's worker process: the order saga's effects, each run
// appended to a log (its idempotency key). Usage: e2e_worker.mjs URL LOG
import { appendFileSync } from "node:fs";
import { Worker } from "../src/index.js";

const [url, log] = process.argv.slice(2);
const w = new Worker(url, { concurrency: 8, leaseMs: 2000, pollWaitMs: 2000 });
const record = (task) => appendFileSync(log, `${task.idempotencyKey}\n`);
w.effect("inventory.*", (t) => (record(t), { ok: true }));
w.effect("payment.*", (t) => {
  record(t);
  // Every tenth order's card is declined: the saga compensates.
  if (t.key === "payment.charge" && t.executionId.endsWith("7")) throw new Error("card declined");
  return { ok: true };
});
w.effect("shipping.*", (t) => (record(t), { ok: true }));
console.log("ready");
await w.run({ signals: true });
