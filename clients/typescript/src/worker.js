// The effect worker: handlers for effect keys, run on tasks pulled from the
// host (provider kind `worker`). It long-polls POST /v1/tasks/poll for its
// handlers' patterns, runs at most `concurrency` handlers at once, renews
// the leases of running tasks every third of `leaseMs`, and answers with
// complete (the handler's resolved value) or fail (the rejection's
// message). Answers go in POST /v1/tasks/answers: those that finish while
// one request is on its way go together in the next (a host without that
// route gets each on its own route). A task's slot frees once its answer
// was sent. On SIGTERM/SIGINT (run({ signals: true })) or stop(), it polls
// no more and resolves run() once running handlers have been answered.
// A task can run more than once (a worker died after its handler ran):
// handlers get `task.idempotencyKey` to make the effect idempotent.

import { hostname } from "node:os";
import { ApiError, Transport, TransportError, quote } from "./http.js";
import { sleep } from "./client.js";

/** Most answers sent in one request (the host's limit). */
export const MAX_BATCH = 100;

/** Whether `key` matches the `*` wildcard `pattern`. */
export function patternMatches(pattern, key) {
  const parts = pattern.split("*");
  if (parts.length === 1) return pattern === key;
  const first = parts[0];
  const last = parts[parts.length - 1];
  if (!key.startsWith(first) || !key.endsWith(last) || key.length < first.length + last.length) return false;
  let rest = key.slice(first.length, key.length - last.length);
  for (const mid of parts.slice(1, -1)) {
    const i = rest.indexOf(mid);
    if (i < 0) return false;
    rest = rest.slice(i + mid.length);
  }
  return true;
}

export class Worker {
  /**
   * @param {string} [url]
   * @param {{ token?: string, namespace?: string, name?: string, concurrency?: number, leaseMs?: number, pollWaitMs?: number }} [opts]
   */
  constructor(url = "http://127.0.0.1:7420", opts = {}) {
    this.http = new Transport(url, opts.token, opts.namespace);
    this.name = opts.name ?? `${hostname()}-${process.pid}`;
    this.concurrency = opts.concurrency ?? 8;
    if (!(this.concurrency >= 1)) throw new RangeError("concurrency must be at least 1");
    this.leaseMs = opts.leaseMs ?? 30_000;
    this.pollWaitMs = opts.pollWaitMs ?? 10_000;
    /** @type {Array<[string, (task: any) => unknown]>} */
    this.handlers = [];
    /** @type {Map<string, { task: any, done: Promise<void> }>} */
    this.running = new Map();
    this.stopping = new AbortController();
    this.slotFreed = null;
    /** @type {Array<{ task: any, answer: any, sent: () => void }>} answers not sent yet */
    this.outbox = [];
    /** @type {Promise<void> | null} the sending loop, while it runs */
    this.sending = null;
    /** whether the host takes POST /v1/tasks/answers (else 404: one route per answer) */
    this.batches = true;
  }

  /** Registers `handler` for effect keys matching `pattern` (first registered match wins). */
  effect(pattern, handler) {
    this.handlers.push([pattern, handler]);
    return this;
  }

  /** Stops polling; run() resolves once running handlers are answered. */
  stop() {
    this.stopping.abort();
    this.slotFreed?.();
  }

  /** Sends one answer to its own route, retrying transport failures until the lease would have expired. */
  async answer(task, answer) {
    const { id: _id, outcome, ...json } = answer;
    const giveUp = Date.now() + this.leaseMs;
    let pause = 100;
    for (;;) {
      try {
        const what = outcome === "complete" ? "complete" : "fail";
        await this.http.request("POST", `/v1/tasks/${quote(task.idempotencyKey)}/${what}`, { json });
        return;
      } catch (e) {
        if (e instanceof ApiError) return; // 409: lease lost, the answer is dropped
        if (Date.now() > giveUp) return;
        await sleep(pause);
        pause = Math.min(pause * 2, 2000);
      }
    }
  }

