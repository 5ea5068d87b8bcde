// Types of @irkit/tcc/testing.
import type { Json } from "./index.js";

export type Answer = { result: Json } | { error: string };

export function ok(value?: Json): { result: Json };
export function fail(message: string): { error: string };

export class SimulationError extends Error {}

export interface EffectCall {
  key: string;
  idempotencyKey: string;
  input: Json;
  result: Json;
  error: string | null;
}

export interface Simulation {
  /** `completed`, `failed`, `cancelled`, or `suspended` (waiting for an event that never arrives). */
  status: string;
  result: Json;
  message: string | null;
  effects: EffectCall[];
  waitingFor: string[];
  timersSkipped: number;
  calls(key: string): EffectCall[];
}

export function simulate(
  workflow: string,
  args?: Json[],
  opts?: {
    effects?: Record<string, Answer | Answer[]>;
    events?: Record<string, Json>;
    irkit?: string;
    executionId?: string;
    signal?: AbortSignal;
  },
): Promise<Simulation>;
