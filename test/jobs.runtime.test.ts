import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createJobs } from '../src/jobs/jobs.ts';
import { emptySummary } from '../src/jobs/refresh/listing-writer.ts';
import { createRefreshSchedules } from '../src/jobs/refresh/scheduler.ts';
import { type Clock, HOUR_MS, MINUTE_MS } from '../src/platform/clock.ts';
import {
  PeriodicJob,
  type PeriodicJobOptions,
  realTimers,
  type TimerApi,
} from '../src/platform/jobs/periodic-job.ts';
import { TaskQueue } from '../src/platform/jobs/task-queue.ts';

/**
 * The job runtime under fake timers: `Date.now()` and `setTimeout` move only
 * when a test advances them, and the service clock is derived from them, so
 * real (timer) time and clock time can differ as they do in the demo.
 */
const START = Date.parse('2026-06-01T00:00:00.000Z');

/** A clock running `speed` × the (fake) real time, from START. */
function scaledClock(speed: number): Clock {
  return { now: () => new Date(START + (Date.now() - START) * speed) };
}

const clock = scaledClock(1);

function ago(ms: number): string {
  return new Date(clock.now().getTime() - ms).toISOString();
}

interface Gate {
  promise: Promise<void>;
  open(): void;
}

function gate(): Gate {
  let open: () => void = () => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/** Real timers that also remember every delay they were armed with. */
function recordingTimers(): TimerApi & { delays: number[] } {
  const delays: number[] = [];
  return {
    delays,
    set: (callback, delayMs) => {
      delays.push(delayMs);
      return realTimers.set(callback, delayMs);
    },
    clear: (handle) => realTimers.clear(handle),
  };
}

/** Lets every due timer and the promise chains it starts settle. */
async function settle(ms = 0): Promise<void> {
  await vi.advanceTimersByTimeAsync(ms);
}

/** Starts `job`, then lets `ms` of (fake) real time pass. */
async function startFor(job: PeriodicJob, ms = 0): Promise<void> {
  await job.start();
  await settle(ms);
}

/**
 * Lets (fake) real time pass in steps, checking `count()` after each step:
 * `[ms, expected]` pairs, in order.
 */
async function expectCountsAfter(count: () => number, steps: readonly [ms: number, expected: number][]) {
  let elapsed = 0;
  for (const [ms, expected] of steps) {
    await settle(ms);
    elapsed += ms;
    expect(count(), `count ${elapsed} ms into the steps`).toBe(expected);
  }
}

type CountingJobOptions = Partial<Omit<PeriodicJobOptions, 'run'>> & {
  /** Called on every run after it is counted, with the count so far. */
  run?: (signal: AbortSignal, count: number) => Promise<unknown>;
};

/**
 * A job on `clock`, every hour and never run before unless `options` say
 * otherwise, whose `run` counts its calls (then does `options.run`, if any).
 */
function countingJob(options: CountingJobOptions = {}): { job: PeriodicJob; runs: () => number } {
  let runs = 0;
  const { run, ...rest } = options;
  const job = new PeriodicJob({
    name: 'counting',
    clock,
    interval: HOUR_MS,
    ...rest,
    run: async (signal) => {
      runs++;
      await run?.(signal, runs);
    },
  });
  return { job, runs: () => runs };
}

async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  await settle();
  return settled;
}

