/**
 * In-process signals to open watcher streams: a change was recorded, the
 * watcher stopped (paused or deleted), or a poll failed. Streams never rely
 * on them alone: each also re-reads the store on a short interval, so a change
 * recorded or a watcher paused by another process reaches it too.
 */
import type { RecordedWatcherChange, WatcherChangeSink } from './watchers.service.ts';

export type StreamSignal =
  | { kind: 'change'; sequence: number }
  | { kind: 'stopped' }
  | { kind: 'error'; code: string; message: string };

export class WatcherStreams implements WatcherChangeSink {
  private readonly listeners = new Map<string, Set<(signal: StreamSignal) => void>>();

  /** Listens to one watcher's signals; returns the function that stops listening. */
  subscribe(watcherId: string, listener: (signal: StreamSignal) => void): () => void {
    let set = this.listeners.get(watcherId);
    if (!set) {
      set = new Set();
      this.listeners.set(watcherId, set);
    }
    set.add(listener);
    return () => {
      const current = this.listeners.get(watcherId);
      if (!current) return;
      current.delete(listener);
      if (current.size === 0) this.listeners.delete(watcherId);
    };
  }

  publish(watcherId: string, signal: StreamSignal): void {
    for (const listener of [...(this.listeners.get(watcherId) ?? [])]) listener(signal);
  }

  /** Open streams of this process (all watchers). */
  get size(): number {
    let n = 0;
    for (const set of this.listeners.values()) n += set.size;
    return n;
  }

  async watcherChanged(change: RecordedWatcherChange): Promise<void> {
    this.publish(change.payload.data.watcherId, { kind: 'change', sequence: change.payload.data.sequence });
  }
}
