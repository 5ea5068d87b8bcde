// Types of @irkit/tcc.

/** Plain JSON. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** The server refused a request. */
export class ApiError extends Error {
  readonly status: number;
  /** The API's kind of error, e.g. `conflict`, `not_found`. */
  readonly code: string;
  /** The stable diagnostic code, `TCC-H2xx`. */
  readonly diagnostic: string;
}

/** The server could not be reached, or did not answer the API's JSON. */
export class TransportError extends Error {}

/** Statuses of an execution that has ended. */
export const ENDED: readonly ["completed", "failed", "cancelled"];
/** The longest single long poll, in ms. */
export const LONG_POLL_MS: number;

/** An execution's status, decoded. */
export interface Execution {
  id: string;
  status: "runnable" | "suspended" | "completed" | "failed" | "cancelled" | string;
  /** The result as plain JSON (null until it ended). */
  result: Json;
  /** A failed execution's message. */
  message: string | null;
  /** The namespace owning the execution (`default` from a host without namespaces). */
  namespace: string;
  /** Completed, failed or cancelled. */
  ended: boolean;
  /** The status JSON as the host sent it. */
  raw: Record<string, unknown>;
}

export interface CallOptions {
  signal?: AbortSignal;
}

export class ExecutionFailed extends Error {
  readonly execution: Execution;
}

export class Client {
  /** `namespace` is sent as the TCC-Namespace header (default: the token's own). */
  constructor(url?: string, opts?: { token?: string; namespace?: string });
  register(artifact: Uint8Array | string, name: string, opts?: CallOptions): Promise<string>;
  /** Resolves to the execution id; with `id`, starting again returns the existing one. */
  start(program: string, args?: Json[], opts?: CallOptions & { id?: string; traceparent?: string }): Promise<string>;
  /** The execution once it ended, or after `wait` ms (undefined: as long as it takes). */
  result(id: string, opts?: CallOptions & { wait?: number }): Promise<Execution>;
  /** Starts and awaits; rejects with ExecutionFailed when it failed or was cancelled. */
  run(program: string, args?: Json[], opts?: CallOptions & { id?: string; wait?: number; traceparent?: string }): Promise<Json>;
  status(id: string, opts?: CallOptions): Promise<Execution>;
  send(id: string, name: string, payload?: Json, opts?: CallOptions): Promise<void>;
  cancel(id: string, opts?: CallOptions): Promise<void>;
  list(opts?: CallOptions & { status?: string; program?: string; limit?: number }): AsyncGenerator<Execution>;
}

/** One effect to run. */
export interface Task {
  key: string;
  input: Json;
  /** `{execution id}:{key}`: the same for every attempt of this effect. */
  idempotencyKey: string;
  executionId: string;
  attempt: number;
  lease: string;
  /**
   * The W3C trace context of the effect's call (its span's when the host
   * exports traces, else the one the execution was started with); null
   * when there is none.
   */
  traceparent: string | null;
}

export type Handler = (task: Task) => Json | void | Promise<Json | void>;

export interface WorkerOptions {
  token?: string;
  /** Poll only this namespace's tasks (the TCC-Namespace header). */
  namespace?: string;
  name?: string;
  /** Most handlers running at once (8). */
  concurrency?: number;
  /** Lease of a task without heartbeat, ms (30 000). */
  leaseMs?: number;
  /** Longest poll, ms (10 000): also the longest stop() waits for polling to end. */
  pollWaitMs?: number;
}

export class Worker {
  constructor(url?: string, opts?: WorkerOptions);
  /** Registers `handler` for effect keys matching `pattern` (`*` wildcards). */
  effect(pattern: string, handler: Handler): this;
  /** Polls and runs tasks until stop() (or SIGTERM/SIGINT with `signals`). */
  run(opts?: { signals?: boolean }): Promise<void>;
  stop(): void;
}

export function patternMatches(pattern: string, key: string): boolean;
export function toTagged(value: Json): object;
export function toPlain(tagged: unknown): Json;
