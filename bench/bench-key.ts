import { loadConfig } from '../src/config.ts';
import type { Tier } from '../src/domain/tiers.ts';
import { LocalSubscriptionProvider, type SubscriptionProvider } from '../src/modules/keys/subscriptions.ts';
import { systemClock } from '../src/platform/clock.ts';
import { openPreparedStore } from '../src/prepared-store.ts';
import type { BenchConfig } from './config.ts';

/**
 * Limits the bench lifts on the service it starts, so a run measures serving,
 * not rate limiting: the bench calls as an INTERNAL key (and a PRO key for the
 * scenarios that say so) with these windows.
 */
export const BENCH_SERVICE_ENV: Readonly<Record<string, string>> = {
  // The HTTP scenarios measure the read path over a settled store: no market
  // simulator, so no refresh moves the data version mid-run (the refresh
  // pipeline is measured on its own, see pipeline.ts; `--during` drives refresh
  // cycles on purpose, see during.ts).
  DEMO_UPSTREAM: 'false',
  RATE_LIMIT_INTERNAL: '1000000000',
  MONTHLY_QUOTA_INTERNAL: '1000000000',
  RATE_LIMIT_PRO: '1000000000',
  MONTHLY_QUOTA_PRO: '1000000000',
};

/** Account the bench's keys belong to, so an operator can tell them apart in `stoop keys list`. */
export const BENCH_ACCOUNT = 'bench';

/** The key store the bench writes to, open for one operation. */
export interface BenchKeyStore {
  readonly provider: Pick<SubscriptionProvider, 'issue' | 'setStatus'>;
  close(): Promise<void>;
}

/**
 * The store the service under test uses (same DATA_DIR / DATABASE_URL),
 * prepared, with the provider `stoop keys` uses.
 */
export function configuredKeyStore(config: BenchConfig): () => Promise<BenchKeyStore> {
  return async () => {
    const env: Record<string, string | undefined> = { ...process.env, DATA_DIR: config.dataDir };
    if (config.databaseUrl !== undefined) env.DATABASE_URL = config.databaseUrl;
    const serviceConfig = loadConfig(env);
    const store = await openPreparedStore(serviceConfig);
    return {
      provider: new LocalSubscriptionProvider(store.db, systemClock, serviceConfig.apiKeyPrefix),
      close: () => store.close(),
    };
  };
}

/**
 * Every key the bench issues goes through here, and `revokeAll` revokes them:
 * a run must not leave working INTERNAL or PRO keys in the user's store, even
 * when it fails or is interrupted (run.ts calls it from its cleanup, which
 * error and signal paths share).
 */
export class BenchKeys {
  private readonly ids: string[] = [];

  constructor(private readonly open: () => Promise<BenchKeyStore>) {}

  /** Ids of the keys issued and not revoked yet. */
  get outstanding(): readonly string[] {
    return [...this.ids];
  }

  /** Issues a key (INTERNAL unless told), the way `stoop keys create` would. */
  async issue(tier: Tier = 'INTERNAL'): Promise<string> {
    const store = await this.open();
    try {
      const issued = await store.provider.issue({ accountId: BENCH_ACCOUNT, tier });
      // Recorded before anything else can fail, so it is revoked whatever happens next.
      this.ids.push(issued.id);
      return issued.key;
    } finally {
      await store.close();
    }
  }

  /**
   * Revokes every key issued so far, in one store session; returns how many.
   * Safe to call again (nothing left to do) and concurrently with itself.
   */
  async revokeAll(): Promise<number> {
    const ids = this.ids.splice(0);
    if (ids.length === 0) return 0;
    let store: BenchKeyStore;
    try {
      store = await this.open();
    } catch (error) {
      // Not revoked: keep them for a later attempt and let the caller say so.
      this.ids.unshift(...ids);
      throw error;
    }
    const failed: string[] = [];
    try {
      for (const id of ids) {
        try {
          await store.provider.setStatus(id, 'revoked');
        } catch {
          failed.push(id);
        }
      }
    } finally {
      await store.close();
    }
    if (failed.length > 0) {
      this.ids.unshift(...failed);
      throw new Error(`could not revoke ${failed.length} bench key(s): ${failed.join(', ')}`);
    }
    return ids.length;
  }
}
