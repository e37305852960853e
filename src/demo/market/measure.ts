/**
 * Measures a full demo-market load into a fresh SQLite file:
 *   npx tsx src/demo/market/measure.ts [scale] [seed]
 * Prints row counts, seconds and the database size, then deletes the file.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../platform/db/database.ts';
import { migrateToLatest } from '../../platform/db/migrate.ts';
import { createProgressReporter } from '../../platform/progress.ts';
import { syncAreas } from '../../reference/areas-store.ts';
import { loadDemoMarket } from './load.ts';

const scale = Number(process.argv[2] ?? 1);
const seed = Number(process.argv[3] ?? 1);
const dir = mkdtempSync(join(tmpdir(), 'stoop-demo-'));
const file = join(dir, 'stoop.db');
const store = await openStore({ dialect: 'sqlite', databaseUrl: `sqlite:${file}` });
try {
  await migrateToLatest(store);
  await syncAreas(store);
  const progress = createProgressReporter('Demo market');
  const result = await loadDemoMarket(store, { seed, scale, now: new Date(), onProgress: progress.update });
  progress.stop();
  await store.close();
  const bytes = statSync(file).size + sizeOf(`${file}-wal`);
  process.stdout.write(
    `${JSON.stringify({ scale, seed, ...result, seconds: result.ms / 1000, dbMegabytes: Math.round(bytes / 1e6) }, null, 2)}\n`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}
