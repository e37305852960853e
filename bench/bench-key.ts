import { openConfiguredStore, prepareStore } from '../src/boot.ts';
import { loadConfig } from '../src/config.ts';
import { LocalSubscriptionProvider } from '../src/modules/keys/subscriptions.ts';
import { systemClock } from '../src/platform/clock.ts';
import type { BenchConfig } from './config.ts';

/**
 * Limits the bench lifts on the service it starts, so a run measures serving,
 * not rate limiting: the bench calls as an INTERNAL key with these windows.
 */
export const BENCH_SERVICE_ENV: Readonly<Record<string, string>> = {
  RATE_LIMIT_INTERNAL: '1000000000',
  MONTHLY_QUOTA_INTERNAL: '1000000000',
};

/**
 * Issues an INTERNAL key into the store the service under test uses (same
 * DATA_DIR / DATABASE_URL), the way `stoop keys create` would.
 */
export async function issueBenchKey(config: BenchConfig): Promise<string> {
  const env: Record<string, string | undefined> = { ...process.env, DATA_DIR: config.dataDir };
  if (config.databaseUrl !== undefined) env.DATABASE_URL = config.databaseUrl;
  const serviceConfig = loadConfig(env);
  const store = await openConfiguredStore(serviceConfig);
  try {
    await prepareStore(store);
    const provider = new LocalSubscriptionProvider(store.db, systemClock, serviceConfig.apiKeyPrefix);
    return (await provider.issue({ accountId: 'bench', tier: 'INTERNAL' })).key;
  } finally {
    await store.close();
  }
}
