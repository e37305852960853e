import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { RebuildPacer } from '../src/platform/rebuild-pacer.ts';

describe('RebuildPacer', () => {
  it('lets the first rebuild start at once', () => {
    expect(new RebuildPacer().delayMs()).toBe(0);
  });

  it('spaces the next rebuild by factor × the last one’s duration', () => {
    const pacer = new RebuildPacer(2, 30_000);
    pacer.finished(performance.now() - 200);
    const delay = pacer.delayMs();
    // 2 × 200 ms after it ended; a little of it may have passed already.
    expect(delay).toBeGreaterThan(350);
    expect(delay).toBeLessThanOrEqual(400.5);
  });

  it('caps the gap, however long the rebuild took', () => {
    const pacer = new RebuildPacer(2, 1_000);
    pacer.finished(performance.now() - 60_000);
    expect(pacer.delayMs()).toBeLessThanOrEqual(1_000);
    expect(pacer.delayMs()).toBeGreaterThan(900);
  });

  it('wait() resolves once the gap has passed', async () => {
    const pacer = new RebuildPacer(1, 30_000);
    pacer.finished(performance.now() - 40);
    const started = performance.now();
    await pacer.wait();
    expect(performance.now() - started).toBeGreaterThanOrEqual(30);
    expect(pacer.delayMs()).toBe(0);
  });
});