  /** Sends `batch` in one request (refused answers, a lost lease, are dropped). */
  async sendBatch(batch) {
    if (this.batches) {
      const giveUp = Date.now() + this.leaseMs;
      let pause = 100;
      for (;;) {
        try {
          await this.http.request("POST", "/v1/tasks/answers", { json: { answers: batch.map((b) => b.answer) } });
          return;
        } catch (e) {
          if (e instanceof ApiError) {
            if (e.status === 404 || e.status === 405) {
              this.batches = false;
              break;
            }
            // One answer the host refuses (too large, say) must not take the
            // others with it: each on its own.
            if (batch.length > 1 && (e.status === 400 || e.status === 413)) break;
            return;
          }
          if (Date.now() > giveUp) return;
          await sleep(pause);
          pause = Math.min(pause * 2, 2000);
        }
      }
    }
    for (const b of batch) await this.answer(b.task, b.answer);
  }

  /** Sends what the outbox holds, batch after batch, until it is empty. */
  async sendAnswers() {
    try {
      while (this.outbox.length > 0) {
        const batch = this.outbox.splice(0, MAX_BATCH);
        try {
          await this.sendBatch(batch);
        } finally {
          for (const b of batch) b.sent();
        }
      }
    } finally {
      this.sending = null;
    }
  }

  /** Queues `answer`; resolves once it was sent. */
  queueAnswer(task, answer) {
    return new Promise((sent) => {
      this.outbox.push({ task, answer, sent });
      if (this.sending === null) this.sending = this.sendAnswers();
    });
  }

  async runTask(task) {
    const entry = this.handlers.find(([p]) => patternMatches(p, task.key));
    const answer = { id: task.idempotencyKey, lease: task.lease };
    try {
      if (!entry) throw new Error(`no handler for effect ${JSON.stringify(task.key)}`);
      const result = await entry[1](task);
      const value = result === undefined ? null : result;
      JSON.stringify(value); // a result that is not JSON fails the effect here, not its batch
      Object.assign(answer, { outcome: "complete", result: value });
    } catch (e) {
      Object.assign(answer, { outcome: "fail", message: (e instanceof Error ? e.message : String(e)) || "failed" });
    }
    await this.queueAnswer(task, answer);
  }

  heartbeat() {
    for (const { task } of this.running.values()) {
      this.http
        .request("POST", `/v1/tasks/${quote(task.idempotencyKey)}/heartbeat`, {
          json: { lease: task.lease, lease_ms: this.leaseMs },
        })
        .catch(() => {});
    }
  }

  /** Polls and runs tasks until stop() (or SIGTERM/SIGINT with `signals`). */
  async run(opts = {}) {
    if (this.handlers.length === 0) throw new Error("no effect handlers registered");
    const onSignal = () => this.stop();
    if (opts.signals) {
      process.once("SIGTERM", onSignal);
      process.once("SIGINT", onSignal);
    }
    const beat = setInterval(() => this.heartbeat(), Math.max(50, this.leaseMs / 3));
    const patterns = this.handlers.map(([p]) => p);
    let pause = 100;
    try {
      while (!this.stopping.signal.aborted) {
        while (this.running.size >= this.concurrency && !this.stopping.signal.aborted) {
          await new Promise((resolve) => (this.slotFreed = resolve));
        }
        if (this.stopping.signal.aborted) break;
        let tasks;
        try {
          const { body } = await this.http.request("POST", "/v1/tasks/poll", {
            json: {
              patterns,
              worker: this.name,
              lease_ms: this.leaseMs,
              max: this.concurrency - this.running.size,
              wait: `${Math.floor(this.pollWaitMs)}ms`,
            },
          });
          tasks = body.tasks ?? [];
          pause = 100;
        } catch (e) {
          if (!(e instanceof TransportError || e instanceof ApiError)) throw e;
          await sleep(pause, this.stopping.signal).catch(() => {});
          pause = Math.min(pause * 2, 2000);
          continue;
        }
        for (const t of tasks) {
          const task = {
            key: t.key,
            input: t.input,
            idempotencyKey: t.idempotency_key,
            executionId: t.execution_id,
            attempt: t.attempt,
            lease: t.lease,
            traceparent: t.traceparent ?? null,
          };
          const done = this.runTask(task).finally(() => {
            this.running.delete(task.idempotencyKey);
            this.slotFreed?.();
          });
          this.running.set(task.idempotencyKey, { task, done });
        }
      }
      await Promise.all([...this.running.values()].map((r) => r.done));
    } finally {
      clearInterval(beat);
      if (opts.signals) {
        process.off("SIGTERM", onSignal);
        process.off("SIGINT", onSignal);
      }
    }
  }
}
