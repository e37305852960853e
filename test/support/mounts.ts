/**
 * File systems that fail the way production disks do, for fault tests: a
 * small tmpfs that fills up (ENOSPC), and a directory made read-only. As root
 * (CI) both are mounts, since permissions do not stop root; a non-root run gets
 * a read-only directory by its mode and cannot mount.
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

function isRoot(): boolean {
  return process.getuid?.() === 0;
}

/** Why this process cannot mount a tmpfs; null when it can (checked by mounting one). */
export async function tmpfsUnavailable(): Promise<string | null> {
  if (process.platform !== 'linux') return 'not Linux';
  if (!isRoot()) return 'not root: mounting a tmpfs needs CAP_SYS_ADMIN';
  const probe = mkdtempSync(join(tmpdir(), 'stoop-mount-probe-'));
  try {
    await run('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', probe]);
    await run('umount', [probe]);
    return null;
  } catch (error) {
    return `mount -t tmpfs failed: ${(error as Error).message.split('\n')[0]}`;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}

/** Why a directory cannot be made read-only for this process; null when it can. */
export async function readOnlyDirUnavailable(): Promise<string | null> {
  return isRoot() ? tmpfsUnavailable() : null;
}

/** Mounts a tmpfs of `sizeMb` on `dir`; resolves with its unmount. */
export async function mountTmpfs(dir: string, sizeMb: number): Promise<() => Promise<void>> {
  await run('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m`, 'tmpfs', dir]);
  return async () => {
    await run('umount', ['-l', dir]).catch(() => {});
  };
}

/**
 * Makes `dir` read-only for this process and its children: a read-only bind
 * mount of itself as root, its mode otherwise. Resolves with the undo.
 */
export async function makeReadOnly(dir: string): Promise<() => Promise<void>> {
  if (!isRoot()) {
    chmodSync(dir, 0o555);
    return async () => chmodSync(dir, 0o755);
  }
  await run('mount', ['--bind', dir, dir]);
  try {
    await run('mount', ['-o', 'remount,bind,ro', dir]);
  } catch (error) {
    await run('umount', [dir]).catch(() => {});
    throw error;
  }
  return async () => {
    await run('umount', [dir]).catch(() => {});
  };
}
