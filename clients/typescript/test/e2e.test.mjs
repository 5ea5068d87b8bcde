// End to end: a real `irkit tcc serve` (SQLite; and two nodes on one
// PostgreSQL schema when IRKIT_CLIENTS_PG_URL names one), a JavaScript worker
// process handling the order saga's effects, and an application starting 200
// executions and awaiting every result. Midway the worker is SIGKILLed and
// restarted, then a host node. Every execution ends with the right result;
// every effect is journalled once; a handler ran again only under the same
// idempotency key (at most once per task in flight at a kill).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync, rmSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client, TransportError } from "../src/index.js";
import { EXAMPLES, Server, firstLine } from "../test_support/helpers.mjs";

const ORDERS = 200;
const APPS = 20;
const FLAGS = ["--workers", "16", "--lease-ms", "2000"];

async function retrying(fn) {
  const end = Date.now() + 60_000;
  for (;;) {
    try {
      return await fn();
    } catch (e) {
      if (!(e instanceof TransportError) || Date.now() > end) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

const expected = (i) =>
  String(i).endsWith("7")
    ? { order: `o-${i}`, status: "compensated", steps: ["reserve"], undone: ["release"], error: "card declined" }
    : { order: `o-${i}`, status: "shipped", steps: ["reserve", "charge", "ship"] };

/** The test on `nodes` (the worker talks to the first; the last is the one killed). */
async function ordersSurvive(nodes) {
  const host = nodes[nodes.length - 1];
  nodes[0].register(join(EXAMPLES, "order_saga.ts"), "order_saga");
  const logDir = mkdtempSync(join(tmpdir(), "irkit-ts-e2e-"));
  const log = join(logDir, "effects.log");
  const script = fileURLToPath(new URL("../test_support/e2e_worker.mjs", import.meta.url));
  const startWorker = async () => {
    const p = spawn(process.execPath, [script, nodes[0].url, log], { stdio: ["ignore", "pipe", "inherit"] });
    assert.equal(await firstLine(p.stdout), "ready");
    return p;
  };
  const killed = (p) => new Promise((r) => (p.exitCode !== null || p.signalCode !== null ? r() : (p.once("exit", r), p.kill("SIGKILL"))));
  let worker = await startWorker();
  const results = new Map();
  try {
    try {
      const order = async (i) => {
        const c = new Client(nodes[i % nodes.length].url);
        const id = `order-${String(i).padStart(3, "0")}`;
        await retrying(() => c.start("order_saga", [{ id: `o-${i}` }], { id }));
        results.set(i, await retrying(() => c.result(id)));
      };
      let next = 0;
      const app = async () => {
        while (next < ORDERS) await order(next++);
      };
      const apps = Promise.all(Array.from({ length: APPS }, app));
      const until = async (n) => {
        while (results.size < n) await new Promise((r) => setTimeout(r, 10));
      };
      await until(ORDERS / 3);
      await killed(worker);
      worker = await startWorker();
      await until((2 * ORDERS) / 3);
      await host.kill();
      await host.start();
      await apps;
    } finally {
      await killed(worker);
    }
    assert.equal(results.size, ORDERS);
    for (const [i, e] of results) {
      assert.equal(e.status, "completed", `order ${i}`);
      assert.deepEqual(e.result, expected(i));
    }
    const c = new Client(host.url);
    const journalled = new Set();
    for (let i = 0; i < ORDERS; i++) {
      const { body } = await c.http.request("GET", `/v1/executions/order-${String(i).padStart(3, "0")}/effects`);
      const keys = body.effects.map((x) => x.idempotency_key);
      assert.equal(new Set(keys).size, 3, `order ${i}: ${keys}`);
      assert.equal(keys.length, 3);
      keys.forEach((k) => journalled.add(k));
    }
    const runs = new Map();
    for (const k of readFileSync(log, "utf8").split("\n").filter(Boolean)) runs.set(k, (runs.get(k) ?? 0) + 1);
    assert.deepEqual([...runs.keys()].sort(), [...journalled].sort());
    const repeated = [...runs.values()].reduce((a, n) => a + n - 1, 0);
    // Repeats only under the same key, and only for tasks in flight at a
    // kill (8 handlers per worker, plus answers lost with the host).
    assert.ok(repeated <= 3 * 8, `repeated handler runs: ${repeated}`);
  } finally {
    for (const n of nodes) await n.close();
    rmSync(logDir, { recursive: true, force: true });
  }
}

test("200 orders survive a killed worker and a killed host (SQLite)", { timeout: 180_000 }, async () => {
  await ordersSurvive([await Server.create(FLAGS)]);
});

const pgUrl = process.env.IRKIT_CLIENTS_PG_URL;
test(
  "200 orders survive a killed worker and a killed node (PostgreSQL, two nodes)",
  { timeout: 180_000, skip: pgUrl ? false : "IRKIT_CLIENTS_PG_URL (a PostgreSQL URL with a scratch schema) is not set" },
  async () => {
    // Two nodes; the application talks to both, the worker to node A, and
    // node B is the one killed.
    const a = await Server.create([...FLAGS, "--node-id", "node-a"], { database: pgUrl });
    const b = await Server.create([...FLAGS, "--node-id", "node-b"], { database: pgUrl });
    await ordersSurvive([a, b]);
  },
);
