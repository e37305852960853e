/**
 * Which upstream this process talks to, decided once from the configuration:
 * - UPSTREAM_URL set: that RESO Web API (an operator's licensed feed);
 * - else, with the demo market: the market simulator, started in-process on a
 *   loopback port and reached over HTTP through the same RESO source, so the
 *   real adapter is exercised; the simulator and the whole service then run on
 *   one simulated clock (SIM_SPEED × real time);
 * - else: no upstream (a store loaded from files is served as it is).
 */
import type { Config } from '../config.ts';
import { type Clock, systemClock } from '../platform/clock.ts';
import type { Store } from '../platform/db/database.ts';
import { DEMO_SCOPE } from './demo/load.ts';
import { resoSourceFromConfig } from './reso/source.ts';
import { ScaledClock } from './simulator/clock.ts';
import { type Origin, startOrigin } from './simulator/server.ts';
import type { ListingSource } from './source.ts';

export interface ConfiguredUpstream {
  source: ListingSource;
  /** The clock the service runs on: simulated in the demo, real otherwise. */
  clock: Clock;
  /** Clock milliseconds per real millisecond (scales timer delays). */
  speed: number;
  /** The in-process simulator, when the demo runs one. */
  origin: Origin | null;
  close(): Promise<void>;
}

interface DemoRecord {
  seed: number;
  scale: number;
  generatedAt: string;
}

async function demoRecord(store: Store): Promise<DemoRecord | null> {
  const row = await store.db
    .selectFrom('sync_state')
    .select('detail')
    .where('scope', '=', DEMO_SCOPE)
    .executeTakeFirst();
  if (!row?.detail) return null;
  const parsed = JSON.parse(row.detail) as Partial<DemoRecord>;
  if (
    typeof parsed.seed !== 'number' ||
    typeof parsed.scale !== 'number' ||
    typeof parsed.generatedAt !== 'string'
  ) {
    return null;
  }
  return { seed: parsed.seed, scale: parsed.scale, generatedAt: parsed.generatedAt };
}

/**
 * The latest instant the store has seen (refresh times, replication marks):
 * a restarted simulated clock resumes from there, never going back in time.
 */
async function latestKnownInstant(store: Store): Promise<number> {
  const sync = await store.db.selectFrom('sync_state').select('refreshed_at').execute();
  const marks = await store.db.selectFrom('pipeline_state').select('value').execute();
  let latest = 0;
  for (const value of [...sync.map((r) => r.refreshed_at), ...marks.map((r) => r.value)]) {
    const ms = Date.parse(value);
    if (Number.isFinite(ms) && ms > latest) latest = ms;
  }
  return latest;
}

export async function openUpstream(config: Config, store: Store): Promise<ConfiguredUpstream | null> {
  if (config.upstream.url) {
    return {
      source: resoSourceFromConfig(config),
      clock: systemClock,
      speed: 1,
      origin: null,
      close: async () => {},
    };
  }
  if (!config.demo.enabled || !config.simulator.enabled) return null;
  const demo = await demoRecord(store);
  if (!demo) return null;
  const anchor = Math.max(Date.now(), await latestKnownInstant(store));
  const clock = new ScaledClock({ anchor, speed: config.simulator.speed });
  const origin = await startOrigin({
    seed: demo.seed,
    scale: demo.scale,
    start: new Date(demo.generatedAt),
    clock,
    host: '127.0.0.1',
    port: config.simulator.port,
    latency: config.simulator.latency,
    faultRate: config.simulator.faultRate,
    ...(config.upstream.token ? { token: config.upstream.token } : {}),
  });
  return {
    source: resoSourceFromConfig(config, { url: origin.url }),
    clock,
    speed: config.simulator.speed,
    origin,
    close: () => origin.close(),
  };
}