beforeEach(() => {
  vi.useFakeTimers({ now: START, toFake: ['setTimeout', 'clearTimeout', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('PeriodicJob: overdue at start', () => {
  it('runs at once when it never ran', async () => {
    const { job, runs } = countingJob({ name: 'never', lastRunAt: async () => null });
    await startFor(job);
    expect(runs()).toBe(1);
    await job.stop();
  });

  it('runs at once when its last run is an interval old or more', async () => {
    const { job, runs } = countingJob({ name: 'overdue', lastRunAt: async () => ago(2 * HOUR_MS) });
    await startFor(job);
    expect(runs()).toBe(1);
    await job.stop();
  });

  it('otherwise waits only the rest of its interval, then runs every interval', async () => {
    const { job, runs } = countingJob({
      name: 'recent',
      lastRunAt: async () => new Date(clock.now().getTime() - 20 * MINUTE_MS),
    });
    await job.start();
    expect(job.status().lastRunAt).toBe(ago(20 * MINUTE_MS));
    expect(job.status().nextRunAt).toBe(new Date(START + 40 * MINUTE_MS).toISOString());
    await expectCountsAfter(runs, [
      [40 * MINUTE_MS - 1, 0],
      [1, 1],
      [HOUR_MS - 1, 1],
      [1, 2],
    ]);
    await job.stop();
  });

  it('a last run in the future (clock skew) waits one interval, not longer', async () => {
    const { job, runs } = countingJob({
      name: 'skewed',
      lastRunAt: async () => new Date(START + 5 * HOUR_MS).toISOString(),
    });
    await startFor(job, HOUR_MS);
    expect(runs()).toBe(1);
    await job.stop();
  });

  it('overdueAfterMs judges overdue when the interval is a random window', async () => {
    const runsAt: number[] = [];
    const window = (lastAgo: number) =>
      countingJob({
        name: 'window',
        interval: () => 5 * HOUR_MS,
        overdueAfterMs: 4 * HOUR_MS,
        lastRunAt: async () => ago(lastAgo),
        run: async () => {
          runsAt.push(Date.now());
        },
      }).job;
    const overdue = window(4.5 * HOUR_MS);
    await startFor(overdue);
    expect(runsAt).toEqual([START]);
    await overdue.stop();

    runsAt.length = 0;
    const recent = window(3 * HOUR_MS);
    const startedAt = Date.now();
    await startFor(recent, 3 * HOUR_MS);
    expect(runsAt).toEqual([startedAt + 2 * HOUR_MS]);
    await recent.stop();
  });

  it('a failed lastRunAt read is reported and counts as never run', async () => {
    const errors: unknown[] = [];
    const { job, runs } = countingJob({
      name: 'unreadable',
      lastRunAt: async () => {
        throw new Error('database is down');
      },
      onError: (error) => errors.push(error),
    });
    await startFor(job);
    expect(runs()).toBe(1);
    expect(errors).toHaveLength(1);
    expect(job.status().lastError).toMatchObject({ kind: 'internal', message: 'database is down' });
    await job.stop();
  });
});

describe('PeriodicJob: clock speed', () => {
  it('waits clock delay / speed of real time, and reports times in clock time', async () => {
    const fast = scaledClock(60);
    const runsAt: string[] = [];
    const { job } = countingJob({
      name: 'demo',
      clock: fast,
      speed: 60,
      run: async () => {
        runsAt.push(fast.now().toISOString());
      },
    });
    await startFor(job);
    expect(runsAt).toHaveLength(1);
    // One clock hour is one real minute at 60×.
    expect(job.status().nextRunAt).toBe(new Date(START + HOUR_MS).toISOString());
    await settle(MINUTE_MS - 1);
    expect(runsAt).toHaveLength(1);
    await settle(1);
    expect(runsAt).toEqual([new Date(START).toISOString(), new Date(START + HOUR_MS).toISOString()]);
    await job.stop();
  });

  it('scales the rest of the interval at start too', async () => {
    const fast = scaledClock(60);
    const { job, runs } = countingJob({
      name: 'demo-restart',
      clock: fast,
      speed: 60,
      lastRunAt: async () => new Date(fast.now().getTime() - 30 * MINUTE_MS),
    });
    await job.start();
    await expectCountsAfter(runs, [
      [30_000 - 1, 0],
      [1, 1],
    ]);
    await job.stop();
  });

  it('waits delays beyond the timer ceiling in steps instead of firing at once', async () => {
    const { job, runs } = countingJob({
      name: 'monthly',
      interval: 30 * 24 * HOUR_MS,
      lastRunAt: async () => ago(0),
    });
    await job.start();
    await expectCountsAfter(runs, [
      [29 * 24 * HOUR_MS, 0],
      [24 * HOUR_MS, 1],
    ]);
    await job.stop();
  });

  it('rejects a speed that is not positive', () => {
    const make = (speed: number) => countingJob({ name: 'bad', speed });
    expect(() => make(0)).toThrow(RangeError);
    expect(() => make(-1)).toThrow(RangeError);
    expect(() => make(Number.NaN)).toThrow(RangeError);
  });
});

describe('PeriodicJob: jitter', () => {
  /** Runs the job `cycles` times and returns the delays it armed after each run. */
  async function delaysOf(job: PeriodicJob, timers: { delays: number[] }, cycles: number, maxDelay: number) {
    await startFor(job);
    for (let i = 1; i < cycles; i++) await settle(maxDelay);
    await job.stop();
    return timers.delays;
  }

  it('a ratio spreads each delay within ± that fraction', async () => {
    const timers = recordingTimers();
    const { job } = countingJob({ name: 'ratio', timers, interval: 1000, jitter: { ratio: 0.25 } });
    const delays = await delaysOf(job, timers, 200, 1250);
    expect(delays.length).toBeGreaterThanOrEqual(200);
    // The first delay is the immediate start.
    for (const delay of delays.slice(1)) {
      expect(delay).toBeGreaterThanOrEqual(750);
      expect(delay).toBeLessThanOrEqual(1250);
    }
    expect(new Set(delays.slice(1)).size).toBeGreaterThan(20);
    expect(Math.min(...delays.slice(1))).toBeLessThan(850);
    expect(Math.max(...delays.slice(1))).toBeGreaterThan(1150);
  });

  it('the bounds are reached at the ends of the random range; ms jitter is absolute', async () => {
    const draws = [0, 1 - 1e-12];
    const timers = recordingTimers();
    let i = 0;
    const { job } = countingJob({
      name: 'ms',
      timers,
      interval: 1000,
      jitter: { ms: 100 },
      random: () => draws[i++ % 2] as number,
    });
    const delays = await delaysOf(job, timers, 3, 1100);
    expect(delays.slice(1, 3)).toEqual([900, 1100]);
  });

  it('rejects a ratio above 1 or a negative spread', () => {
    const make = (jitter: { ratio: number } | { ms: number }) =>
      countingJob({ name: 'bad', interval: 1000, jitter });
    expect(() => make({ ratio: 1.5 })).toThrow(RangeError);
    expect(() => make({ ms: -1 })).toThrow(RangeError);
  });
});

describe('PeriodicJob: single-flight', () => {
  it('never overlaps itself; triggers during a run coalesce into one follow-up', async () => {
    let running = 0;
    let peak = 0;
    let current = gate();
    const { job, runs } = countingJob({
      name: 'slow',
      interval: 10,
      run: async () => {
        running++;
        peak = Math.max(peak, running);
        await current.promise;
        running--;
      },
    });
    await startFor(job);
    expect(job.status()).toMatchObject({ running: true, nextRunAt: null });
    // The schedule does not start another run while one is in progress.
    await settle(1000);
    expect(runs()).toBe(1);
    const triggers = [job.trigger(), job.trigger(), job.trigger()];
    expect(triggers[1]).toBe(triggers[0]);
    expect(triggers[2]).toBe(triggers[0]);
    const first = current;
    current = gate();
    first.open();
    await settle();
    expect(runs()).toBe(2);
    expect(await isSettled(triggers[0] as Promise<void>)).toBe(false);
    current.open();
    await settle();
    expect(await isSettled(triggers[0] as Promise<void>)).toBe(true);
    expect(peak).toBe(1);
    await job.stop();
  });

  it('a trigger while idle runs now and the schedule counts from its end', async () => {
    const runsAt: number[] = [];
    const { job } = countingJob({
      name: 'manual',
      lastRunAt: async () => ago(0),
      run: async () => {
        runsAt.push(Date.now());
      },
    });
    await startFor(job, 10 * MINUTE_MS);
    await job.trigger();
    expect(runsAt).toEqual([START + 10 * MINUTE_MS]);
    expect(job.status().nextRunAt).toBe(new Date(START + 70 * MINUTE_MS).toISOString());
    await settle(HOUR_MS);
    expect(runsAt).toEqual([START + 10 * MINUTE_MS, START + 70 * MINUTE_MS]);
    await job.stop();
  });

  it('a job that is not started ignores trigger()', async () => {
    const { job, runs } = countingJob({ name: 'idle' });
    await job.trigger();
    expect(runs()).toBe(0);
  });
});

describe('PeriodicJob: stop', () => {
  it('resolves only after the running run finished, aborts its signal and ends the schedule', async () => {
    const release = gate();
    let signal: AbortSignal | null = null;
    const { job, runs } = countingJob({
      name: 'busy',
      interval: MINUTE_MS,
      run: async (s) => {
        signal = s;
        await release.promise;
      },
    });
    await startFor(job);
    const stopped = job.stop();
    expect(await isSettled(stopped)).toBe(false);
    expect((signal as AbortSignal | null)?.aborted).toBe(true);
    release.open();
    await settle();
    expect(await isSettled(stopped)).toBe(true);
    await settle(10 * HOUR_MS);
    expect(runs()).toBe(1);
    expect(job.status()).toMatchObject({ running: false, nextRunAt: null });
  });

  it('a stop while start reads lastRunAt leaves nothing armed', async () => {
    const read = gate();
    const { job, runs } = countingJob({
      name: 'stopped-early',
      interval: MINUTE_MS,
      lastRunAt: async () => {
        await read.promise;
        return null;
      },
    });
    const started = job.start();
    await job.stop();
    read.open();
    await started;
    await settle(HOUR_MS);
    expect(runs()).toBe(0);
  });

  it('can start again after a stop', async () => {
    const { job, runs } = countingJob({ name: 'restart', interval: MINUTE_MS });
    await startFor(job);
    await job.stop();
    await startFor(job);
    expect(runs()).toBe(2);
    await job.stop();
  });
});

describe('PeriodicJob: errors', () => {
  it('go to onError and status, and the schedule continues', async () => {
    const errors: unknown[] = [];
    const { job, runs } = countingJob({
      name: 'flaky',
      onError: (error) => errors.push(error),
      run: async (_signal, count) => {
        if (count === 1) throw Object.assign(new Error('feed is down'), { kind: 'unavailable' });
      },
    });
    await startFor(job);
    expect(errors).toHaveLength(1);
    expect(job.status()).toMatchObject({
      name: 'flaky',
      running: false,
      lastRunAt: new Date(START).toISOString(),
      lastError: { at: new Date(START).toISOString(), kind: 'unavailable', message: 'feed is down' },
      nextRunAt: new Date(START + HOUR_MS).toISOString(),
    });
    await settle(HOUR_MS);
    expect(runs()).toBe(2);
    expect(errors).toHaveLength(1);
    await job.stop();
  });

  it('a throwing onError does not stop the schedule', async () => {
    const { job, runs } = countingJob({
      name: 'loud',
      onError: () => {
        throw new Error('logger broke');
      },
      run: async () => {
        throw new Error('always');
      },
    });
    await startFor(job, 2 * HOUR_MS);
    expect(runs()).toBe(3);
    await job.stop();
  });
});

describe('TaskQueue', () => {
  it('runs a key once however often it is added while running or waiting', async () => {
    const queue = new TaskQueue<string>({ concurrency: 1, maxPending: 10 });
    const release = gate();
    const calls: string[] = [];
    const task = (key: string) => async () => {
      calls.push(key);
      await release.promise;
    };
    expect(queue.add('a', task('a'))).toBe(true);
    expect(queue.add('b', task('b'))).toBe(true);
    expect(queue.stateOf('a')).toBe('running');
    expect(queue.stateOf('b')).toBe('pending');
    expect(queue.stateOf('c')).toBeNull();
    expect(queue.add('a', task('a'))).toBe(true);
    expect(queue.add('b', task('b'))).toBe(true);
    expect(queue.size).toBe(2);
    release.open();
    await queue.idle();
    expect(calls).toEqual(['a', 'b']);
    expect(queue.stateOf('a')).toBeNull();
  });

  it('runs at most `concurrency` tasks at once, in arrival order', async () => {
    const queue = new TaskQueue<number>({ concurrency: 2, maxPending: 10 });
    const gates = [gate(), gate(), gate(), gate(), gate()];
    let running = 0;
    let peak = 0;
    const started: number[] = [];
    gates.forEach((g, i) => {
      queue.add(i, async () => {
        started.push(i);
        running++;
        peak = Math.max(peak, running);
        await g.promise;
        running--;
      });
    });
    expect(queue.running).toBe(2);
    expect(queue.pending).toBe(3);
    for (const g of gates) {
      g.open();
      await settle();
    }
    await queue.idle();
    expect(peak).toBe(2);
    expect(started).toEqual([0, 1, 2, 3, 4]);
  });

  it('declines a new key when the waiting list is full', async () => {
    const queue = new TaskQueue<string>({ concurrency: 1, maxPending: 2 });
    const release = gate();
    const task = async () => {
      await release.promise;
    };
    expect(queue.add('a', task)).toBe(true);
    expect(queue.add('b', task)).toBe(true);
    expect(queue.add('c', task)).toBe(true);
    expect(queue.add('d', task)).toBe(false);
    expect(queue.stateOf('d')).toBeNull();
    // A key already waiting is still served.
    expect(queue.add('c', task)).toBe(true);
    expect({ running: queue.running, pending: queue.pending, size: queue.size }).toEqual({
      running: 1,
      pending: 2,
      size: 3,
    });
    release.open();
    await queue.idle();
    expect(queue.add('d', task)).toBe(true);
    await queue.idle();
    expect(queue.size).toBe(0);
  });

  it('idle() waits for every task, including those added meanwhile', async () => {
    const queue = new TaskQueue<string>({ concurrency: 1, maxPending: 10 });
    await queue.idle();
    const release = gate();
    const done: string[] = [];
    queue.add('first', async () => {
      await release.promise;
      queue.add('second', async () => {
        await settleMicrotasks();
        done.push('second');
      });
      done.push('first');
    });
    const idle = queue.idle();
    expect(await isSettled(idle)).toBe(false);
    release.open();
    await idle;
    expect(done).toEqual(['first', 'second']);
  });

  it('reports a failed task with its key and goes on', async () => {
    const failures: [unknown, string][] = [];
    const queue = new TaskQueue<string>({
      concurrency: 1,
      maxPending: 10,
      onError: (error, key) => failures.push([error, key]),
    });
    const ran: string[] = [];
    queue.add('bad', async () => {
      throw new Error('boom');
    });
    queue.add('good', async () => {
      ran.push('good');
    });
    await queue.idle();
    expect(failures).toHaveLength(1);
    expect(failures[0]?.[1]).toBe('bad');
    expect(ran).toEqual(['good']);
  });
});

async function settleMicrotasks(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

describe('refresh schedules', () => {
  function fakeRefresher() {
    const calls = { search: 0, buildings: 0, failures: [] as unknown[] };
    return {
      calls,
      refresher: {
        replicate: async () => {
          calls.search++;
          throw Object.assign(new Error('feed is down'), { kind: 'unavailable' });
        },
        refreshBuildings: async () => {
          calls.buildings++;
          return { received: 0, created: 0, updated: 0, ms: 0 };
        },
        recordFailure: (error: unknown) => {
          calls.failures.push(error);
        },
        idle: async () => {},
      },
    } as const;
  }

  it('buildings run at start when their last refresh is a day old, else when the day is up', async () => {
    for (const [lastAgo, firstRunAfter] of [
      [25 * HOUR_MS, 0],
      [2 * HOUR_MS, 22 * HOUR_MS],
    ] as const) {
      const { calls, refresher } = fakeRefresher();
      const { buildings } = createRefreshSchedules({
        refresher,
        clock,
        dataVersion: { refreshedAt: async (scope) => (scope === 'buildings' ? ago(lastAgo) : null) },
      });
      await buildings.start();
      if (firstRunAfter > 0) await settle(firstRunAfter - 1);
      expect(calls.buildings).toBe(0);
      await expectCountsAfter(
        () => calls.buildings,
        [
          [1, 1],
          [24 * HOUR_MS, 2],
        ],
      );
      await buildings.stop();
    }
  });

  it('search runs at start once 4 h old, then every 4–6 h; a failure is recorded and retried on schedule', async () => {
    const { calls, refresher } = fakeRefresher();
    const warnings: unknown[] = [];
    const draws = [0, 1 - 1e-12];
    let i = 0;
    const { search } = createRefreshSchedules({
      refresher,
      clock,
      random: () => draws[i++ % 2] as number,
      log: { warn: (...args: unknown[]) => warnings.push(args) },
      dataVersion: { refreshedAt: async (scope) => (scope === 'search:rental' ? ago(4.5 * HOUR_MS) : null) },
    });
    await search.start();
    await settle();
    expect(calls.search).toBe(1);
    expect(calls.failures).toHaveLength(1);
    expect(warnings).toHaveLength(1);
    // Draws alternate 0 and ~1: the window's ends, 4 h then 6 h (the first draw judged overdue).
    await expectCountsAfter(
      () => calls.search,
      [
        [6 * HOUR_MS - 1, 1],
        [1, 2],
        [4 * HOUR_MS, 3],
      ],
    );
    await search.stop();
  });

  it('search refreshed an hour ago waits the rest of its window', async () => {
    const { calls, refresher } = fakeRefresher();
    const { search } = createRefreshSchedules({
      refresher,
      clock,
      random: () => 0,
      dataVersion: { refreshedAt: async () => ago(HOUR_MS) },
    });
    await search.start();
    await expectCountsAfter(
      () => calls.search,
      [
        [3 * HOUR_MS - 1, 0],
        [1, 1],
      ],
    );
    await search.stop();
  });
});

describe('Jobs', () => {
  function fakes() {
    const calls = { snapshots: 0, scores: 0, search: 0, buildings: 0, idle: 0 };
    let snapshotSignal: AbortSignal | undefined;
    const release = gate();
    return {
      calls,
      release,
      signal: () => snapshotSignal,
      deps: {
        dataVersion: { refreshedAt: async () => ago(HOUR_MS) },
        clock,
        speed: 1,
        log: { warn: () => {}, error: () => {} },
        marketSnapshots: {
          run: async (options: { signal?: AbortSignal } = {}) => {
            calls.snapshots++;
            snapshotSignal = options.signal;
            await release.promise;
            return { days: 0, coverage: null };
          },
        },
        scores: {
          checkEveryMs: HOUR_MS,
          lastComputedAt: async () => null,
          tick: async () => {
            calls.scores++;
            return null;
          },
        },
        refresher: {
          replicate: async () => {
            calls.search++;
            return { ...emptySummary(), pages: 0, fetched: 0, ms: 0 };
          },
          refreshBuildings: async () => {
            calls.buildings++;
            return { received: 0, created: 0, updated: 0, ms: 0 };
          },
          recordFailure: () => {},
          idle: async () => {
            calls.idle++;
          },
        },
      },
    };
  }

  it('owns the refresh, snapshot and scores jobs; stop waits for each and for the refresher', async () => {
    const { calls, release, signal, deps } = fakes();
    const jobs = createJobs({ ...deps, scheduledRefresh: true });
    expect(jobs.status().map((s) => s.name)).toEqual([
      'refresh:search',
      'refresh:buildings',
      'market-snapshots',
      'scores',
    ]);
    await jobs.start();
    await settle();
    // Snapshots and scores run at once; the refreshes (an hour old) wait their turn.
    expect(calls).toMatchObject({ snapshots: 1, scores: 1, search: 0, buildings: 0 });
    const stopped = jobs.stop();
    expect(signal()?.aborted).toBe(true);
    expect(await isSettled(stopped)).toBe(false);
    release.open();
    await stopped;
    expect(calls.idle).toBe(1);
    await settle(48 * HOUR_MS);
    expect(calls).toMatchObject({ snapshots: 1, scores: 1, search: 0, buildings: 0 });
  });

  it('has no refresh jobs without a refresher or with scheduled refresh off', () => {
    const { deps } = fakes();
    const names = (jobs: ReturnType<typeof createJobs>) => jobs.status().map((s) => s.name);
    expect(names(createJobs({ ...deps, scheduledRefresh: false }))).toEqual(['market-snapshots', 'scores']);
    expect(names(createJobs({ ...deps, refresher: undefined, scheduledRefresh: true }))).toEqual([
      'market-snapshots',
      'scores',
    ]);
  });
});
