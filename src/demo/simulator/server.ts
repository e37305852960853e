/**
 * The market simulator over real HTTP: the demo market served as a RESO Web
 * API (OData 4) service at `{origin}/odata`, evolving on a simulated clock.
 *
 * Resources (see reso/resources.ts for the fields):
 * - `GET /odata/Property` — pages ordered by (ModificationTimestamp, ListingKey);
 *   `$filter` (the subset in filter.ts), `$select`, `$top` (≤ 5000, default
 *   1000), `$orderby` (only `ModificationTimestamp,ListingKey`), `$expand`
 *   (`Media`, `OpenHouse`), `$skiptoken` (from `@odata.nextLink`);
 * - `GET /odata/Property('key')` — one listing, full record;
 * - `GET /odata/Building`, `GET /odata/Building('key')` — the local Building
 *   resource, same conventions (`BuildingKey`, `$expand=Media`);
 * - `GET /health` — liveness and the simulated time (no auth, no faults).
 * Unknown query options, properties or syntax answer 400 with an OData error.
 *
 * Realism knobs: latency (a single-record read waits 0.5–3 s, a page
 * 20–150 ms, an expanded page 50–400 ms; all × `latencyScale`), faults (a
 * `faultRate` share of requests fails: half hang until the client gives up or
 * `maxHangMs` passes and the connection is dropped, half answer 500 or 503),
 * and an optional bearer token. Latency and faults draw from one stream seeded
 * by `faultSeed`, four draws per request, so a run is reproducible given the
 * order of requests.
 */
import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Clock } from '../../platform/clock.ts';
import {
  encodeBuilding,
  encodeListing,
  encodeListingSummary,
  PROPERTY_TYPES,
} from '../../upstream/reso/mapping.ts';
import {
  PROPERTY_EXPANSIONS,
  type ResoBuilding,
  ResoBuildingSchema,
  ResoPropertyDetailSchema,
  ResoPropertySummarySchema,
} from '../../upstream/reso/resources.ts';
import { Rng } from '../market/random.ts';
import { ScaledClock } from './clock.ts';
import {
  evaluate,
  type FieldValue,
  FilterError,
  type FilterNode,
  filterFields,
  lowerBound,
  parseFilter,
} from './filter.ts';
import { MarketSimulator, type SimListing } from './simulator.ts';

export const DEFAULT_TOP = 1000;
export const MAX_TOP = 5000;

export interface OriginOptions {
  seed: number;
  scale: number;
  /** Simulated start instant (T0): the demo load's `now`. Default: the clock's now, else the real now. */
  start?: Date;
  /** Simulated time; default a ScaledClock from `start` at `speed`. */
  clock?: Clock;
  /** Simulated seconds per real second when no clock is given (default 60). */
  speed?: number;
  /** Reuse a simulator (its seed, scale, start and clock win). */
  simulator?: MarketSimulator;
  host?: string;
  /** 0 (default): any free port. */
  port?: number;
  /** Require `Authorization: Bearer <token>`. */
  token?: string | undefined;
  /** Inject response latency (default true). */
  latency?: boolean;
  /** Multiplies every injected latency (tests shrink it). Default 1. */
  latencyScale?: number;
  /** Share of requests that fail, 0–1 (default 0). */
  faultRate?: number;
  /** Budget of the served-record cache, in characters of JSON (default 64M; 0 disables it). */
  cacheChars?: number;
  /** Seed of the latency and fault draws (default `seed`). */
  faultSeed?: number;
  /** How long a hanging request is held before its connection is dropped (default 30 s). */
  maxHangMs?: number;
}

