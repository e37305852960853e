/**
 * The search-index worker: builds the listing index (reads, columns, every
 * sort order) on its own thread with its own store connection, and posts it
 * back with its memory transferred, so a rebuild costs the serving thread
 * only the receipt (see IndexWorkerClient in index-worker-client.ts).
 *
 * Messages: `{ type: 'build', id }` → one `partition` message per listing
 * type, then `built`; or `failed`. `{ type: 'close' }` closes the store and
 * ends the thread. One build at a time (the client sends one at a time).
 */
import { parentPort, threadId, workerData } from 'node:worker_threads';
import type { ListingType } from '../../domain/listing.ts';
import { openStore, type SharedStoreOptions } from '../../platform/db/database.ts';
import { runBehindRequests } from '../../platform/worker/threads.ts';
import {
  buildPortableIndex,
  type CarriedFrom,
  carriedRows,
  type PartitionIdentity,
  type PortablePartition,
} from './active-index.ts';
import { ColumnsKeeper } from './index-columns.ts';

export interface IndexWorkerInit {
  /** The module the entry shim imports (this file). */
  entry: string;
  store: SharedStoreOptions;
}

export type ToIndexWorker =
  | {
      type: 'build';
      id: number;
      /** The buildings part of the version to build: when it moved, every listing is read again (see ColumnsKeeper). */
      buildings: string | null;
    }
  | { type: 'close' };

export type FromIndexWorker =
  | { type: 'partition'; id: number; listingType: ListingType; partition: PortablePartition }
  | {
      type: 'built';
      id: number;
      buildMs: number;
      threadId: number;
      /** This build's name, unique in the process. */
      build: string;
      /** Its rows mapped to the previous build's on this worker (none after the worker started). */
      carriedFrom?: CarriedFrom;
    }
  | { type: 'failed'; id: number; error: { name: string; message: string } };

/** Connections of the worker's PostgreSQL pool: the build reads one page at a time. */
const POOL_SIZE = 1;

/** What the worker keeps of its last build (copies: the build's memory went to the serving thread). */
interface LastBuild {
  build: string;
  identity: Record<ListingType, PartitionIdentity>;
}

function identityOf(partition: PortablePartition): PartitionIdentity {
  return {
    idBytes: partition.idBytes,
    idOffsets: partition.idOffsets,
    rowOfId: partition.rowOfId,
    revision: partition.revision,
  };
}

function copyOf(identity: PartitionIdentity): PartitionIdentity {
  return {
    idBytes: identity.idBytes.slice(),
    idOffsets: identity.idOffsets.slice(),
    rowOfId: identity.rowOfId.slice(),
    revision: identity.revision.slice(),
  };
}

async function main(): Promise<void> {
  runBehindRequests('rebuild');
  const port = parentPort;
  if (!port) throw new Error('index-worker runs only as a worker thread');
  const init = (workerData as { init: IndexWorkerInit }).init;
  const store = await openStore({ ...init.store, poolSize: POOL_SIZE });
  const post = (message: FromIndexWorker, transfer: ArrayBuffer[] = []) =>
    port.postMessage(message, transfer);
  let last: LastBuild | null = null;
  let builds = 0;
  // The listings' columns as last read: the next build reads only what changed since.
  const keeper = new ColumnsKeeper();
  port.on('message', (message: ToIndexWorker) => {
    if (message.type === 'close') {
      void store.close().finally(() => port.close());
      return;
    }
    const { id, buildings } = message;
    buildPortableIndex(store.db, threadId, { keeper, buildings }).then(
      ({ index, transfer }) => {
        const build = `${threadId}:${++builds}`;
        const identity = {
          rental: identityOf(index.partitions.rental),
          sale: identityOf(index.partitions.sale),
        };
        // Which rows the serving thread may take over from the index this worker built before
        // (it takes them only if that is the index it serves): the merge runs here, off its thread.
        const carriedFrom: CarriedFrom | undefined = last
          ? {
              build: last.build,
              rows: {
                rental: carriedRows(last.identity.rental, identity.rental),
                sale: carriedRows(last.identity.sale, identity.sale),
              },
            }
          : undefined;
        last = { build, identity: { rental: copyOf(identity.rental), sale: copyOf(identity.sale) } };
        for (const listingType of ['rental', 'sale'] as const) {
          post(
            { type: 'partition', id, listingType, partition: index.partitions[listingType] },
            transfer[listingType],
          );
        }
        post(
          {
            type: 'built',
            id,
            buildMs: index.buildMs,
            threadId: index.threadId,
            build,
            ...(carriedFrom ? { carriedFrom } : {}),
          },
          carriedFrom
            ? [carriedFrom.rows.rental.buffer as ArrayBuffer, carriedFrom.rows.sale.buffer as ArrayBuffer]
            : [],
        );
      },
      (error: unknown) => {
        const record =
          error instanceof Error
            ? { name: error.name, message: error.message }
            : { name: 'Error', message: String(error) };
        post({ type: 'failed', id, error: record });
      },
    );
  });
}

await main();
