// Client and worker in a namespace other than `default`, against a real
// `irkit tcc serve` with a tokens file (acme's token, globex's, and one of
// both): programs registered, executions started, evented, awaited and
// listed in acme; a worker of acme handles acme's effects while a worker of
// globex polling at the same time gets none; globex's client sees nothing
// of acme's (each by-id call answered as for an unknown execution).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ApiError, Client, Worker } from "../src/index.js";
import { EXAMPLES, IRKIT, Server } from "../test_support/helpers.mjs";

const ACME = "tok-acme";
const GLOBEX = "tok-globex";
const BOTH = "tok-both";

let server;
let dir;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), "tcc-ns-"));
  const tokens = join(dir, "tokens");
  writeFileSync(tokens, `acme ${ACME}\nglobex ${GLOBEX}\nacme,globex ${BOTH}\n`);
  server = await Server.create(["--tokens-file", tokens]);
  for (const [file, name] of [["approval.ts", "approval"], ["order_saga.ts", "order_saga"]]) {
    execFileSync(IRKIT, ["tcc", "register", join(EXAMPLES, file), "--name", name, "--server", server.url, "--token", ACME], {
      stdio: "pipe",
    });
  }
});
after(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const unknown = (p) => assert.rejects(p, (e) => e instanceof ApiError && e.status === 404 && e.code === "not_found");

test("a client works in its namespace and another sees nothing", async () => {
  const acme = new Client(server.url, { token: ACME }); // a token of one namespace acts in it
  const both = new Client(server.url, { token: BOTH, namespace: "acme" });
  const globex = new Client(server.url, { token: GLOBEX });

  const id = await acme.start("approval", ["r-1"], { id: "acme-approval" });
  assert.equal((await acme.status(id)).namespace, "acme");
  assert.equal((await acme.result(id, { wait: 200 })).ended, false);

  // globex: acme's execution is unknown, its program name too.
  await unknown(globex.status(id));
  await unknown(globex.result(id, { wait: 100 }));
  await unknown(globex.send(id, "approval.decision", "reject"));
  await unknown(globex.cancel(id));
  const seenByGlobex = [];
  for await (const e of globex.list()) seenByGlobex.push(e.id);
  assert.deepEqual(seenByGlobex, []);
  await assert.rejects(globex.start("approval", ["g"]), (e) => e.status === 404 && e.code === "unknown_program");
  // Naming acme with globex's token is refused.
  await assert.rejects(
    new Client(server.url, { token: GLOBEX, namespace: "acme" }).status(id),
    (e) => e.status === 403 && e.code === "namespace_forbidden",
  );

  // A token of both namespaces, naming acme, reaches it.
  setTimeout(() => both.send(id, "approval.decision", "approve"), 200);
  const done = await acme.result(id, { wait: 20_000 });
  assert.equal(done.status, "completed");
  assert.equal(done.namespace, "acme");
  assert.deepEqual(done.result, { request: "r-1", outcome: "granted" });
  // run: start and await in one call, in acme.
  assert.equal((await both.run("approval", ["r-2", 0], { id: "acme-fast", wait: 20_000 })).outcome, "escalated");
  const listed = {};
  for await (const e of acme.list()) listed[e.id] = e.namespace;
  assert.deepEqual(listed, { "acme-approval": "acme", "acme-fast": "acme" });
  const inGlobex = [];
  for await (const e of new Client(server.url, { token: BOTH, namespace: "globex" }).list()) inGlobex.push(e.id);
  assert.deepEqual(inGlobex, []);
});

test("a worker handles only its namespace's tasks", async () => {
  const seen = { acme: [], globex: [] };
  const workers = [];
  for (const [ns, token] of [["acme", ACME], ["globex", GLOBEX]]) {
    const w = new Worker(server.url, { token, concurrency: 4, leaseMs: 5000, pollWaitMs: 500 });
    const handler = (t) => {
      seen[ns].push(`${t.executionId} ${t.key}`);
      return t.key === "shipping.ship" ? "shipped" : { ok: true };
    };
    for (const pattern of ["inventory.*", "payment.*", "shipping.*"]) w.effect(pattern, handler);
    workers.push(w);
  }
  const running = workers.map((w) => w.run());
  try {
    const acme = new Client(server.url, { token: ACME });
    for (let i = 0; i < 3; i++) {
      assert.deepEqual(await acme.run("order_saga", [{ id: `o-${i}` }], { id: `acme-order-${i}`, wait: 30_000 }), {
        order: `o-${i}`, status: "shipped", steps: ["reserve", "charge", "ship"],
      });
    }
  } finally {
    for (const w of workers) w.stop();
    await Promise.all(running);
  }
  const expected = [];
  for (let i = 0; i < 3; i++) for (const k of ["inventory.reserve", "payment.charge", "shipping.ship"]) expected.push(`acme-order-${i} ${k}`);
  assert.deepEqual([...seen.acme].sort(), expected.sort());
  assert.deepEqual(seen.globex, [], "globex's worker was handed acme's tasks");
});
