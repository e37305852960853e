import { performance } from 'node:perf_hooks';

/**
 * Spaces out rebuilds of a derived read model (the search index, market
 * caches) that follow a data source changing faster than the model can be
 * rebuilt usefully: after a rebuild that took `d` ms, the next one may start
 * `factor × d` ms after it ended (at most `maxGapMs`). With the default factor
 * 4, rebuilds take at most a fifth of the time of the thread they run on,
 * however often the data changes — a refresh cycle every second no longer
 * keeps a core busy with index builds, competing with requests on a small
 * machine.
 *
 * The price is staleness: the model may lag the store by up to one rebuild
 * plus one gap (at the demo's full scale about 10 s + 30 s; the tightest
 * freshness threshold a tier has is 10 minutes). The model served meanwhile
 * is the previous complete one, never a half-built one. Pacing is on real
 * time (it is about CPU), not on the market clock.
 */
export class RebuildPacer {
  private earliestNext = 0;

  constructor(
    private readonly factor = 4,
    private readonly maxGapMs = 30_000,
  ) {}

  /** Records a finished rebuild that ran from `startedAt` (performance.now()) until now. */
  finished(startedAt: number): void {
    const ended = performance.now();
    const gap = Math.min(this.maxGapMs, Math.max(0, (ended - startedAt) * this.factor));
    this.earliestNext = ended + gap;
  }

  /** How long until the next rebuild may start (0 when it may start now). */
  delayMs(): number {
    return Math.max(0, this.earliestNext - performance.now());
  }

  /** Resolves when the next rebuild may start. */
  async wait(): Promise<void> {
    // Timers fire on whole milliseconds and may fire a fraction early: wait out what is left.
    for (let delay = this.delayMs(); delay > 0; delay = this.delayMs()) {
      await new Promise<void>((resolve) => setTimeout(resolve, Math.ceil(delay)).unref());
    }
  }
}
