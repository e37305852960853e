import { Writable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { requestLoggerFactory } from '../src/http/request-logger.ts';

function capture(level: string) {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      done();
    },
  });
  const parent = pino({ level }, stream);
  return { parent: parent as unknown as FastifyBaseLogger, lines, childSpy: vi.spyOn(parent, 'child') };
}

describe('request logger (childLoggerFactory)', () => {
  it('makes no child while nothing is logged at a level the process writes', () => {
    const { parent, lines, childSpy } = capture('warn');
    const log = requestLoggerFactory(parent, { reqId: 'r-1' }, {});
    log.info({ a: 1 }, 'request completed');
    log.debug('detail');
    expect(childSpy).not.toHaveBeenCalled();
    expect(lines).toEqual([]);
    expect(log.level).toBe('warn');
  });

  it('writes what a pino child would, bound to the request id, once a level is enabled', () => {
    const { parent, lines, childSpy } = capture('warn');
    const log = requestLoggerFactory(parent, { reqId: 'r-2' }, {});
    log.warn({ code: 'X' }, 'slow upstream');
    log.error(new Error('boom'));
    log.info('still below the level');
    expect(childSpy).toHaveBeenCalledTimes(1);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ reqId: 'r-2', code: 'X', msg: 'slow upstream', level: 40 });
    expect(lines[1]).toMatchObject({ reqId: 'r-2', level: 50, err: { message: 'boom' } });
  });

  it('follows the parent level and lets a child level be set', () => {
    const { parent, lines } = capture('info');
    const log = requestLoggerFactory(parent, { reqId: 'r-3' }, {});
    log.info('hello');
    expect(lines[0]).toMatchObject({ reqId: 'r-3', msg: 'hello' });
    log.level = 'error';
    log.warn('hidden');
    expect(lines).toHaveLength(1);
    expect(log.child({ extra: true }).level).toBe('error');
  });

  it('makes the child at once when the request logger has a level of its own (a route logLevel)', () => {
    const { parent, childSpy } = capture('warn');
    const log = requestLoggerFactory(parent, { reqId: 'r-4' }, { level: 'debug' });
    expect(childSpy).toHaveBeenCalledTimes(1);
    expect(log.level).toBe('debug');
  });
});
