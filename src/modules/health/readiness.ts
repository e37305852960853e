/**
 * What a node must have done before it serves at full speed, as components
 * report it. Two kinds of entry:
 *
 * - **Steps** done once by the process that starts the server (schema
 *   migrated, demo loaded): `expect()` them when the start begins, `mark()`
 *   them when done. A step never expected is not waited for (tests and tools
 *   that compose over a prepared store).
 * - **Probes** asked on every readiness question (search index built, market
 *   caches warm): a component that can fall behind again after a data change
 *   answers for itself, so readiness never goes stale.
 *
 * Readiness is about this node's own preparation; the dependencies every
 * request needs (database, limits backend) are probed by `HealthService`.
 * Background progress that does not stop a node serving (history backfill,
 * refresh cycles) is reported beside it, not in it.
 */

/** How one component stands; `detail` says what it is doing while not ready. */
export interface ComponentState {
  readonly ready: boolean;
  readonly detail?: string;
}

/** The names health reports, in this order. */
export const READINESS_COMPONENTS = ['schema', 'demo', 'searchIndex', 'marketCaches'] as const;
export type ReadinessComponent = (typeof READINESS_COMPONENTS)[number];

export class ReadinessRegistry {
  private readonly steps = new Map<ReadinessComponent, ComponentState>();
  private readonly probes = new Map<ReadinessComponent, () => ComponentState>();

  /** A step this process will take: not ready until `mark`ed. */
  expect(name: ReadinessComponent, detail = 'pending'): void {
    this.steps.set(name, { ready: false, detail });
  }

  /** A step done (or failed back to pending with `ready` false and a detail). */
  mark(name: ReadinessComponent, ready = true, detail?: string): void {
    this.steps.set(name, detail === undefined ? { ready } : { ready, detail });
  }

  /** A component that answers for itself; must be cheap and synchronous (asked on every probe). */
  register(name: ReadinessComponent, probe: () => ComponentState): void {
    this.probes.set(name, probe);
  }

  /** Every known component's state; a component neither expected nor registered is ready. */
  states(): Record<ReadinessComponent, ComponentState> {
    const out = {} as Record<ReadinessComponent, ComponentState>;
    for (const name of READINESS_COMPONENTS) out[name] = this.state(name);
    return out;
  }

  /** Names of the components not ready yet, in report order. */
  pending(): ReadinessComponent[] {
    return READINESS_COMPONENTS.filter((name) => !this.state(name).ready);
  }

  private state(name: ReadinessComponent): ComponentState {
    const step = this.steps.get(name);
    if (step && !step.ready) return step;
    const probe = this.probes.get(name);
    if (!probe) return step ?? { ready: true };
    try {
      return probe();
    } catch (error) {
      // A probe that throws must not take health down with it: report it as not ready.
      return {
        ready: false,
        detail: `probe failed: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
  }
}

/** What the search service says of its in-memory index (`SearchService.indexStatus()`). */
export interface SearchIndexStatus {
  ready: boolean;
  version: string | null;
  building: boolean;
}

/** The search index is ready once built for the current data; while not, says whether it is building. */
export function searchIndexProbe(search: { indexStatus(): SearchIndexStatus }): () => ComponentState {
  return () => {
    const status = search.indexStatus();
    if (status.ready) return { ready: true };
    return { ready: false, detail: status.building ? 'building' : 'not built' };
  };
}

/** Market snapshot caches are ready once warm (`MarketService.isWarm()`). */
export function marketCachesProbe(market: { isWarm(): boolean }): () => ComponentState {
  return () => (market.isWarm() ? { ready: true } : { ready: false, detail: 'warming' });
}
