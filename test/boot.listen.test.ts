import { rmSync, writeFileSync } from 'node:fs';
import { Agent, type IncomingHttpHeaders, request } from 'node:http';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../src/boot.ts';
import { loadConfig } from '../src/config.ts';
import type { ErrorBody } from '../src/http/errors.ts';
import { type Health, HealthResponse } from '../src/modules/health/health.schema.ts';
import { expectSchema } from './support/schema.ts';
import { freePort, isolatedLimitsEnv, serverStore } from './support/server-process.ts';

/**
 * `npm start` binds its port first (src/http/starting.ts): while the demo
 * market loads, health answers with progress and everything else is a 503
 * saying so; then the application takes the same socket over. Real HTTP
 * against `startServer`, on the dialect under test.
 */

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** The connection it came on, to tell a kept-alive one from a new one. */
  socket: Socket;
}

function get(
  base: string,
  path: string,
  agent: Agent,
  headers: Record<string, string> = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { agent, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, socket: req.socket! }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const json = <T>(answer: Answer): T => JSON.parse(answer.body) as T;

const place = serverStore('listen');
let server: RunningServer | undefined;

afterAll(async () => {
  await server?.close();
  rmSync(place.dataDir, { recursive: true, force: true });
});

describe('the port of a starting node', () => {
  it('answers health and "starting" 503s while the demo loads, then the app takes the same socket over', async () => {
    const config = loadConfig({
      ...place.env,
      ...isolatedLimitsEnv(),
      DEMO: 'true',
      // Small enough to be quick, large enough to be seen loading (it takes a second or more).
      DEMO_SCALE: '0.05',
      DEMO_UPSTREAM: 'false',
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'silent',
    });
    let base = '';
    const starting = startServer(config, {
      onStarting: (url) => {
        base = url;
      },
    });
    let started = false;
    let failed: unknown;
    const done = starting.then(
      (running) => {
        server = running;
        started = true;
      },
      (error: unknown) => {
        failed = error;
      },
    );
    while (base === '' && !started && failed === undefined)
      await new Promise((resolve) => setTimeout(resolve, 2));
    expect(failed).toBeUndefined();
    expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    // One kept-alive connection, polled every few ms across the whole start and the swap.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const failures: unknown[] = [];
    let loadingHealth: Health | undefined;
    let startingSearch: Answer | undefined;
    let startingReady: Answer | undefined;
    let lastStarting: Answer | undefined;
    let firstServed: Answer | undefined;
    let polls = 0;
    let afterServed = 0;
    while (afterServed < 20 && failed === undefined) {
      try {
        const home = await get(base, '/', agent, { accept: 'application/json' });
        polls += 1;
        if (home.status === 503) {
          expect(firstServed, 'a starting answer after the application served').toBeUndefined();
          lastStarting = home;
        } else {
          expect(home.status).toBe(200);
          firstServed ??= home;
        }
        if (firstServed) afterServed += 1;
        if (loadingHealth === undefined && !started) {
          const health = await get(base, '/v1/health', agent);
          expect(health.status).toBe(200);
          const body = json<Health>(health);
          if (!body.readiness.components.demo.ready) {
            loadingHealth = body;
            expectSchema(HealthResponse, body);
            startingSearch = await get(base, '/v1/search/rentals?perPage=1', agent);
            startingReady = await get(base, '/v1/health/ready', agent);
          }
        }
      } catch (error) {
        failures.push(error);
        if (failures.length > 5) break;
      }
      await new Promise((resolve) => setTimeout(resolve, 3));
    }
    await done;
    expect(failed).toBeUndefined();
    expect(failures).toEqual([]);
    expect(polls).toBeGreaterThan(20);

    // While loading: live, not ready, the demo component saying so.
    expect(loadingHealth, 'health was never seen while the demo loaded').toBeDefined();
    expect(loadingHealth).toMatchObject({ live: true, ready: false, status: 'ok' });
    expect(loadingHealth!.readiness.pending).toContain('demo');
    expect(loadingHealth!.readiness.components.schema).toEqual({ ready: true });
    expect(loadingHealth!.readiness.components.demo.detail).toMatch(/^loading( \d+%)?$/);

    // Everything else: 503 in the envelope, with Retry-After and the request id.
    expect(startingSearch!.status).toBe(503);
    expect(startingSearch!.headers['retry-after']).toBe('5');
    const requestId = startingSearch!.headers['x-request-id'];
    expect(requestId).toBeTruthy();
    const error = json<ErrorBody>(startingSearch!).error;
    expect(error).toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      status: 503,
      requestId,
      retryAfter: 5,
      docs: `${config.publicUrl}/docs#/Errors/SERVICE_UNAVAILABLE`,
    });
    expect(error.message).toMatch(
      /^Stoop is starting: loading the demo market( \(\d+%\))?\. Retry shortly; GET \/v1\/health shows progress\.$/,
    );
    expect(startingReady!.status).toBe(503);
    expect(startingReady!.headers['retry-after']).toBe('1');
    expect(json<ErrorBody>(startingReady!).error).toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      details: { pending: expect.arrayContaining(['demo']) },
    });

    // The swap: the connection that got "starting" answers carried on with the application.
    expect(lastStarting).toBeDefined();
    expect(firstServed).toBeDefined();
    expect(firstServed!.socket).toBe(lastStarting!.socket);
    expect(server!.url).toBe(base);

    // Served: the same URL answers, and health turns ready once the index and caches are.
    const search = await get(base, '/v1/search/rentals?perPage=1', agent);
    expect(search.status, search.body).toBe(200);
    let health = json<Health>(await get(base, '/v1/health', agent));
    for (let i = 0; i < 600 && !health.ready; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      health = json<Health>(await get(base, '/v1/health', agent));
    }
    expect(health).toMatchObject({ live: true, ready: true, readiness: { pending: [] } });
    expect((await get(base, '/v1/health/ready', agent)).status).toBe(200);

    // Closing with a kept-alive connection still open ends it and frees the port.
    await server!.close();
    server = undefined;
    agent.destroy();
    await expect(get(base, '/v1/health', new Agent())).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  }, 180_000);

  it('frees the port again when the start fails (a store that cannot be opened)', async () => {
    const blocker = join(place.dataDir, 'a-file');
    writeFileSync(blocker, 'not a directory');
    const port = await freePort();
    const config = loadConfig({
      DATA_DIR: join(blocker, 'data'),
      DATABASE_URL: `sqlite:${join(blocker, 'data', 'stoop.sqlite')}`,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'silent',
      REDIS_URL: '',
    });
    await expect(startServer(config)).rejects.toThrow(/ENOTDIR/);
    const probe = createServer();
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen(port, '127.0.0.1', () => resolve());
    });
    await new Promise((resolve) => probe.close(resolve));
  });
});
