/**
 * A PostgreSQL cluster of a test's own, on a free loopback port in a temp dir,
 * for fault tests that stop, restart or freeze the server under a running
 * Stoop. Never the machine's shared PostgreSQL: that one other tests use.
 *
 * PostgreSQL refuses to run as root, so as root every server command runs as
 * the `postgres` user (`runuser -u postgres --`) in a directory it owns.
 */
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './server-process.ts';

const run = promisify(execFile);

export interface ThrowawayPostgres {
  port: number;
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication, no password). */
  url: string;
  /** Stops the server (`fast`: sessions are terminated with 57P01, as an operator's stop does). */
  stop(): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
  /** SIGSTOPs the postmaster and every backend: the server accepts TCP but never answers. */
  freeze(): void;
  /** SIGCONTs what `freeze` stopped. */
  thaw(): void;
  /** Thaws, stops immediately and deletes the cluster. Safe to call twice. */
  destroy(): Promise<void>;
}

/** The newest installed server's bin directory, or null. */
function serverBinDir(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')) && existsSync(join(root, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? join(root, versions[0]!, 'bin') : null;
}

function isRoot(): boolean {
  return process.getuid?.() === 0;
}

/** uid and gid of the `postgres` user, from /etc/passwd; null when there is none. */
function postgresUser(): { uid: number; gid: number } | null {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'));
  if (!line) return null;
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

/** Why a throwaway cluster cannot run here; null when it can. */
export function throwawayPostgresUnavailable(): string | null {
  if (process.platform !== 'linux') return 'not Linux (needs /proc and /usr/lib/postgresql)';
  if (!serverBinDir()) return 'no PostgreSQL server binaries under /usr/lib/postgresql/*/bin';
  if (isRoot() && !postgresUser())
    return 'running as root and there is no postgres user to run the server as';
  return null;
}

/** Runs a server binary, as the postgres user when we are root. */
async function asServerUser(binary: string, args: readonly string[], cwd: string): Promise<void> {
  const bin = join(serverBinDir()!, binary);
  const [file, argv] = isRoot() ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, [...args]];
  await run(file, argv, { cwd, timeout: 60_000 });
}

/** Pids of the postmaster and every process it started, found through /proc. */
function clusterPids(dataDir: string): number[] {
  const pidFile = join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return [];
  const postmaster = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  const pids = [postmaster];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // Field 4 of /proc/<pid>/stat is the parent pid; the command (field 2) may hold spaces, so
      // count from the closing parenthesis.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent === postmaster) pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

export async function createThrowawayPostgres(): Promise<ThrowawayPostgres> {
  const reason = throwawayPostgresUnavailable();
  if (reason) throw new Error(`cannot run a throwaway PostgreSQL: ${reason}`);
  const home = mkdtempSync(join(tmpdir(), 'stoop-pg-'));
  const user = isRoot() ? postgresUser() : null;
  if (user) chownSync(home, user.uid, user.gid);
  const dataDir = join(home, 'data');
  const port = await freePort();
  await asServerUser('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8'], home);
  const options = [
    `-p ${port}`,
    `-k ${home}`,
    "-c listen_addresses='127.0.0.1'",
    // A test cluster: durability is not what is tested, speed is welcome.
    '-c fsync=off',
    '-c synchronous_commit=off',
  ].join(' ');
  const pgCtl = (args: string[]) => asServerUser('pg_ctl', ['-D', dataDir, ...args], home);
  let frozen: number[] = [];
  let destroyed = false;

  const cluster: ThrowawayPostgres = {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start: () => pgCtl(['-l', join(home, 'server.log'), '-o', options, '-w', '-t', '30', 'start']),
    stop: () => pgCtl(['-m', 'fast', '-w', '-t', '30', 'stop']),
    freeze: () => {
      const [postmaster, ...children] = clusterPids(dataDir);
      if (postmaster === undefined) throw new Error('the throwaway PostgreSQL is not running');
      process.kill(postmaster, 'SIGSTOP');
      frozen = [postmaster];
      for (const pid of children) {
        try {
          process.kill(pid, 'SIGSTOP');
          frozen.push(pid);
        } catch (error) {
          // A backend that ended between the listing and now (ESRCH) has nothing left to freeze.
          if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
        }
      }
    },
    thaw: () => {
      for (const pid of frozen) {
        try {
          process.kill(pid, 'SIGCONT');
        } catch {
          // Already gone.
        }
      }
      frozen = [];
    },
    destroy: async () => {
      if (destroyed) return;
      destroyed = true;
      cluster.thaw();
      if (existsSync(join(dataDir, 'postmaster.pid'))) {
        await pgCtl(['-m', 'immediate', '-w', '-t', '30', 'stop']).catch(() => {});
      }
      rmSync(home, { recursive: true, force: true });
    },
  };
  try {
    await cluster.start();
  } catch (error) {
    await cluster.destroy();
    throw error;
  }
  return cluster;
}
