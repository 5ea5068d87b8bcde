// A typed application, worker and test of @irkit/tcc, checked (not run) by `tsc -p` against the
// package's declarations (src/index.d.ts, src/testing.d.ts) through its own `exports` map. Each
// `@ts-expect-error` line is a misuse the declarations must refuse: were a type too loose there,
// tsc reports the directive as unused and the check fails.
import {
  ApiError,
  Client,
  ENDED,
  ExecutionFailed,
  LONG_POLL_MS,
  TransportError,
  Worker,
  patternMatches,
  toPlain,
  toTagged,
  type Execution,
  type Json,
  type Task,
} from "@irkit/tcc";
import { fail, ok, simulate, SimulationError, type EffectCall, type Simulation } from "@irkit/tcc/testing";

export async function application(): Promise<Json> {
  const client = new Client("http://127.0.0.1:7420", { token: "secret" });
  const signal: AbortSignal = AbortSignal.timeout(LONG_POLL_MS);
  const id: string = await client.start("order_saga", [{ id: "o-1" }], { id: "order-1", signal });
  const done: Execution = await client.result(id, { wait: 5_000 });
  const ended: boolean = done.ended && ENDED.includes(done.status as (typeof ENDED)[number]);
  await client.send(id, "approved", { by: "ops" });
  await client.cancel(id);
  for await (const e of client.list({ status: "completed", limit: 10 })) {
    const status: string = e.status;
    void status;
  }
  try {
    return await client.run("order_saga", [{ id: "o-2" }], { wait: 60_000 });
  } catch (e) {
    if (e instanceof ExecutionFailed) return e.execution.message;
    if (e instanceof ApiError) return `${e.status} ${e.code} ${e.diagnostic}`;
    if (e instanceof TransportError) return e.message;
    throw e;
  } finally {
    void ended;
    // @ts-expect-error arguments are an array of plain JSON values
    await client.start("order_saga", { id: "o-3" });
    // @ts-expect-error `wait` is a number of milliseconds
    await client.result(id, { wait: "5s" });
    await client.start("order_saga", [{ id: "o-4" }], { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" });
    // @ts-expect-error a traceparent is a string
    await client.start("order_saga", [{ id: "o-5" }], { traceparent: 1 });
  }
}

export function worker(): Promise<void> {
  const w = new Worker("http://127.0.0.1:7420", { concurrency: 4, leaseMs: 10_000, pollWaitMs: 2_000 });
  w.effect("payment.*", async (task: Task) => {
    const key: string = task.idempotencyKey;
    const trace: string | null = task.traceparent;
    return { charged: task.input, key, attempt: task.attempt, trace };
  }).effect("inventory.*", (task) => {
    if (!patternMatches("inventory.*", task.key)) throw new Error(task.executionId);
  });
  // @ts-expect-error a handler gets a Task
  w.effect("shipping.*", (n: number) => n);
  // @ts-expect-error a handler returns plain JSON
  w.effect("shipping.*", () => new Map());
  // @ts-expect-error no such option
  new Worker("http://127.0.0.1:7420", { concurency: 4 });
  setTimeout(() => w.stop(), 1_000);
  return w.run({ signals: true });
}

export async function test(): Promise<EffectCall[]> {
  const run: Simulation = await simulate("order_saga.ts", [{ id: "o-9" }], {
    effects: { "payment.charge": fail("card declined"), "inventory.*": [ok({ n: 1 }), ok()], "*": ok(true) },
    events: { approved: true },
  });
  if (run.status !== "completed") throw new SimulationError(run.message ?? run.waitingFor.join(","));
  const tagged: object = toTagged(run.result);
  const plain: Json = toPlain(tagged);
  void plain;
  // @ts-expect-error an answer is ok(…) or fail(…), not a bare value
  await simulate("order_saga.ts", [], { effects: { "*": 42 } });
  return run.calls("payment.charge");
}
