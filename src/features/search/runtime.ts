import { createIndexerState, type IndexerState } from './indexing/search.indexer.ts';
import { createWarmupState, stopSearchIndexWarmup, type SearchIndexWarmup } from './memory-index/search.warmup.ts';

/** The search feature's per-process state (deps.runtime.search), built by src/runtime.ts. */
export interface SearchRuntime {
  /** The indexer pass under way (shared by the background loop and syncSearchIndex callers). */
  readonly indexer: IndexerState;
  /** The in-memory index's load at start (serve roles, SQLite): search.warmup.ts. */
  readonly warmup: SearchIndexWarmup;
  /** Ends the warm-up and waits for a pass under way. */
  close(): Promise<void>;
}

export function createSearchRuntime(): SearchRuntime {
  const indexer = createIndexerState();
  const warmup = createWarmupState();
  return {
    indexer,
    warmup,
    close: async () => {
      await stopSearchIndexWarmup(warmup);
      await indexer.running?.catch(() => 0);
    },
  };
}
