import type { Config } from './config.ts';
import type { MarketSnapshotJob } from './jobs/market-snapshots.ts';
import type { AreasService } from './modules/areas/areas.service.ts';
import type { DataVersion } from './modules/freshness/data-version.ts';
import type { RefreshPort } from './modules/freshness/refresh-port.ts';
import type { SubscriptionProvider } from './modules/keys/subscriptions.ts';
import type { MarketService } from './modules/market/market.service.ts';
import type { MarketTrends } from './modules/market/trends.ts';
import type { SearchService } from './modules/search/search.service.ts';
import type { Clock } from './platform/clock.ts';
import type { Store } from './platform/db/database.ts';
import type { Limits } from './platform/limits/limits.ts';
import type { AreaTree } from './reference/areas.ts';

/** Everything route modules may use, built once at boot by `createContext`. */
export interface AppContext {
  readonly config: Config;
  readonly store: Store;
  readonly clock: Clock;
  readonly areaTree: AreaTree;
  readonly dataVersion: DataVersion;
  readonly areas: AreasService;
  readonly search: SearchService;
  readonly market: MarketService;
  readonly marketTrends: MarketTrends;
  /** Materializes daily market snapshots; started by the server (boot.ts), run directly by tests. */
  readonly marketSnapshots: MarketSnapshotJob;
  readonly subscriptions: SubscriptionProvider;
  readonly limits: Limits;
  /** The refresh pipeline as read paths see it (background and live refreshes). */
  readonly refresher: RefreshPort;
}
