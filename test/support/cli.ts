import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { TEST_DIALECT, testSchemaName } from './store.ts';

export const ROOT = resolve(import.meta.dirname, '../..');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * A store for the real `stoop` CLI run as a child process: on PostgreSQL a
 * throw-away `t_…` schema (dropped by the global teardown), on SQLite a file in
 * a fresh temp dir. `env` is the child environment pointing at it.
 */
export interface CliStore {
  dataDir: string;
  databaseUrl: string;
  schema: string | undefined;
  env: NodeJS.ProcessEnv;
}

export function cliStore(prefix: string, extraEnv: Record<string, string> = {}): CliStore {
  const dataDir = mkdtempSync(join(tmpdir(), `stoop-${prefix}-`));
  const schema = TEST_DIALECT === 'postgres' ? testSchemaName() : undefined;
  const databaseUrl =
    TEST_DIALECT === 'postgres' ? process.env.DATABASE_URL! : `sqlite:${join(dataDir, 'stoop.sqlite')}`;
  return {
    dataDir,
    databaseUrl,
    schema,
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
      DATABASE_URL: databaseUrl,
      ...(schema ? { DATABASE_SCHEMA: schema } : {}),
      ...extraEnv,
    },
  };
}

/** Runs the real `stoop` CLI (`node --import tsx src/cli.ts …`) in a child process; stderr is a pipe (no progress bar). */
export function runStoop(
  env: NodeJS.ProcessEnv,
  args: readonly string[],
  timeoutMs = 60_000,
): Promise<CliResult> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/cli.ts', ...args],
      { cwd: ROOT, env, timeout: timeoutMs },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        done({ code, stdout, stderr });
      },
    );
  });
}
