// Worker against a real server: the saga's effects in JavaScript, failures
// compensated, bounded concurrency, graceful SIGTERM.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Client, Worker } from "../src/index.js";
import { exampleServer, firstLine } from "../test_support/helpers.mjs";

const TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

let server;
before(async () => (server = await exampleServer()));
after(async () => server.close());

function sagaWorker(opts = {}) {
  const w = new Worker(server.url, { concurrency: opts.concurrency ?? 4, leaseMs: 5000, pollWaitMs: 500 });
  const seen = [];
  let now = 0;
  let most = 0;
  const track = async (task) => {
    seen.push(task);
    most = Math.max(most, ++now);
    await new Promise((r) => setTimeout(r, opts.delay ?? 0));
    now--;
  };
  w.effect("inventory.*", async (t) => (await track(t), { ok: true }));
  w.effect("payment.*", async (t) => {
    await track(t);
    if (t.key === "payment.charge" && (opts.declined ?? []).includes(t.executionId)) throw new Error("card declined");
    return { charged: true };
  });
  w.effect("shipping.ship", async (t) => (await track(t), "shipped"));
  return { w, seen, most: () => most };
}

test("the saga runs on a JavaScript worker", async () => {
  const { w, seen } = sagaWorker({ declined: ["order-bad"] });
  const running = w.run();
  try {
    const c = new Client(server.url);
    assert.deepEqual(await c.run("order_saga", [{ id: "o-1" }], { id: "order-ok", wait: 30_000, traceparent: TRACEPARENT }), {
      order: "o-1", status: "shipped", steps: ["reserve", "charge", "ship"],
    });
    const r = await c.run("order_saga", [{ id: "o-2" }], { id: "order-bad", wait: 30_000 });
    assert.equal(r.status, "compensated");
    assert.deepEqual(r.undone, ["release"]);
    assert.match(JSON.stringify(r.error), /card declined/);
  } finally {
    w.stop();
    await running;
  }
  for (const t of seen) assert.equal(t.idempotencyKey, `${t.executionId}:${t.key}`);
  // The start's trace context reaches its effects' handlers (the test server
  // exports no spans: passed on unchanged), and only theirs.
  for (const t of seen) assert.equal(t.traceparent, t.executionId === "order-ok" ? TRACEPARENT : null);
});

test("handlers run concurrently within the bound", async () => {
  const { w, seen, most } = sagaWorker({ concurrency: 2, delay: 150 });
  const running = w.run();
  try {
    const c = new Client(server.url);
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push(await c.start("order_saga", [{ id: `c-${i}` }]));
    for (const id of ids) assert.equal((await c.result(id, { wait: 60_000 })).status, "completed");
  } finally {
    w.stop();
    await running;
  }
  assert.equal(seen.length, 12);
  assert.equal(most(), 2);
});

test("SIGTERM lets running handlers finish", async () => {
  const script = fileURLToPath(new URL("../test_support/slow_worker.mjs", import.meta.url));
  const p = spawn(process.execPath, [script, server.url], { stdio: ["ignore", "pipe", "inherit"] });
  const exited = new Promise((r) => p.once("exit", (code) => r(code)));
  let out = "";
  const c = new Client(server.url);
  const id = await c.start("order_saga", [{ id: "o-term" }]);
  const first = await firstLine(p.stdout);
  p.stdout.on("data", (d) => (out += d));
  assert.equal(first, "started inventory.reserve");
  p.kill("SIGTERM");
  assert.equal(await exited, 0);
  assert.match(out, /finished inventory\.reserve/);
  assert.match(out, /stopped\s*$/);
  // A task taken by the poll in flight when the signal came is run too:
  // every task started is finished and answered.
  const started = [...(first + "\n" + out).matchAll(/started (\S+)/g)].map((m) => m[1]);
  const finished = [...out.matchAll(/finished (\S+)/g)].map((m) => m[1]);
  assert.deepEqual(finished, started);
  const { body } = await c.http.request("GET", `/v1/tasks/${encodeURIComponent(`${id}:inventory.reserve`)}`);
  assert.equal(body.state, "completed");
});
