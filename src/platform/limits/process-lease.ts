import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/tables.ts';

/**
 * A named lease in the store (`process_leases`): at most one process holds it
 * at a time, renewing it by a heartbeat; a holder that dies stops renewing and
 * the lease lapses after `ttlMs`. The same SQL on SQLite and PostgreSQL.
 *
 * Expiry instants are written by the holder's wall clock and compared with the
 * reader's, so hosts sharing a store must keep their clocks within a fraction
 * of `ttlMs` (NTP does).
 */
export interface ProcessLease {
  /** False once another process took the lease (this one stalled past `ttlMs`). */
  held(): boolean;
  /** Stops the heartbeat and gives the lease up at once, so a successor need not wait for it to lapse. */
  release(): Promise<void>;
  /** Where failed and lost renewals are reported from now on (the process logger exists only after the claim). */
  logTo(log: LeaseLog): void;
}

export type LeaseLog = Pick<Logger, 'warn' | 'error' | 'info'>;

export type LeaseClaim =
  | { acquired: true; lease: ProcessLease }
  /** `holder`: who holds it (`host:pid:…`), for the refusal message. */
  | { acquired: false; holder: string };

export interface LeaseOptions {
  /** How long a lease outlives its holder's last heartbeat. */
  ttlMs?: number;
  /** Heartbeat interval; well under `ttlMs` so one missed beat loses nothing. */
  renewEveryMs?: number;
  log?: LeaseLog;
}

export const DEFAULT_LEASE_TTL_MS = 15_000;
export const DEFAULT_LEASE_RENEW_MS = 5_000;
/** How long a release waits for a renewal in flight (a store that hangs must not hold up shutdown). */
const RELEASE_WAIT_MS = 2000;
/** How often a claimant looks at a lease held by another, to see it renewed (live) or lapsed. */
const WATCH_EVERY_MS = 200;

/**
 * Claims the lease `name`. When another process holds it, watches it: renewed
 * (its holder is alive) → refused within one heartbeat; lapsed (its holder
 * died without releasing it) → taken, at most `ttlMs` later.
 */
export async function claimProcessLease(
  db: Kysely<Database>,
  name: string,
  options: LeaseOptions = {},
): Promise<LeaseClaim> {
  const ttlMs = options.ttlMs ?? DEFAULT_LEASE_TTL_MS;
  const renewEveryMs = options.renewEveryMs ?? DEFAULT_LEASE_RENEW_MS;
  const me = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  for (;;) {
    if (await take(db, name, me, ttlMs)) {
      return { acquired: true, lease: new HeartbeatLease(db, name, me, ttlMs, renewEveryMs, options.log) };
    }
    const seen = await readLease(db, name);
    if (!seen) continue; // released between the two statements: try again
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, WATCH_EVERY_MS));
      const current = await readLease(db, name);
      if (!current) break;
      if (current.holder !== seen.holder || current.expires_at !== seen.expires_at) {
        return { acquired: false, holder: current.holder };
      }
      if (current.expires_at < new Date().toISOString()) break;
    }
  }
}

/** Takes the lease if it is free, lapsed or already ours; true when this process holds it now. */
async function take(db: Kysely<Database>, name: string, holder: string, ttlMs: number): Promise<boolean> {
  const now = new Date();
  const row = await db
    .insertInto('process_leases')
    .values({
      name,
      holder,
      expires_at: new Date(now.getTime() + ttlMs).toISOString(),
      renewed_at: now.toISOString(),
    })
    .onConflict((oc) =>
      oc
        .column('name')
        .doUpdateSet((eb) => ({
          holder: eb.ref('excluded.holder'),
          expires_at: eb.ref('excluded.expires_at'),
          renewed_at: eb.ref('excluded.renewed_at'),
        }))
        .where((eb) =>
          eb.or([
            eb('process_leases.holder', '=', holder),
            eb('process_leases.expires_at', '<', now.toISOString()),
          ]),
        ),
    )
    .returning('holder')
    .executeTakeFirst();
  return row?.holder === holder;
}

function readLease(db: Kysely<Database>, name: string) {
  return db
    .selectFrom('process_leases')
    .select(['holder', 'expires_at'])
    .where('name', '=', name)
    .executeTakeFirst();
}

class HeartbeatLease implements ProcessLease {
  private holding = true;
  private readonly timer: NodeJS.Timeout;
  /** The renewal in flight, if any: a slow store never stacks renewals up. */
  private renewing: Promise<void> | null = null;
  /** Whether the last renewal failed for want of a database, so that is logged once per outage. */
  private unreachable = false;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly name: string,
    private readonly me: string,
    private readonly ttlMs: number,
    renewEveryMs: number,
    private log: LeaseLog | undefined,
  ) {
    this.timer = setInterval(() => {
      this.renewing ??= this.renew().finally(() => {
        this.renewing = null;
      });
    }, renewEveryMs);
    this.timer.unref();
  }

  held(): boolean {
    return this.holding;
  }

  logTo(log: LeaseLog): void {
    this.log = log;
  }

  /** Renews (or takes back, once lapsed) the lease; never throws. */
  private async renew(): Promise<void> {
    try {
      const holding = await take(this.db, this.name, this.me, this.ttlMs);
      if (this.unreachable) this.log?.info({ lease: this.name }, 'lease renewed again');
      this.unreachable = false;
      if (holding !== this.holding) {
        if (holding) this.log?.info({ lease: this.name }, 'lease taken back');
        else
          this.log?.error(
            { lease: this.name, holder: (await readLease(this.db, this.name))?.holder },
            'lease lost: another process took it while this one did not renew it',
          );
      }
      this.holding = holding;
    } catch (error) {
      // The database is away: the lease stays ours until another process takes it.
      if (!this.unreachable) this.log?.warn({ err: error, lease: this.name }, 'lease renewal failed');
      this.unreachable = true;
    }
  }

  async release(): Promise<void> {
    clearInterval(this.timer);
    // A renewal in flight could write the lease back after the delete; wait for it, within bounds.
    if (this.renewing) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        this.renewing,
        new Promise((resolve) => {
          timer = setTimeout(resolve, RELEASE_WAIT_MS);
        }),
      ]);
      clearTimeout(timer);
    }
    this.holding = false;
    await this.db
      .deleteFrom('process_leases')
      .where('name', '=', this.name)
      .where('holder', '=', this.me)
      .execute()
      .catch(() => undefined); // unreachable store: the lease lapses by itself
  }
}

/** The lease of a store's embedded limits: whoever holds it is the one process counting without Redis. */
export const EMBEDDED_LIMITS_LEASE = 'embedded-limits';