export interface Origin {
  /** The service root, e.g. `http://127.0.0.1:40123/odata`: UPSTREAM_URL for the RESO source. */
  url: string;
  simulator: MarketSimulator;
  /** Requests answered or failed so far, by outcome (observability and tests). */
  stats: { requests: number; hung: number; errors: number };
  close(): Promise<void>;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const badRequest = (message: string) => new HttpError(400, 'BadRequest', message);

const PROPERTY_FIELDS = new Set([
  ...Object.keys(ResoPropertySummarySchema.properties),
  ...Object.keys(ResoPropertyDetailSchema.properties),
]);
for (const navigation of PROPERTY_EXPANSIONS) PROPERTY_FIELDS.delete(navigation);
const SUMMARY_FIELDS: ReadonlySet<string> = new Set(Object.keys(ResoPropertySummarySchema.properties));
const BUILDING_FIELDS = new Set(Object.keys(ResoBuildingSchema.properties));
BUILDING_FIELDS.delete('Media');

interface ResourceSpec {
  name: 'Property' | 'Building';
  key: 'ListingKey' | 'BuildingKey';
  fields: ReadonlySet<string>;
  expansions: ReadonlySet<string>;
}

const PROPERTY: ResourceSpec = {
  name: 'Property',
  key: 'ListingKey',
  fields: PROPERTY_FIELDS,
  expansions: new Set(PROPERTY_EXPANSIONS),
};
const BUILDING: ResourceSpec = {
  name: 'Building',
  key: 'BuildingKey',
  fields: BUILDING_FIELDS,
  expansions: new Set(['Media']),
};

interface CollectionQuery {
  filter: FilterNode | null;
  select: readonly string[] | null;
  expand: readonly string[];
  top: number;
  after: { at: number; id: string } | null;
  /** The raw query minus $skiptoken, to build the next link from. */
  rest: string;
}

/** Splits a query string without turning '+' into a space (OData literals such as +05:00 keep it). */
function queryParts(search: string): [string, string, string][] {
  if (search === '' || search === '?') return [];
  return search
    .replace(/^\?/, '')
    .split('&')
    .filter((part) => part !== '')
    .map((part) => {
      const eq = part.indexOf('=');
      const rawKey = eq < 0 ? part : part.slice(0, eq);
      const rawValue = eq < 0 ? '' : part.slice(eq + 1);
      try {
        return [decodeURIComponent(rawKey), decodeURIComponent(rawValue), part];
      } catch {
        throw badRequest(`query parameter "${rawKey}" is not valid percent-encoding`);
      }
    });
}

function list(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

function encodeToken(at: number, id: string): string {
  return Buffer.from(JSON.stringify([at, id])).toString('base64url');
}

function decodeToken(token: string): { at: number; id: string } {
  try {
    const value = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(value) && typeof value[0] === 'number' && typeof value[1] === 'string') {
      return { at: value[0], id: value[1] };
    }
  } catch {
    // Reported below.
  }
  throw badRequest('$skiptoken is not a token this service issued');
}

function parseCollectionQuery(spec: ResourceSpec, search: string): CollectionQuery {
  const query: CollectionQuery = {
    filter: null,
    select: null,
    expand: [],
    top: DEFAULT_TOP,
    after: null,
    rest: '',
  };
  const rest: string[] = [];
  for (const [key, value, raw] of queryParts(search)) {
    if (key !== '$skiptoken') rest.push(raw);
    switch (key) {
      case '$filter':
        try {
          query.filter = parseFilter(value, spec.fields);
        } catch (error) {
          if (error instanceof FilterError) throw badRequest(`$filter: ${error.message}`);
          throw error;
        }
        break;
      case '$select':
        query.select = parseSelect(spec, value);
        break;
      case '$expand':
        query.expand = parseExpand(spec, value);
        break;
      case '$top':
        if (!/^\d+$/.test(value) || Number(value) < 1) throw badRequest('$top must be a positive integer');
        query.top = Math.min(MAX_TOP, Number(value));
        break;
      case '$orderby': {
        const order = list(value).map((term) => term.replace(/\s+asc$/i, ''));
        if (
          order.join(',') !== `ModificationTimestamp,${spec.key}` &&
          order.join(',') !== 'ModificationTimestamp'
        ) {
          throw badRequest(`$orderby: only "ModificationTimestamp,${spec.key}" (ascending) is supported`);
        }
        break;
      }
      case '$skiptoken':
        query.after = decodeToken(value);
        break;
      default:
        if (key.startsWith('$')) throw badRequest(`query option ${key} is not supported`);
    }
  }
  query.rest = rest.join('&');
  return query;
}

function parseSelect(spec: ResourceSpec, value: string): string[] {
  const fields = list(value);
  for (const field of fields) {
    if (!spec.fields.has(field)) throw badRequest(`$select: unknown property ${field}`);
  }
  if (!fields.includes(spec.key)) fields.unshift(spec.key);
  return fields;
}

function parseExpand(spec: ResourceSpec, value: string): string[] {
  const expansions = list(value);
  for (const expansion of expansions) {
    if (!spec.expansions.has(expansion))
      throw badRequest(`$expand: ${spec.name} has no navigation ${expansion}`);
  }
  return expansions;
}

/** Only the selected properties (all structural ones when none) and the expanded navigations. */
function project(
  record: Readonly<Record<string, unknown>>,
  spec: ResourceSpec,
  select: readonly string[] | null,
  expand: readonly string[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of select ?? spec.fields) if (field in record) out[field] = record[field];
  for (const navigation of expand) out[navigation] = record[navigation] ?? [];
  return out;
}

function entityParams(spec: ResourceSpec, search: string): { select: string[] | null; expand: string[] } {
  let select: string[] | null = null;
  let expand: string[] = [];
  for (const [key, value] of queryParts(search)) {
    if (key === '$select') select = parseSelect(spec, value);
    else if (key === '$expand') expand = parseExpand(spec, value);
    else if (key.startsWith('$'))
      throw badRequest(`query option ${key} is not supported on a single ${spec.name}`);
  }
  return { select, expand };
}

/**
 * Serialized records by (listing, ModificationTimestamp, projection): a record
 * only changes with its ModificationTimestamp, so repeated page-throughs and
 * re-reads cost a lookup. Least recently used entries go past the budget.
 */
class RecordCache {
  private readonly entries = new Map<string, string>();
  private chars = 0;

