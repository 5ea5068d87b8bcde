// The test helper: workflows run against scripted answers, no server.
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { writeFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { simulate, ok, fail, SimulationError } from "../src/testing.js";
import { EXAMPLES, IRKIT } from "../test_support/helpers.mjs";

const SAGA = join(EXAMPLES, "order_saga.ts");
const APPROVAL = join(EXAMPLES, "approval.ts");

test("the saga ships when every effect succeeds", async () => {
  const run = await simulate(SAGA, [{ id: "o-1" }], { effects: { "*": ok(true) }, irkit: IRKIT });
  assert.equal(run.status, "completed");
  assert.deepEqual(run.result, { order: "o-1", status: "shipped", steps: ["reserve", "charge", "ship"] });
  assert.equal(run.effects[1].idempotencyKey, "simulated:payment.charge");
});

test("failures are compensated and answers come in sequence", async () => {
  const run = await simulate(SAGA, [{ id: "o-2" }], {
    effects: { "shipping.ship": fail("no courier"), "*": ok(null) },
    irkit: IRKIT,
  });
  assert.equal(run.result.status, "compensated");
  assert.deepEqual(run.result.undone, ["refund", "release"]);
  assert.equal(run.calls("shipping.ship")[0].error, "no courier");
  await assert.rejects(
    simulate(SAGA, [{ id: "o-3" }], { effects: { "payment.charge": [], "*": ok(null) }, irkit: IRKIT }),
    (e) => e instanceof SimulationError && /payment\.charge/.test(e.message),
  );
});

test("events that never arrive, timers skipped", async () => {
  const granted = await simulate(APPROVAL, ["r-1"], {
    effects: { "*": ok(null) }, events: { "approval.decision": "approve" }, irkit: IRKIT,
  });
  assert.equal(granted.result.outcome, "granted");
  const escalated = await simulate(APPROVAL, ["r-2"], { effects: { "*": ok(null) }, irkit: IRKIT });
  assert.equal(escalated.result.outcome, "escalated");
  assert.equal(escalated.timersSkipped, 1);
  const dir = mkdtempSync(join(tmpdir(), "sim-"));
  const wf = join(dir, "twice.ts");
  writeFileSync(wf, `import { waitForEvent } from "@tcc-engine/primitives";
export default async function run() {
  const a = await waitForEvent("go");
  const b = await waitForEvent("go");
  return [a, b];
}
`);
  const stuck = await simulate(wf, [], { events: { go: [1] }, irkit: IRKIT });
  assert.equal(stuck.status, "suspended");
  assert.deepEqual(stuck.waitingFor, ["go"]);
  assert.deepEqual((await simulate(wf, [], { events: { go: [1, 2] }, irkit: IRKIT })).result, [1, 2]);
});
