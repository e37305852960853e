import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  freePort,
  isolatedLimitsEnv,
  type ServerProcess,
  startServerProcess,
} from './support/server-process.ts';
import { TEST_DIALECT } from './support/store.ts';

const ROOT = resolve(import.meta.dirname, '..');
const dataDir = mkdtempSync(join(tmpdir(), 'stoop-demo-live-'));

/**
 * The demo as `npm start` runs it: the market simulator in-process, reached
 * over HTTP, on a simulated clock (here one simulated hour per real second, so
 * the 4–6 h search schedule comes round within seconds).
 */
const env: Record<string, string> = {
  ...isolatedLimitsEnv(),
  DATA_DIR: dataDir,
  DATABASE_URL:
    TEST_DIALECT === 'postgres' ? process.env.DATABASE_URL! : `sqlite:${join(dataDir, 'stoop.sqlite')}`,
  DEMO: 'true',
  DEMO_SCALE: '0.01',
  SIM_SPEED: '3600',
  SIM_LATENCY: 'false',
};

function stoop(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/cli.ts', ...args],
      { cwd: ROOT, env: { ...process.env, ...env, LOG_LEVEL: 'silent' }, timeout: 60_000 },
      (error, stdout, stderr) =>
        done({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
    );
  });
}

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
    rmSync(dataDir, { recursive: true, force: true });
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