  constructor(private readonly budget: number) {}

  get(key: string): string | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: string, value: string): void {
    if (this.budget <= 0 || value.length > this.budget) return;
    const old = this.entries.get(key);
    if (old !== undefined) {
      this.chars -= old.length;
      this.entries.delete(key);
    }
    this.entries.set(key, value);
    this.chars += value.length;
    for (const [oldest, text] of this.entries) {
      if (this.chars <= this.budget) break;
      this.entries.delete(oldest);
      this.chars -= text.length;
    }
  }
}

const PATH = /^\/odata\/(Property|Building)(?:\('((?:[^']|'')*)'\))?\/?$/;

class OriginHandler {
  readonly stats = { requests: 0, hung: 0, errors: 0 };
  private readonly rng: Rng;
  private readonly hanging = new Set<NodeJS.Timeout>();
  private readonly buildingRecords = new Map<string, ResoBuilding>();
  private readonly cache: RecordCache;
  /** Projection variants, numbered: cache keys stay short. */
  private readonly variants = new Map<string, number>();
  root = '';

  constructor(
    private readonly simulator: MarketSimulator,
    private readonly options: OriginOptions,
  ) {
    this.rng = new Rng(options.faultSeed ?? options.seed, 'origin');
    this.cache = new RecordCache(options.cacheChars ?? 64_000_000);
  }

  private variant(select: readonly string[] | null, expand: readonly string[]): number {
    const key = `${select?.join(',') ?? '*'}|${expand.join(',')}`;
    let id = this.variants.get(key);
    if (id === undefined) {
      id = this.variants.size;
      this.variants.set(key, id);
    }
    return id;
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://origin.invalid');
    if (url.pathname === '/health') {
      this.send(res, 200, { status: 'ok', simulatedTime: new Date(this.simulator.now()).toISOString() });
      return;
    }
    this.stats.requests++;
    if (req.method !== 'GET') {
      this.error(res, new HttpError(405, 'MethodNotAllowed', 'only GET is supported'));
      return;
    }
    if (this.options.token && !this.authorized(req.headers.authorization)) {
      res.setHeader('www-authenticate', 'Bearer');
      this.error(res, new HttpError(401, 'Unauthorized', 'a valid bearer token is required'));
      return;
    }
    // Four draws per request, whatever happens: the sequence depends only on the request count.
    const faultDraw = this.rng.next();
    const hangDraw = this.rng.next();
    const codeDraw = this.rng.next();
    const latencyDraw = this.rng.next();
    if (faultDraw < (this.options.faultRate ?? 0)) {
      if (hangDraw < 0.5) {
        this.hang(req);
        return;
      }
      this.stats.errors++;
      const status = codeDraw < 0.5 ? 500 : 503;
      this.error(res, new HttpError(status, 'ServiceUnavailable', 'injected fault'));
      return;
    }
    const match = PATH.exec(url.pathname);
    const isEntity = match?.[2] !== undefined;
    if (this.options.latency !== false) {
      const expanded = url.searchParams.has('$expand');
      const [lo, hi] = isEntity ? [500, 3000] : expanded ? [50, 400] : [20, 150];
      await sleep((lo + (hi - lo) * latencyDraw) * (this.options.latencyScale ?? 1));
    }
    try {
      if (url.pathname === '/odata' || url.pathname === '/odata/') {
        this.send(res, 200, {
          '@odata.context': `${this.root}/$metadata`,
          value: ['Property', 'Building'].map((name) => ({ name, kind: 'EntitySet', url: name })),
        });
        return;
      }
      if (!match) throw new HttpError(404, 'NotFound', `no resource at ${url.pathname}`);
      const spec = match[1] === 'Property' ? PROPERTY : BUILDING;
      const key = match[2]?.replace(/''/g, "'");
      if (key !== undefined) this.entity(res, spec, key, url.search);
      else if (spec === PROPERTY) this.properties(res, url.search);
      else this.buildings(res, url.search);
    } catch (error) {
      if (error instanceof HttpError) this.error(res, error);
      else throw error;
    }
  }

