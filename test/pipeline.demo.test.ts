import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliStore, runStoop } from './support/cli.ts';
import {
  freePort,
  isolatedLimitsEnv,
  type ServerProcess,
  startServerProcess,
} from './support/server-process.ts';

/**
 * The demo as `npm start` runs it: the market simulator in-process, reached
 * over HTTP, on a simulated clock (here one simulated hour per real second, so
 * the 4–6 h search schedule comes round within seconds).
 */
const cli = cliStore('demo-live', {
  ...isolatedLimitsEnv(),
  DEMO: 'true',
  DEMO_SCALE: '0.01',
  SIM_SPEED: '3600',
  SIM_LATENCY: 'false',
});
const env = Object.fromEntries(
  Object.entries(cli.env).filter((entry): entry is [string, string] => entry[1] !== undefined),
);
const stoop = (...args: string[]) => runStoop(cli.env, args);

interface Meta {
  dataAge: string | null;
  source: string;
  refreshTriggered: boolean;
}

describe('the demo is alive: simulator → scheduled refresh → API', () => {
  let server: ServerProcess;
  let businessKey: string;

  beforeAll(async () => {
    server = await startServerProcess({ port: await freePort(), env, timeoutMs: 120_000 });
    const created = await stoop('keys', 'create', '--tier', 'business', '--account', 'demo-live', '--json');
    expect(created.code, created.stderr).toBe(0);
    businessKey = (JSON.parse(created.stdout) as { key: string }).key;
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    rmSync(cli.dataDir, { recursive: true, force: true });
  });

  it('the schedule refreshes search data and logs the market changes it finds', async () => {
    const first = (await (await fetch(`${server.url}/v1/search/rentals?areas=100,300`)).json()) as {
      meta: Meta;
    };
    const startedAge = first.meta.dataAge!;
    let events: string[] = [];
    let latestAge = startedAge;
    // 6 simulated hours is at most 6 real seconds; allow for a slow machine.
    for (let i = 0; i < 60 && (latestAge === startedAge || events.length === 0); i++) {
      await new Promise((r) => setTimeout(r, 1000));
      const body = (await (await fetch(`${server.url}/v1/search/rentals?areas=100,300`)).json()) as {
        meta: Meta;
      };
      latestAge = body.meta.dataAge!;
      const tail = await stoop('events', 'tail', '--limit', '50');
      expect(tail.code, tail.stderr).toBe(0);
      events = tail.stdout.trim().split('\n').filter(Boolean);
    }
    expect(Date.parse(latestAge)).toBeGreaterThan(Date.parse(startedAge));
    expect(events.length).toBeGreaterThan(0);
    const health = (await (await fetch(`${server.url}/v1/health`)).json()) as {
      pipeline: { upstream: string; latestEventSequence: number };
    };
    expect(health.pipeline.upstream).toBe('simulator');
    expect(health.pipeline.latestEventSequence).toBeGreaterThan(0);
    const event = JSON.parse(events[0]!) as { id: string; type: string; data: { listingId: string } };
    expect(event.id).toMatch(/^evt_\d+$/);
    expect(event.type).toMatch(/^listing\./);
    const listing = await fetch(`${server.url}/v1/property/${event.data.listingId}`, {
      headers: { authorization: `Bearer ${businessKey}` },
    });
    expect(listing.status).toBe(200);
  }, 120_000);

  it('Business reads of a listing are fetched live from upstream', async () => {
    const search = (await (await fetch(`${server.url}/v1/search/rentals?areas=100&perPage=1`)).json()) as {
      data: { id: string }[];
    };
    const id = search.data[0]!.id;
    const response = await fetch(`${server.url}/v1/property/${id}`, {
      headers: { authorization: `Bearer ${businessKey}` },
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { meta: Meta };
    expect(body.meta.source).toBe('live');
  });
});
