import { openConfiguredStore, prepareStore } from '../src/boot.ts';
import { loadConfig } from '../src/config.ts';
import type { Tier } from '../src/domain/tiers.ts';
import { LocalSubscriptionProvider } from '../src/modules/keys/subscriptions.ts';
import { systemClock } from '../src/platform/clock.ts';
import type { BenchConfig } from './config.ts';

/**
 * Limits the bench lifts on the service it starts, so a run measures serving,
 * not rate limiting: the bench calls as an INTERNAL key (and a PRO key for the
 * scenarios that say so) with these windows.
 */
export const BENCH_SERVICE_ENV: Readonly<Record<string, string>> = {
  // The HTTP scenarios measure the read path over a settled store: no market
  // simulator, so no refresh moves the data version mid-run (the refresh
  // pipeline is measured on its own, see pipeline.ts).
  DEMO_UPSTREAM: 'false',
  RATE_LIMIT_INTERNAL: '1000000000',
  MONTHLY_QUOTA_INTERNAL: '1000000000',
  RATE_LIMIT_PRO: '1000000000',
  MONTHLY_QUOTA_PRO: '1000000000',
};

/**
 * Issues a key (INTERNAL unless told) into the store the service under test uses (same
 * DATA_DIR / DATABASE_URL), the way `stoop keys create` would.
 */
export async function issueBenchKey(config: BenchConfig, tier: Tier = 'INTERNAL'): Promise<string> {
  const env: Record<string, string | undefined> = { ...process.env, DATA_DIR: config.dataDir };
  if (config.databaseUrl !== undefined) env.DATABASE_URL = config.databaseUrl;
  const serviceConfig = loadConfig(env);
  const store = await openConfiguredStore(serviceConfig);
  try {
    await prepareStore(store);
    const provider = new LocalSubscriptionProvider(store.db, systemClock, serviceConfig.apiKeyPrefix);
    return (await provider.issue({ accountId: 'bench', tier })).key;
  } finally {
    await store.close();
  }
}
