import { parentPort, workerData } from 'node:worker_threads';
import { createDeps } from './deps.ts';
import { startAuditSealer } from './features/audit/index.ts';
import {
  forwardRemovedDocuments,
  indexInShortTransactions,
  startSearchIndexer,
  syncSearchIndex,
} from './features/search/index.ts';
import type { BackgroundThreadData } from './background-thread.ts';

/** The background thread (src/background-thread.ts): its own Deps and connection, the same loops. */
const { config } = workerData as BackgroundThreadData;
const port = parentPort!;
const deps = createDeps(config, { role: 'background' });
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
  void Promise.all([indexer.stop(), sealer.stop()])
    .then(() => deps.close())
    .catch((error: unknown) => deps.log.warn({ err: error }, 'background thread: close failed'))
    .finally(() => port.close());
});
