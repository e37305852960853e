import { FRESHNESS_MS, type Tier } from './tiers.ts';

export type DataSource = 'cached' | 'stale' | 'live';

/** The freshness part of every data response's `meta` (SPEC "Response envelope"). */
export interface Freshness {
  dataAge: string | null;
  source: DataSource;
  /** The caller's threshold for this kind of data, in seconds. */
  freshnessThreshold: number;
  refreshTriggered: boolean;
  detailScraped: boolean;
}

export interface FreshnessInput {
  tier: Tier;
  kind: 'search' | 'detail';
  /** When the served data was last refreshed from upstream; null when never. */
  refreshedAt: string | null;
  now: Date;
  live?: boolean;
  refreshTriggered?: boolean;
  detailScraped?: boolean;
}

/** Classifies served data against the caller's tier threshold. */
export function describeFreshness(input: FreshnessInput): Freshness {
  const thresholdMs = FRESHNESS_MS[input.tier][input.kind];
  let source: DataSource;
  if (input.live) source = 'live';
  else if (input.refreshedAt === null) source = 'stale';
  else source = input.now.getTime() - Date.parse(input.refreshedAt) > thresholdMs ? 'stale' : 'cached';
  return {
    dataAge: input.refreshedAt,
    source,
    freshnessThreshold: Math.round(thresholdMs / 1000),
    refreshTriggered: input.refreshTriggered ?? false,
    detailScraped: input.detailScraped ?? false,
  };
}

/** What a read service answers: the data and the freshness part of its `meta`. */
export interface Served<T> {
  data: T;
  meta: Freshness;
}

/** A record as served: its data already serialized (UTF-8 JSON), and its meta. */
export interface ServedJson {
  json: Buffer;
  meta: Freshness;
}
