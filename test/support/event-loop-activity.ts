/**
 * How long this thread's event loop is held while some work runs, for the
 * tests that bound the request thread's stalls (issue 12 part 1).
 *
 * A run of activity between two 2 ms timer ticks is measured twice: in wall
 * time (`performance.eventLoopUtilization`) and in the thread's time on a CPU
 * (the kernel's scheduler statistics). The bounds apply to the CPU time,
 * garbage collection included: a thread the machine takes off its CPU in the
 * middle of a short task holds nothing meanwhile, and on a busy 2-core CI
 * machine that alone stretched a 25 ms run to 88–124 ms of wall time (and a
 * cycle's 32 ms to 181 ms). Where the kernel keeps no per-thread statistics,
 * the wall time stands in.
 */
import { closeSync, existsSync, openSync, readSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

export interface ThreadCpuClock {
  /** The calling thread's CPU time so far, ms; null where the kernel keeps none. */
  read(): number | null;
  close(): void;
}

/**
 * The calling thread's time on a CPU from `/proc/thread-self/schedstat`
 * (nanoseconds), read through one descriptor: every 2 ms tick reads it.
 */
export function threadCpuClock(): ThreadCpuClock {
  const path = '/proc/thread-self/schedstat';
  if (!existsSync(path)) return { read: () => null, close: () => {} };
  const fd = openSync(path, 'r');
  const buffer = Buffer.alloc(128);
  return {
    read: () => {
      const length = readSync(fd, buffer, 0, buffer.length, 0);
      return Number(buffer.toString('latin1', 0, length).split(' ')[0]) / 1e6;
    },
    close: () => closeSync(fd),
  };
}

export interface LoopActivity {
  /** The longest run of activity between two ticks, in the thread's CPU time, ms. */
  maxHeldMs: number;
  /** All runs of activity together, in the thread's CPU time, ms. */
  totalHeldMs: number;
  /** The longest run in wall time (the machine's preemption included), ms. */
  maxActiveWallMs: number;
  /** All runs together in wall time, ms. */
  totalActiveWallMs: number;
  /** Longest event-loop delay (includes the machine's scheduling noise), ms. */
  maxDelayMs: number;
  p99DelayMs: number;
}

/** Samples this thread's event loop every 2 ms until `stop()`. */
export function watchEventLoop(): { stop(): LoopActivity } {
  const histogram = monitorEventLoopDelay({ resolution: 2 });
  histogram.enable();
  const cpu = threadCpuClock();
  const activity = { maxHeldMs: 0, totalHeldMs: 0, maxActiveWallMs: 0, totalActiveWallMs: 0 };
  let last = performance.eventLoopUtilization();
  let lastCpu = cpu.read();
  // A run is measured from the end of one tick's callback to the start of the
  // next: the sampler's own reads (tens of µs, 500 times a second) are not the
  // work under watch, and over a long window they added up to hundreds of ms.
  const sample = () => {
    const now = performance.eventLoopUtilization();
    const nowCpu = cpu.read();
    const activeWall = now.active - last.active;
    // The CPU time also counts the idle poll's wake-ups; within one run it
    // cannot exceed the activity the run saw.
    const held = nowCpu === null || lastCpu === null ? activeWall : Math.min(activeWall, nowCpu - lastCpu);
    activity.maxActiveWallMs = Math.max(activity.maxActiveWallMs, activeWall);
    activity.totalActiveWallMs += activeWall;
    activity.maxHeldMs = Math.max(activity.maxHeldMs, held);
    activity.totalHeldMs += held;
    last = performance.eventLoopUtilization();
    lastCpu = cpu.read();
  };
  const sampler = setInterval(sample, 2);
  return {
    stop: () => {
      clearInterval(sampler);
      sample();
      cpu.close();
      histogram.disable();
      return { ...activity, maxDelayMs: histogram.max / 1e6, p99DelayMs: histogram.percentile(99) / 1e6 };
    },
  };
}
