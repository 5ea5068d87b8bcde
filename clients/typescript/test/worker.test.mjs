// Worker against a real server: the saga's effects in JavaScript, failures
// compensated, bounded concurrency, graceful SIGTERM.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { ApiError, Client, Worker } from "../src/index.js";
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

test("answers that finish together go in one request", async () => {
  // Six reserves finish together: those waiting while the first request is
  // on its way go together in the next (six answers, at most two requests).
  // A result that is not JSON fails its own effect (the saga compensates),
  // not the batch it was in.
  const orders = Array.from({ length: 6 }, (_, i) => `tsbatch-${i}`);
  const w = new Worker(server.url, { concurrency: 8, leaseMs: 10_000, pollWaitMs: 500 });
  let arrived = 0;
  let release;
  const together = new Promise((r) => (release = r));
  w.effect("inventory.*", async (t) => {
    if (t.key === "inventory.reserve" && ++arrived === 6) release();
    if (t.key === "inventory.reserve") await together;
    return { ok: true };
  });
  w.effect("payment.*", async (t) => (t.executionId === "tsbatch-0" ? { n: 1n } : { charged: true }));
  w.effect("shipping.*", async () => "shipped");
  const batches = [];
  const send = w.http.request.bind(w.http);
  w.http.request = async (method, path, opts) => {
    if (path === "/v1/tasks/answers") {
      batches.push(opts.json.answers.map((a) => a.id));
      if (batches.length === 1) {
        // Hold the first request until the other reserves' answers wait.
        const deadline = Date.now() + 5000;
        while (batches[0].length + w.outbox.length < 6 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      }
    }
    return send(method, path, opts);
  };
  const running = w.run();
  const results = {};
  try {
    const c = new Client(server.url);
    for (const o of orders) await c.start("order_saga", [{ id: o }], { id: o });
    for (const o of orders) results[o] = await c.result(o, { wait: 60_000 });
  } finally {
    w.stop();
    await running;
  }
  const reserves = batches.slice(0, 2).flat().filter((i) => i.endsWith(":inventory.reserve"));
  assert.deepEqual(reserves.sort(), orders.map((o) => `${o}:inventory.reserve`).sort(), JSON.stringify(batches));
  for (const o of orders.slice(1)) assert.equal(results[o].result.status, "shipped", JSON.stringify(results[o]));
  const bad = results["tsbatch-0"].result;
  assert.equal(bad.status, "compensated", JSON.stringify(results["tsbatch-0"]));
  assert.match(JSON.stringify(bad.error), /BigInt/);
});

test("a batch the host refuses goes answer by answer", async () => {
  // A batch refused whole (413: one result too large) is sent again one
  // answer per request, so the others are not lost with it; a host without
  // the batch route (404) gets every later answer on its own route.
  const w = new Worker("http://127.0.0.1:9", { leaseMs: 1000 });
  const calls = [];
  w.http.request = async (method, path) => {
    calls.push(path);
    if (path === "/v1/tasks/answers" || path === "/v1/tasks/t-big/complete") {
      throw new ApiError(413, "payload_too_large", "more than 100000 JSON values", "TCC-H207");
    }
    return { status: 200, body: { accepted: true } };
  };
  const batch = ["a", "big", "b"].map((n) => ({
    task: { idempotencyKey: `t-${n}`, lease: "l" },
    answer: { id: `t-${n}`, lease: "l", outcome: "complete", result: 1 },
    sent: () => {},
  }));
  await w.sendBatch(batch);
  assert.deepEqual(calls, ["/v1/tasks/answers", "/v1/tasks/t-a/complete", "/v1/tasks/t-big/complete", "/v1/tasks/t-b/complete"]);
  assert.equal(w.batches, true, "a refused batch does not stop batching");
  calls.length = 0;
  w.http.request = async (method, path) => {
    calls.push(path);
    if (path === "/v1/tasks/answers") throw new ApiError(404, "not_found", "no route", "TCC-H202");
    return { status: 200, body: { accepted: true } };
  };
  await w.sendBatch(batch.slice(0, 1));
  await w.sendBatch(batch.slice(2));
  assert.deepEqual(calls, ["/v1/tasks/answers", "/v1/tasks/t-a/complete", "/v1/tasks/t-b/complete"]);
  assert.equal(w.batches, false);
});
