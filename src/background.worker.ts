import { parentPort, workerData } from 'node:worker_threads';
import { createDeps } from './deps.ts';
import { startAuditSealer } from './features/audit/index.ts';
import {
  forwardRemovedDocuments,
  indexInShortTransactions,
  startSearchIndexer,
  syncSearchIndex,
} from './features/search/index.ts';
import { writeTurnWaitMs, type BackgroundThreadData } from './background-thread.ts';
import { checkpointSqlite, setSqliteAutoCheckpoint, shareSqliteWrites } from './core/db/connect.ts';
import { writeTurns } from './core/db/write-turns.ts';

/** The background thread (src/background-thread.ts): its own Deps and connection, the same loops. */
const CHECKPOINT_MS = 1000;
const { config, writeTurns: turns } = workerData as BackgroundThreadData;
const port = parentPort!;
const deps = createDeps(config, { role: 'background' });
// SQLite (decision 0028): writes take turns with the main thread's, which go first; the WAL is
// checkpointed here every second, outside any write, instead of in whichever commit crossed 1000 pages.
let checkpoints: NodeJS.Timeout | undefined;
if (shareSqliteWrites(deps.db, writeTurns(turns, 'background', writeTurnWaitMs(config)))) {
  setSqliteAutoCheckpoint(deps.db, 0);
  checkpoints = setInterval(() => {
    try {
      checkpointSqlite(deps.db);
    } catch (error) {
      deps.log.warn({ err: error }, 'background thread: checkpoint failed');
    }
  }, CHECKPOINT_MS);
}
indexInShortTransactions();
forwardRemovedDocuments((docNos) => port.postMessage({ kind: 'removed', docNos }));
const indexer = startSearchIndexer(deps);
const sealer = startAuditSealer(deps);

port.on('message', (msg: { kind: 'sync'; id: number } | { kind: 'stop' }) => {
  if (msg.kind === 'sync') {
    syncSearchIndex(deps).then(
      (count) => port.postMessage({ kind: 'synced', id: msg.id, count }),
      (error: unknown) =>
        port.postMessage({
          kind: 'failed',
          id: msg.id,
          message: error instanceof Error ? error.message : String(error),
        }),
    );
    return;
  }
  clearInterval(checkpoints);
  void Promise.all([indexer.stop(), sealer.stop()])
    .then(() => deps.close())
    .catch((error: unknown) => deps.log.warn({ err: error }, 'background thread: close failed'))
    .finally(() => port.close());
});
