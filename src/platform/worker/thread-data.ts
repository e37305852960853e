/**
 * What crosses a worker-thread boundary besides a worker's own messages: the
 * market clock as another thread rebuilds it, and errors as plain records.
 * Structured-clone data only: no functions, no class instances.
 */
import type { Clock } from '../clock.ts';

/**
 * The serving thread's clock as the worker rebuilds it: simulated time
 * `simulatedAtMs` at real time `realAtMs`, moving `speed` times real time, so
 * both threads read the same market time (the wall clock is shared).
 */
export interface ClockSpec {
  simulatedAtMs: number;
  realAtMs: number;
  speed: number;
}

export function clockSpecOf(clock: Clock, speed: number): ClockSpec {
  return { simulatedAtMs: clock.now().getTime(), realAtMs: Date.now(), speed };
}

export function clockFromSpec(spec: ClockSpec): Clock {
  return {
    now: () => new Date(Math.floor(spec.simulatedAtMs + (Date.now() - spec.realAtMs) * spec.speed)),
  };
}

/** An error as it crosses the thread boundary. */
export interface ErrorRecord {
  name: string;
  message: string;
  /** The error's `kind` (upstream errors), when it has one. */
  kind?: string;
  stack?: string;
}

export function errorRecord(error: unknown): ErrorRecord {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error) };
  const kind = 'kind' in error && typeof error.kind === 'string' ? error.kind : undefined;
  return {
    name: error.name,
    message: error.message,
    ...(kind === undefined ? {} : { kind }),
    ...(error.stack === undefined ? {} : { stack: error.stack }),
  };
}