  private authorized(header: string | undefined): boolean {
    const expected = Buffer.from(`Bearer ${this.options.token}`);
    const given = Buffer.from(header ?? '');
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  private hang(req: IncomingMessage): void {
    this.stats.hung++;
    const timer = setTimeout(() => {
      this.hanging.delete(timer);
      req.socket.destroy();
    }, this.options.maxHangMs ?? 30_000);
    this.hanging.add(timer);
    req.socket.once('close', () => {
      clearTimeout(timer);
      this.hanging.delete(timer);
    });
  }

  private properties(res: ServerResponse, search: string): void {
    const query = parseCollectionQuery(PROPERTY, search);
    const simulator = this.simulator;
    simulator.at();
    const filter = query.filter;
    // Summary pages skip encoding the detail page unless the filter reads it.
    const needed = [...(query.select ?? PROPERTY_FIELDS), ...query.expand, ...filterFields(filter)];
    const summaryOnly = needed.every((field) => SUMMARY_FIELDS.has(field));
    const records = new Map<SimListing, Record<string, unknown>>();
    const record = (listing: SimListing) => {
      let r = records.get(listing);
      if (!r) {
        if (summaryOnly) {
          const summary = simulator.observeSummary(listing);
          r = encodeListingSummary(summary.listing, summary.openHouseStarts) as unknown as Record<
            string,
            unknown
          >;
        } else r = encodeListing(simulator.observe(listing)) as unknown as Record<string, unknown>;
        records.set(listing, r);
      }
      return r;
    };
    const predicate = filter
      ? (listing: SimListing) =>
          evaluate(filter, (field): FieldValue => {
            // Fields the index knows answer without generating the record.
            switch (field) {
              case 'ListingKey':
                return listing.id;
              case 'ModificationTimestamp':
                return listing.modifiedAt;
              case 'OriginalEntryTimestamp':
                return listing.listedAt;
              case 'StandardStatus':
                return simulator.standardStatus(listing);
              case 'PropertyType':
                return PROPERTY_TYPES[listing.kind];
              case 'STOOP_BuildingId':
                return listing.buildingId;
              default:
                return record(listing)[field] as FieldValue;
            }
          })
      : () => true;
    const page = simulator.page({
      since: lowerBound(filter, 'ModificationTimestamp'),
      after: query.after,
      top: query.top,
      predicate,
    });
    const variant = this.variant(query.select, query.expand);
    const json = page.items.map((listing) => {
      const key = `${listing.id}|${listing.modifiedAt}|${variant}`;
      let text = this.cache.get(key);
      if (text === undefined) {
        text = JSON.stringify(project(record(listing), PROPERTY, query.select, query.expand));
        this.cache.set(key, text);
      }
      return text;
    });
    const last = page.items.at(-1);
    const next =
      page.more && last
        ? `${this.root}/Property?${query.rest}${query.rest ? '&' : ''}$skiptoken=${encodeToken(last.modifiedAt, last.id)}`
        : null;
    this.sendRaw(
      res,
      `{"@odata.context":${JSON.stringify(`${this.root}/$metadata#Property`)},"value":[${json.join(',')}]${
        next ? `,"@odata.nextLink":${JSON.stringify(next)}` : ''
      }}`,
    );
  }

  private buildingRecord(id: string): ResoBuilding | null {
    let record = this.buildingRecords.get(id);
    if (!record) {
      const building = this.simulator.buildings().find((b) => b.building.id === id);
      if (!building) return null;
      record = encodeBuilding(building);
      this.buildingRecords.set(id, record);
    }
    return record;
  }

  private buildings(res: ServerResponse, search: string): void {
    const query = parseCollectionQuery(BUILDING, search);
    const modifiedAt = this.simulator.start.getTime();
    const filter = query.filter;
    const items: ResoBuilding[] = [];
    let more = false;
    for (const building of this.simulator.buildings()) {
      const id = building.building.id;
      if (
        query.after &&
        (modifiedAt < query.after.at || (modifiedAt === query.after.at && id <= query.after.id))
      ) {
        continue;
      }
      const record = this.buildingRecord(id)!;
      if (
        filter &&
        !evaluate(filter, (field) =>
          field === 'ModificationTimestamp'
            ? modifiedAt
            : (record[field as keyof ResoBuilding] as FieldValue),
        )
      ) {
        continue;
      }
      if (items.length === query.top) {
        more = true;
        break;
      }
      items.push(record);
    }
    const json = items.map((r) =>
      JSON.stringify(project(r as unknown as Record<string, unknown>, BUILDING, query.select, query.expand)),
    );
    const last = items.at(-1);
    const next =
      more && last
        ? `${this.root}/Building?${query.rest}${query.rest ? '&' : ''}$skiptoken=${encodeToken(modifiedAt, last.BuildingKey)}`
        : null;
    this.sendRaw(
      res,
      `{"@odata.context":${JSON.stringify(`${this.root}/$metadata#Building`)},"value":[${json.join(',')}]${
        next ? `,"@odata.nextLink":${JSON.stringify(next)}` : ''
      }}`,
    );
  }

  private entity(res: ServerResponse, spec: ResourceSpec, key: string, search: string): void {
    const { select, expand } = entityParams(spec, search);
    let record: Record<string, unknown> | null = null;
    if (spec === PROPERTY) {
      this.simulator.at();
      const listing = this.simulator.find(key);
      if (listing)
        record = encodeListing(this.simulator.observe(listing)) as unknown as Record<string, unknown>;
    } else {
      record = this.buildingRecord(key) as unknown as Record<string, unknown> | null;
    }
    if (!record) throw new HttpError(404, 'NotFound', `${spec.name} ${key} does not exist`);
    this.send(res, 200, {
      '@odata.context': `${this.root}/$metadata#${spec.name}/$entity`,
      ...project(record, spec, select, expand),
    });
  }

  private send(res: ServerResponse, status: number, body: unknown): void {
    this.sendRaw(res, JSON.stringify(body), status);
  }

  private sendRaw(res: ServerResponse, body: string, status = 200): void {
    res.writeHead(status, {
      'content-type': 'application/json; odata.metadata=minimal',
      'odata-version': '4.0',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
  }

  private error(res: ServerResponse, error: HttpError): void {
    this.send(res, error.status, { error: { code: error.code, message: error.message } });
  }

  closeHanging(): void {
    for (const timer of this.hanging) clearTimeout(timer);
    this.hanging.clear();
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Starts the simulator's HTTP server; resolves once it listens. */
export async function startOrigin(options: OriginOptions): Promise<Origin> {
  let simulator = options.simulator;
  if (!simulator) {
    const start = options.start ?? options.clock?.now() ?? new Date();
    const clock = options.clock ?? new ScaledClock({ anchor: start, speed: options.speed ?? 60 });
    simulator = await MarketSimulator.create({ seed: options.seed, scale: options.scale, start, clock });
  }
  const handler = new OriginHandler(simulator, options);
  const server: Server = createServer((req, res) => {
    handler.handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 'InternalError', message: (error as Error).message } }));
      } else res.destroy();
    });
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  handler.root = `${origin}/odata`;
  return {
    url: handler.root,
    simulator,
    stats: handler.stats,
    close: async () => {
      handler.closeHanging();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
