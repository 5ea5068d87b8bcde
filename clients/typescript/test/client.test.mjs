// Client against a real server: start (idempotent), result (long poll),
// send, cancel, status, list, AbortSignal, token, namespace.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { ApiError, Client, ExecutionFailed } from "../src/index.js";
import { Server, exampleServer } from "../test_support/helpers.mjs";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

let server;
before(async () => (server = await exampleServer()));
after(async () => server.close());

test("start is idempotent and result waits for the event", async () => {
  const c = new Client(server.url);
  const id = await c.start("approval", ["r-1"], { id: "approval-1" });
  assert.equal(id, "approval-1");
  assert.equal(await c.start("approval", ["r-1"], { id: "approval-1" }), "approval-1");
  let t = Date.now();
  const pending = await c.result(id, { wait: 300 });
  assert.equal(pending.ended, false);
  assert.equal(pending.status, "suspended");
  assert.ok(Date.now() - t >= 280);
  setTimeout(() => new Client(server.url).send(id, "approval.decision", "approve"), 300);
  t = Date.now();
  const done = await c.result(id, { wait: 20_000 });
  assert.ok(Date.now() - t < 5000);
  assert.equal(done.status, "completed");
  assert.deepEqual(done.result, { request: "r-1", outcome: "granted" });
  assert.equal(done.namespace, "default");
});

test("cancel, list, errors and AbortSignal", async () => {
  const c = new Client(server.url);
  const ids = [];
  for (let i = 0; i < 3; i++) ids.push(await c.start("approval", [`x-${i}`], { id: `cancel-${i}` }));
  await c.cancel(ids[0]);
  assert.equal((await c.result(ids[0], { wait: 20_000 })).status, "cancelled");
  await assert.rejects(c.run("approval", ["x"], { id: ids[0] }), ExecutionFailed);
  const listed = [];
  for await (const e of c.list({ program: "approval", limit: 2 })) listed.push(e.id);
  assert.deepEqual(listed.filter((i) => i.startsWith("cancel-")), ids);
  await assert.rejects(c.status("nope"), (e) => e instanceof ApiError && e.status === 404 && e.code === "not_found");
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 200);
  const t = Date.now();
  await assert.rejects(c.result(ids[1], { signal: ac.signal }), (e) => e.name === "AbortError");
  assert.ok(Date.now() - t < 5000);
});

test("the bearer token is sent", async () => {
  const s = await Server.create(["--token", "s3cret"]);
  try {
    await assert.rejects(new Client(s.url).status("x"), (e) => e.status === 401);
    await assert.rejects(new Client(s.url, { token: "s3cret" }).status("x"), (e) => e.status === 404);
  } finally {
    await s.close();
  }
});

test("the namespace is sent", async () => {
  const dir = mkdtempSync(join(tmpdir(), "tcc-ns-"));
  const tokens = join(dir, "tokens");
  writeFileSync(tokens, "acme,globex s3cret\n");
  const s = await Server.create(["--tokens-file", tokens]);
  try {
    await assert.rejects(new Client(s.url, { token: "s3cret" }).status("x"), (e) => e.status === 400 && e.code === "namespace_required");
    await assert.rejects(new Client(s.url, { token: "s3cret", namespace: "acme" }).status("x"), (e) => e.status === 404);
    await assert.rejects(new Client(s.url, { token: "s3cret", namespace: "initech" }).status("x"), (e) => e.status === 403 && e.code === "namespace_forbidden");
  } finally {
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
