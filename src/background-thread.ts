import { Worker } from 'node:worker_threads';
import type { Deps } from './deps.ts';
import { systemClock } from './core/clock.ts';
import { noteRemovedDocuments } from './features/search/index.ts';
import { setSqliteAutoCheckpoint, shareSqliteWrites } from './core/db/connect.ts';
import { createWriteTurnsBuffer, writeTurns } from './core/db/write-turns.ts';

/**
 * The background thread (decision 0024): the search indexer and the audit sealer on a worker thread
 * with its own Deps and database connection (src/background.worker.ts). Their JavaScript (reading
 * changed assets, building documents and tokens, hashing the chain) and the statements that write
 * the index and the seals leave the thread that answers requests. On SQLite the indexer writes in
 * transactions of at most 100 documents there, so a request waiting for the one write lock waits
 * milliseconds. The main thread keeps what it had:
 * - `syncSearchIndex` (before every search) asks the thread for a pass and waits for its answer: the
 *   pass starts after the message, so every write the caller committed before it is searchable;
 * - the in-memory index's removal log is fed by the thread's messages, which arrive before the
 *   answer of the pass that removed the documents;
 * - reads of the audit trail still seal their organization first, in the thread that reads.
 * The thread runs only with the system clock on a database file or PostgreSQL: tests on `:memory:`
 * databases or with a fake clock, and TESSERA_BACKGROUND_THREAD=false, run both loops in the main
 * thread. If the thread dies, the loops start again in the main thread (`onLost`).
 */
export interface BackgroundThread {
  /** Resolves when a search indexer pass started after this call has finished (its count of documents). */
  syncSearchIndex(): Promise<number>;
  stop(): Promise<void>;
}

type FromThread =
  | { kind: 'synced'; id: number; count: number }
  | { kind: 'failed'; id: number; message: string }
  | { kind: 'removed'; docNos: number[] };

/** What the thread is given (workerData). */
export interface BackgroundThreadData {
  config: Deps['config'];
  /** SQLite: the write turns shared with the main thread (core/db/write-turns.ts). */
  writeTurns: SharedArrayBuffer;
}

/** How long either thread waits for the other's write before SQLite's busy handling decides. */
export function writeTurnWaitMs(config: Deps['config']): number {
  return Math.max(config.databaseTimeouts.sqliteBusyMs, 10_000);
}

/** SQLite's default automatic checkpoint (pages), which the main thread gets back when the thread ends. */
const SQLITE_AUTO_CHECKPOINT = 1000;

const STOP_GRACE_MS = 5_000;

export function backgroundThreadPossible(deps: Deps): boolean {
  const db = deps.config.database;
  return (
    deps.config.backgroundThread && deps.clock === systemClock && (db.kind === 'postgres' || db.file !== ':memory:')
  );
}

export function startBackgroundThread(
  deps: Deps,
  /** Called once if the thread dies: starts the loops here and returns this thread's own indexer pass. */
  onLost: () => () => Promise<number>,
): BackgroundThread {
  // Metrics and traces stay with the main thread (the thread has no listener and no exporter of its own).
  const config = { ...deps.config, metricsToken: undefined, tracing: undefined, backgroundThread: false };
  const turns = createWriteTurnsBuffer();
  // SQLite (decision 0028): the main thread's writes go first and never sleep in SQLite's busy handler
  // waiting for the thread's, and its commits no longer checkpoint (the thread does, outside any write).
  const sqlite = shareSqliteWrites(deps.db, writeTurns(turns, 'main', writeTurnWaitMs(deps.config)));
  if (sqlite) setSqliteAutoCheckpoint(deps.db, 0);
  const alone = () => {
    if (!sqlite) return;
    shareSqliteWrites(deps.db, undefined);
    setSqliteAutoCheckpoint(deps.db, SQLITE_AUTO_CHECKPOINT);
  };
  const worker = new Worker(new URL('./background.worker.ts', import.meta.url), {
    workerData: { config, writeTurns: turns } satisfies BackgroundThreadData,
  });
  // Holds the process open only while a caller waits for a pass.
  worker.unref();
  const waiting = new Map<number, { resolve(n: number): void; reject(e: Error): void }>();
  let nextId = 1;
  let stopping = false;
  let exited = false;
  const exit = new Promise<void>((resolve) => {
    worker.once('exit', (code) => {
      exited = true;
      alone();
      resolve();
      if (stopping) return;
      deps.log.error(
        { code },
        'background thread ended; the search indexer and audit sealer continue in the main thread',
      );
      const sync = onLost();
      // Callers waiting for a pass get one from the main thread instead.
      for (const w of waiting.values()) sync().then(w.resolve, w.reject);
      waiting.clear();
    });
  });
  worker.on('error', (error) => deps.log.error({ err: error }, 'background thread failed'));
  worker.on('message', (msg: FromThread) => {
    if (msg.kind === 'removed') return noteRemovedDocuments(msg.docNos);
    const w = waiting.get(msg.id);
    if (!w) return;
    waiting.delete(msg.id);
    if (waiting.size === 0) worker.unref();
    if (msg.kind === 'synced') w.resolve(msg.count);
    else w.reject(new Error(msg.message));
  });
  return {
    syncSearchIndex() {
      if (exited) return Promise.reject(new Error('the background thread has stopped'));
      const id = nextId++;
      return new Promise<number>((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        if (waiting.size === 1) worker.ref();
        worker.postMessage({ kind: 'sync', id });
      });
    },
    async stop() {
      if (exited) return;
      stopping = true;
      worker.postMessage({ kind: 'stop' });
      // The thread ends its passes, closes its connection and exits; one that does not is ended.
      const timer = setTimeout(() => void worker.terminate(), STOP_GRACE_MS);
      await exit;
      clearTimeout(timer);
      for (const w of waiting.values()) w.reject(new Error('the background thread stopped'));
      waiting.clear();
    },
  };
}
