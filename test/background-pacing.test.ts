import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import {
  BACKGROUND_DUTY,
  BackgroundPacer,
  noteServingRequest,
} from '../src/platform/worker/serving-activity.ts';
import {
  BACKGROUND_NICE,
  type BackgroundRole,
  configureBackgroundPriority,
  endWorker,
  startModuleWorker,
} from '../src/platform/worker/threads.ts';
import type { FromPacingWorker, ToPacingWorker } from './support/pacing-worker.ts';

/** A pacer on a fake clock, over its own activity count. */
function fakePacer() {
  const buffer = new SharedArrayBuffer(4);
  const count = new Int32Array(buffer);
  let now = 1_000;
  const pacer = new BackgroundPacer(buffer, BACKGROUND_DUTY, () => now);
  return {
    pacer,
    request: () => Atomics.add(count, 0, 1),
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe('BackgroundPacer', () => {
  it('never rests while no request arrives, however long the slices', () => {
    const { pacer, advance } = fakePacer();
    for (const ms of [0.2, 5, 80, 1]) {
      advance(ms);
      expect(pacer.restMs()).toBe(0);
    }
  });

  it('rests three times the work of a slice while requests arrive (a quarter of the time at work)', () => {
    const { pacer, advance, request } = fakePacer();
    request();
    advance(4);
    expect(pacer.restMs()).toBeCloseTo(12, 9);
    // The rest is not counted as work: the next slice starts when it ends.
    advance(12 + 2);
    request();
    expect(pacer.restMs()).toBeCloseTo(6, 9);
  });

  it('adds up slices too short to rest after, and rests at most 40 ms at once', () => {
    const { pacer, advance, request } = fakePacer();
    request();
    let rested = 0;
    for (let i = 0; i < 20; i++) {
      advance(0.1);
      const rest = pacer.restMs();
      expect(rest === 0 || rest >= 1).toBe(true);
      rested += rest;
      advance(rest);
    }
    // 2 ms of work owes 6 ms of rest, paid in rests of at least a millisecond.
    expect(rested).toBeGreaterThanOrEqual(5);
    expect(rested).toBeLessThanOrEqual(6 + 1e-9);

    advance(100);
    request();
    expect(pacer.restMs()).toBe(40);
  });

  it('clears its debt once requests stop for 100 ms', () => {
    const { pacer, advance, request } = fakePacer();
    request();
    advance(30);
    expect(pacer.restMs()).toBe(40);
    advance(40 + 101);
    expect(pacer.restMs()).toBe(0);
    advance(1);
    expect(pacer.restMs()).toBe(0);
  });
});

describe('a background worker thread', () => {
  const entry = pathToFileURL(new URL('./support/pacing-worker.ts', import.meta.url).pathname).href;

  async function run(worker: ReturnType<typeof startModuleWorker>, slices: number, workMs: number) {
    const answer = once(worker, 'message') as Promise<[FromPacingWorker]>;
    worker.postMessage({ type: 'run', slices, workMs } satisfies ToPacingWorker);
    const [ran] = await answer;
    if (ran.type !== 'ran') throw new Error(`unexpected answer ${ran.type}`);
    return ran;
  }

  /** Policy and nice value of a thread of this process, from /proc (Linux). */
  async function schedulingOf(worker: ReturnType<typeof startModuleWorker>) {
    const answer = once(worker, 'message') as Promise<[FromPacingWorker]>;
    worker.postMessage({ type: 'thread-id' } satisfies ToPacingWorker);
    const [reply] = await answer;
    if (reply.type !== 'thread-id') throw new Error(`unexpected answer ${reply.type}`);
    const stat = readFileSync(`/proc/self/task/${reply.threadId}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): the 3rd field is first.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { nice: Number(fields[19 - 3]), policy: Number(fields[41 - 3]) };
  }

  const SCHED_OTHER = 0;
  const SCHED_IDLE = 5;
  const hasChrt = spawnSync('chrt', ['--version'], { stdio: 'ignore' }).status === 0;

  it.runIf(process.platform === 'linux')(
    'runs rebuilds in the idle scheduling class when BACKGROUND_PRIORITY is idle, writers at nice 10 always',
    async () => {
      const started: ReturnType<typeof startModuleWorker>[] = [];
      const start = (init: { entry: string; role?: BackgroundRole }) => {
        const worker = startModuleWorker(init);
        started.push(worker);
        return worker;
      };
      try {
        configureBackgroundPriority('idle');
        const idleRebuild = start({ entry });
        const idleWriter = start({ entry, role: 'work' });
        configureBackgroundPriority('nice');
        const niceRebuild = start({ entry });
        const nicely = { nice: BACKGROUND_NICE, policy: SCHED_OTHER };
        // Without chrt (util-linux) the idle class falls back to nice 10.
        expect(await schedulingOf(idleRebuild)).toEqual(hasChrt ? { nice: 0, policy: SCHED_IDLE } : nicely);
        expect(await schedulingOf(idleWriter)).toEqual(nicely);
        expect(await schedulingOf(niceRebuild)).toEqual(nicely);
      } finally {
        configureBackgroundPriority(loadConfig(process.env).backgroundPriority);
        for (const worker of started)
          await endWorker(worker, { type: 'close' } satisfies ToPacingWorker, 5_000);
      }
    },
  );

  it('works flat out while the request thread is quiet and a quarter of the time while it serves', async () => {
    const worker = startModuleWorker({ entry });
    try {
      await run(worker, 1, 1);
      const quiet = await run(worker, 20, 3);
      const serving = setInterval(noteServingRequest, 5);
      let busy: FromPacingWorker;
      try {
        busy = await run(worker, 20, 3);
      } finally {
        clearInterval(serving);
      }
      expect(quiet.elapsedMs).toBeLessThan(quiet.workedMs * 2);
      expect(busy.elapsedMs).toBeGreaterThan(busy.workedMs * 2.5);
    } finally {
      await endWorker(worker, { type: 'close' } satisfies ToPacingWorker, 5_000);
    }
  });
});
