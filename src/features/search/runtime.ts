import { createIndexerState, type IndexerState } from './indexing/search.indexer.ts';
import type { Deps } from '../../deps.ts';
import { watchAssetWrites } from './indexing/search.freshness.ts';
import {
  createWarmupState,
  stopSearchIndexWarmup,
  writeSnapshots,
  type SearchIndexWarmup,
} from './memory-index/search.warmup.ts';

/** The search feature's per-process state (deps.runtime.search), built by src/runtime.ts. */
export interface SearchRuntime {
  /** The indexer pass under way (shared by the background loop and syncSearchIndex callers). */
  readonly indexer: IndexerState;
  /** The in-memory index's load at start (serve roles, SQLite): search.warmup.ts. */
  readonly warmup: SearchIndexWarmup;
  /** Ends the warm-up, writes the index snapshots (if it ran) and waits for a pass under way. */
  close(): Promise<void>;
}

/** `deps` may not have its runtime yet: only read at close. */
export function createSearchRuntime(deps: Deps): SearchRuntime {
  const indexer = createIndexerState();
  // Writes wait for the index before their answers only where processes share it (decision 0027).
  watchAssetWrites(deps.db, indexer, deps.engine === 'postgres');
  const warmup = createWarmupState();
  return {
    indexer,
    warmup,
    close: async () => {
      await stopSearchIndexWarmup(warmup);
      await indexer.running?.catch(() => 0);
      await writeSnapshots(deps);
    },
  };
}
