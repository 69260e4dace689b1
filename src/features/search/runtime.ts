import { createIndexerState, type IndexerState } from './indexing/search.indexer.ts';

/** The search feature's per-process state (deps.runtime.search), built by src/runtime.ts. */
export interface SearchRuntime {
  /** The indexer pass under way (shared by the background loop and syncSearchIndex callers). */
  readonly indexer: IndexerState;
  /** Waits for a pass under way. */
  close(): Promise<void>;
}

export function createSearchRuntime(): SearchRuntime {
  const indexer = createIndexerState();
  return { indexer, close: async () => void (await indexer.running?.catch(() => 0)) };
}
