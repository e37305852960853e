import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { appendEvents, type ListingEventInput, lockEventLog } from '../../src/modules/events/event-log.ts';
import type { Clock } from '../../src/platform/clock.ts';
import type { Store } from '../../src/platform/db/database.ts';

/** One request a receiver got, with what verification made of it. */
export interface ReceivedDelivery {
  at: number;
  headers: Record<string, string>;
  body: string;
  /** The parsed payload when a signature verified with one of the receiver's secrets; else undefined. */
  verified: unknown;
  /** Which of the receiver's secrets verified it (index), or -1. */
  verifiedWith: number;
}

/** What to answer to the n-th request (0-based): a status, optional headers and body, optional delay. */
export interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  delayMs?: number;
}

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>/<path>` */
  url: string;
  received: ReceivedDelivery[];
  /** The secrets deliveries are verified with (set after the subscription is created). */
  secrets: string[];
  /** The most requests it has had open at once (arrived, not yet answered). */
  peakOpen(): number;
  /** Resolves once `count` requests have arrived (rejects after `withinMs`). */
  waitFor(count: number, withinMs?: number): Promise<ReceivedDelivery[]>;
  close(): Promise<void>;
}

/**
 * Verifies like a receiver does (`standardwebhooks`' `Webhook.verify`), with
 * "now" read from `clock`: the library checks the timestamp against
 * `Date.now()`, and the tests' wall clock is a manual one.
 */
function verifyAt(clock: Clock, secret: string, body: string, headers: Record<string, string>): unknown {
  const realNow = Date.now;
  Date.now = () => clock.now().getTime();
  try {
    return new Webhook(secret).verify(body, headers);
  } finally {
    Date.now = realNow;
  }
}

/**
 * A real HTTP receiver on 127.0.0.1 (never another address): records every
 * request, verifies its signature, answers by `answer(n)` (default 200).
 */
export async function startReceiver(
  clock: Clock,
  answer: (n: number, request: IncomingMessage) => Answer = () => ({ status: 200 }),
): Promise<WebhookReceiver> {
  const received: ReceivedDelivery[] = [];
  const secrets: string[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  let n = 0;
  let open = 0;
  let peakOpen = 0;
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    open++;
    peakOpen = Math.max(peakOpen, open);
    response.once('close', () => {
      open--;
    });
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(request.headers)) if (typeof v === 'string') headers[k] = v;
      let verified: unknown;
      let verifiedWith = -1;
      secrets.forEach((secret, i) => {
        if (verifiedWith !== -1) return;
        try {
          verified = verifyAt(clock, secret, body, headers);
          verifiedWith = i;
        } catch {
          // not this secret
        }
      });
      received.push({ at: Date.now(), headers, body, verified, verifiedWith });
      for (const w of waiters.filter((w) => received.length >= w.count)) w.resolve();
      const reply = answer(n++, request);
      const send = () => {
        if (response.destroyed) return;
        response.writeHead(reply.status, reply.headers ?? {});
        response.end(reply.body ?? '');
      };
      if (reply.delayMs) setTimeout(send, reply.delayMs).unref();
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    secrets,
    peakOpen: () => peakOpen,
    waitFor: (count, withinMs = 10_000) =>
      new Promise((resolve, reject) => {
        if (received.length >= count) return resolve(received);
        const timer = setTimeout(
          () => reject(new Error(`receiver got ${received.length} of ${count} deliveries`)),
          withinMs,
        );
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve(received);
          },
        });
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Appends events to the log as the refresh pipeline does (locked, in one transaction). */
export async function appendTestEvents(
  store: Store,
  events: readonly Partial<ListingEventInput>[],
  recordedAt: string,
): Promise<void> {
  await store.db.transaction().execute(async (trx) => {
    await lockEventLog(trx, store.dialect);
    await appendEvents(
      trx,
      events.map((e, i) => ({
        type: 'listing.created',
        listingId: `test-listing-${i}`,
        buildingId: 'test-building',
        listingType: 'rental',
        oldValue: null,
        newValue: { status: 'ACTIVE', price: 3000 },
        occurredAt: recordedAt,
        ...e,
        areaId: e.areaId ?? null,
      })),
      recordedAt,
    );
  });
}
