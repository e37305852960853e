import { setTimeout as sleep } from 'node:timers/promises';

/** The parts of `GET /v1/health` the bench reads (the rest is kept as it came, for the results). */
export interface HealthView {
  readonly ready?: boolean;
  readonly background?: {
    readonly backfill?: {
      readonly firstDate: string | null;
      readonly targetFirstDate: string | null;
      readonly percent: number;
      readonly complete: boolean;
      readonly running: boolean;
    };
    readonly jobs?: readonly { readonly name: string; readonly running: boolean }[];
  };
}

/** How background work stands, from one health answer. */
export interface BackgroundState {
  /** The history backfill has covered its whole target range. */
  readonly backfillComplete: boolean;
  readonly backfillRunning: boolean;
  readonly backfillPercent: number;
  /** Jobs running now. */
  readonly running: readonly string[];
}

export function backgroundOf(health: HealthView): BackgroundState {
  const backfill = health.background?.backfill;
  return {
    // A service that does not report a backfill has none to wait for.
    backfillComplete: backfill?.complete ?? true,
    backfillRunning: backfill?.running ?? false,
    backfillPercent: backfill?.percent ?? 100,
    running: (health.background?.jobs ?? []).filter((job) => job.running).map((job) => job.name),
  };
}

/** One line for progress output. */
export function describeBackground(state: BackgroundState): string {
  const backfill = state.backfillComplete ? 'backfill complete' : `backfill ${state.backfillPercent}%`;
  return `${backfill}; running: ${state.running.length > 0 ? state.running.join(', ') : 'nothing'}`;
}

/** `GET /v1/health` (always 200 while the process serves); throws when it does not answer. */
export async function fetchHealth(
  url: string,
  timeoutMs = 5000,
): Promise<HealthView & Record<string, unknown>> {
  const res = await fetch(`${url}/v1/health`, { signal: AbortSignal.timeout(timeoutMs) });
  if (res.status !== 200) throw new Error(`GET /v1/health answered ${res.status}`);
  return (await res.json()) as HealthView & Record<string, unknown>;
}

export type ReadyProbe = { ready: true } | { ready: false; detail: string };

/** `GET /v1/health/ready`: 200 is ready; a 503 says what is missing in its message. */
export async function probeReady(url: string): Promise<ReadyProbe> {
  try {
    const res = await fetch(`${url}/v1/health/ready`, { signal: AbortSignal.timeout(2000) });
    if (res.status === 200) {
      await res.arrayBuffer();
      return { ready: true };
    }
    const text = await res.text();
    let detail = `HTTP ${res.status}`;
    try {
      const message = (JSON.parse(text) as { error?: { message?: string } }).error?.message;
      if (message) detail = message;
    } catch {
      // Not JSON: the status is all there is to say.
    }
    return { ready: false, detail };
  } catch (error) {
    // Connection refused is the normal state while the process starts.
    return {
      ready: false,
      detail: (error as Error).cause instanceof Error ? 'not listening yet' : String(error),
    };
  }
}

export interface WaitOptions {
  readonly timeoutMs: number;
  readonly log: (line: string) => void;
  /** Seconds between progress lines. */
  readonly everyS?: number;
  /** Throws (or rejects) to give up early, e.g. when the service process exited. */
  readonly check?: () => void;
  /** Real pause between polls. */
  readonly pollMs?: number;
}

/**
 * Polls `GET /v1/health/ready` until 200, printing what is still missing now
 * and then. Throws on timeout, saying what was missing last.
 */
export async function waitForReady(url: string, options: WaitOptions): Promise<number> {
  const started = Date.now();
  let lastNotice = started;
  for (;;) {
    options.check?.();
    const probe = await probeReady(url);
    const elapsed = Date.now() - started;
    if (probe.ready) return elapsed;
    if (elapsed > options.timeoutMs)
      throw new Error(
        `Stoop was not ready within ${options.timeoutMs / 1000} s (GET /v1/health/ready: ${probe.detail})`,
      );
    if (Date.now() - lastNotice >= (options.everyS ?? 5) * 1000) {
      lastNotice = Date.now();
      options.log(`  waiting for ready (${Math.round(elapsed / 1000)} s): ${probe.detail}`);
    }
    await sleep(options.pollMs ?? 250);
  }
}

/** Background work is done: the backfill complete and no job running. */
export function fullySettled(state: BackgroundState): boolean {
  return state.backfillComplete && state.running.length === 0;
}

/**
 * Polls `GET /v1/health` until background work is done (by default
 * `fullySettled`; `settled` may wait for less), printing progress now and
 * then. Resolves false on timeout: the caller goes on, but its figures then
 * overlap background work.
 */
export async function waitForSettled(
  url: string,
  options: WaitOptions,
  settled: (state: BackgroundState) => boolean = fullySettled,
): Promise<boolean> {
  const started = Date.now();
  let lastNotice = started;
  for (;;) {
    options.check?.();
    const state = backgroundOf(await fetchHealth(url));
    if (settled(state)) return true;
    const elapsed = Date.now() - started;
    if (elapsed > options.timeoutMs) {
      options.log(
        `⚠ background work still going after ${options.timeoutMs / 1000} s (${describeBackground(state)}); measuring anyway`,
      );
      return false;
    }
    if (Date.now() - lastNotice >= (options.everyS ?? 5) * 1000) {
      lastNotice = Date.now();
      options.log(
        `  waiting for background work (${Math.round(elapsed / 1000)} s): ${describeBackground(state)}`,
      );
    }
    await sleep(options.pollMs ?? 500);
  }
}
