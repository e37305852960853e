import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';

describe('config', () => {
  it('defaults to the embedded store on 127.0.0.1:8080 and is frozen', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 8080,
      dialect: 'sqlite',
      publicUrl: 'http://127.0.0.1:8080',
    });
    expect(config.databaseUrl).toMatch(/^sqlite:.*data\/stoop\.sqlite$/);
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.demo)).toBe(true);
  });

  it('switches to PostgreSQL with a postgres:// DATABASE_URL', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://u@127.0.0.1:5432/x' }).dialect).toBe('postgres');
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ DEMO: 'perhaps' }, 'DEMO'],
    [{ DEMO_SCALE: '0' }, 'DEMO_SCALE'],
    [{ DEMO_SCALE: '2' }, 'DEMO_SCALE'],
    [{ DATABASE_SCHEMA: 'Robert"; drop' }, 'DATABASE_SCHEMA'],
  ])('rejects %o naming %s', (env, variable) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(variable);
  });
});
