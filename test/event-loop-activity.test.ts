/**
 * The measurement the stall tests bound (support/event-loop-activity.ts):
 * its thread clock follows this thread's work and not its waits, and a hold of
 * the loop is seen whole while a wait is not.
 */
import { describe, expect, it } from 'vitest';
import { threadCpuClock, watchEventLoop } from './support/event-loop-activity.ts';

/** Spins until this thread's clock says `ms` of CPU went by; returns the wall time it took. */
function spinCpu(read: () => number, ms: number): number {
  const started = performance.now();
  const from = read();
  // A clock that did not follow the work would spin on: the cap fails the test instead.
  while (read() - from < ms && performance.now() - started < 5_000) {
    // busy
  }
  return performance.now() - started;
}

const clock = threadCpuClock();
const perThread = clock.read() !== null;
clock.close();

describe.runIf(perThread)('the thread CPU clock', () => {
  it('counts a busy loop on this thread and not a wait', async () => {
    const cpu = threadCpuClock();
    try {
      const read = () => cpu.read() as number;
      const before = read();
      await new Promise((resolve) => setTimeout(resolve, 40));
      const waited = read() - before;
      const spinWall = spinCpu(read, 30);
      expect(waited).toBeLessThan(10);
      // A thread's CPU time cannot outrun the wall clock.
      expect(spinWall).toBeGreaterThanOrEqual(29);
      expect(spinWall).toBeLessThan(5_000);
    } finally {
      cpu.close();
    }
  });

  it('sees a 40 ms hold of the loop as one run, and a 40 ms wait as none', async () => {
    const cpu = threadCpuClock();
    try {
      const watch = watchEventLoop();
      await new Promise((resolve) => setTimeout(resolve, 40));
      await new Promise((resolve) => setTimeout(resolve, 10));
      spinCpu(() => cpu.read() as number, 40);
      await new Promise((resolve) => setTimeout(resolve, 10));
      const activity = watch.stop();
      expect(activity.maxHeldMs).toBeGreaterThan(35);
      expect(activity.maxHeldMs).toBeLessThanOrEqual(activity.maxActiveWallMs);
      expect(activity.totalHeldMs).toBeLessThan(activity.maxHeldMs + 20);
    } finally {
      cpu.close();
    }
  });
});
