// The application's side: start executions, await their results, send
// events, cancel, inspect. Every method returns a promise and takes an
// optional AbortSignal.

import { readFile } from "node:fs/promises";
import { ApiError, Transport, quote } from "./http.js";
import { toPlain } from "./values.js";

/** Statuses of an execution that has ended. */
export const ENDED = Object.freeze(["completed", "failed", "cancelled"]);

/** The longest single long poll, in ms (below the server's 30 s request timeout). */
export const LONG_POLL_MS = 25_000;

/** @param {any} j */
function execution(j) {
  return {
    id: String(j.id ?? ""),
    status: String(j.status ?? ""),
    result: "result" in j ? toPlain(j.result) : null,
    message: j.message ?? null,
    namespace: String(j.namespace ?? "default"),
    ended: ENDED.includes(j.status),
    raw: j,
  };
}

/** Raised by Client.run when the execution failed or was cancelled. */
export class ExecutionFailed extends Error {
  /** @param {ReturnType<typeof execution>} e */
  constructor(e) {
    super(`execution ${e.id} ${e.status}: ${e.message ?? ""}`);
    this.name = "ExecutionFailed";
    this.execution = e;
  }
}

/** Resolves after `ms`, or rejects when `signal` aborts first. */
const sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(t);
      reject(signal.reason);
    };
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });

export class Client {
  /** @param {string} [url] @param {{ token?: string, namespace?: string }} [opts] */
  constructor(url = "http://127.0.0.1:7420", opts = {}) {
    this.http = new Transport(url, opts.token, opts.namespace);
  }

  /** Registers an artifact (bytes, or an artifact JSON file's path) under `name`; resolves to its hash. */
  async register(artifact, name, opts = {}) {
    const raw = typeof artifact === "string" ? await readFile(artifact) : artifact;
    const { body } = await this.http.request("POST", `/v1/artifacts?name=${quote(name)}`, { raw, signal: opts.signal });
    return String(body.hash);
  }

  /**
   * Starts `program` with plain JSON `args`; resolves to the execution id.
   * With `id`, starting again is harmless: the existing execution's id is
   * returned (its arguments are not compared). With `traceparent` (a W3C
   * trace context) the execution's spans continue that trace and its
   * effects get it (webhooks as a header, workers as `task.traceparent`).
   */
  async start(program, args = [], opts = {}) {
    const json = { program, args };
    if (opts.id !== undefined) json.id = opts.id;
    try {
      const { body } = await this.http.request("POST", "/v1/executions", {
        json,
        signal: opts.signal,
        traceparent: opts.traceparent,
      });
      return String(body.id);
    } catch (e) {
      if (opts.id !== undefined && e instanceof ApiError && e.status === 409) return opts.id;
      throw e;
    }
  }

  /**
   * The execution once it ended, or when `wait` ms have passed (undefined:
   * as long as it takes; 0: now). A long poll: answered as soon as it ends.
   */
  async result(id, opts = {}) {
    const deadline = opts.wait === undefined ? undefined : Date.now() + opts.wait;
    for (;;) {
      const left = deadline === undefined ? LONG_POLL_MS : Math.max(0, deadline - Date.now());
      const step = Math.min(left, LONG_POLL_MS);
      const { body } = await this.http.request("GET", `/v1/executions/${quote(id)}/result?wait=${Math.floor(step)}ms`, {
        signal: opts.signal,
      });
      const e = execution(body);
      if (e.ended || (deadline !== undefined && Date.now() >= deadline)) return e;
    }
  }

  /**
   * Starts and awaits; resolves to the result, rejects with ExecutionFailed.
   * One request starts and awaits (`POST /v1/executions?wait=`); only an
   * execution still running after that first long poll, or one that already
   * existed under `opts.id`, is awaited further with `result`.
   */
  async run(program, args = [], opts = {}) {
    const deadline = opts.wait === undefined ? undefined : Date.now() + opts.wait;
    const first = opts.wait === undefined ? LONG_POLL_MS : Math.min(Math.max(0, opts.wait), LONG_POLL_MS);
    const json = { program, args };
    if (opts.id !== undefined) json.id = opts.id;
    let id;
    let e;
    try {
      const { body } = await this.http.request("POST", `/v1/executions?wait=${Math.floor(first)}ms`, {
        json,
        signal: opts.signal,
        traceparent: opts.traceparent,
      });
      e = execution(body);
      id = e.id;
    } catch (err) {
      if (opts.id === undefined || !(err instanceof ApiError) || err.status !== 409) throw err;
      id = opts.id;
    }
    if (e === undefined || !e.ended) {
      const wait = deadline === undefined ? undefined : Math.max(0, deadline - Date.now());
      e = await this.result(id, { signal: opts.signal, wait });
    }
    if (!e.ended) throw new Error(`execution ${id} is still ${e.status}`);
    if (e.status !== "completed") throw new ExecutionFailed(e);
    return e.result;
  }

  /** The execution's status now. */
  async status(id, opts = {}) {
    return execution((await this.http.request("GET", `/v1/executions/${quote(id)}`, opts)).body);
  }

  /** Sends event `name` with a plain JSON payload. */
  async send(id, name, payload = null, opts = {}) {
    await this.http.request("POST", `/v1/executions/${quote(id)}/events`, { json: { name, payload }, signal: opts.signal });
  }

  /** Requests cancellation. */
  async cancel(id, opts = {}) {
    await this.http.request("POST", `/v1/executions/${quote(id)}/cancel`, { signal: opts.signal });
  }

  /** Every execution (optionally of one status or program), oldest first, fetched page by page. */
  async *list(opts = {}) {
    let after = null;
    for (;;) {
      const q = new URLSearchParams({ limit: String(opts.limit ?? 100) });
      if (opts.status) q.set("status", opts.status);
      if (opts.program) q.set("program", opts.program);
      if (after !== null) q.set("after", String(after));
      const { body } = await this.http.request("GET", `/v1/executions?${q}`, { signal: opts.signal });
      for (const e of body.executions ?? []) yield execution(e);
      after = body.next_after ?? null;
      if (after === null) return;
    }
  }
}

export { sleep };
