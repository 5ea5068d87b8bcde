// Test helper: run a workflow file against scripted effect answers and
// events, timers skipped, without a server (`irkit tcc simulate`).
// Effect answers are keyed by effect-key pattern (`*` wildcards, first
// match in order); an array is a sequence (the n-th call gets the n-th
// answer; running out is an error). Events are keyed by name: a payload or
// an array of payloads for successive waits; a wait with no payload left
// never ends and the run stops as `suspended` (see `waitingFor`). Timers
// fire at once. The irkit program: opts.irkit, else $IRKIT_BIN, else `irkit`.

import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** An effect answer: the effect returns `value`. */
export const ok = (value = null) => ({ result: value });
/** An effect answer: the effect fails with `message`. */
export const fail = (message) => ({ error: message });

/** The program or the script could not be run. */
export class SimulationError extends Error {
  constructor(message) {
    super(message);
    this.name = "SimulationError";
  }
}

export async function simulate(workflow, args = [], opts = {}) {
  const dir = await mkdtemp(join(tmpdir(), "irkit-sim-"));
  const script = join(dir, "script.json");
  await writeFile(script, JSON.stringify({ effects: opts.effects ?? {}, events: opts.events ?? {} }));
  const irkit = opts.irkit ?? process.env.IRKIT_BIN ?? "irkit";
  try {
    const out = await new Promise((resolve, reject) => {
      execFile(
        irkit,
        ["tcc", "simulate", String(workflow), "--script", script, "--args", JSON.stringify(args),
          "--execution-id", opts.executionId ?? "simulated"],
        { signal: opts.signal, maxBuffer: 64 << 20 },
        (err, stdout, stderr) => (err ? reject(new SimulationError(String(stderr || err.message).trim())) : resolve(stdout)),
      );
    });
    const r = JSON.parse(out);
    return {
      status: r.status,
      result: r.result ?? null,
      message: r.message ?? null,
      effects: (r.effects ?? []).map((e) => ({
        key: e.key,
        idempotencyKey: e.idempotency_key,
        input: e.input ?? null,
        result: e.result ?? null,
        error: e.error ?? null,
      })),
      waitingFor: r.waiting_for ?? [],
      timersSkipped: r.timers_skipped ?? 0,
      calls(key) {
        return this.effects.filter((e) => e.key === key);
      },
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
