// A worker whose handlers take a second (for the SIGTERM test).
import { Worker } from "../src/index.js";

const w = new Worker(process.argv[2], { concurrency: 2, leaseMs: 5000, pollWaitMs: 500 });
w.effect("*", async (task) => {
  console.log(`started ${task.key}`);
  await new Promise((r) => setTimeout(r, 1000));
  console.log(`finished ${task.key}`);
  return "done";
});
await w.run({ signals: true });
console.log("stopped");
