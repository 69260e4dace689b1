export { searchRoutes } from './search.routes.ts';
export { runSearch, specFromBody, type RunOptions, type RunResult } from './search.service.ts';
export { parseQuery, type SearchSpec } from './query/search.query.ts';
export { upsertDocuments, removeDocuments, type SearchDocumentInput } from './indexing/search-index.repo.ts';
export { viewableTemplateIds, searchVisibility, type Visibility } from './access/visibility.ts';
export type { FacetResult } from './query/search.engine.ts';
export { KeywordSearchBodySchema, SearchResultSchema } from './search.schemas.ts';
export { savedSearchRoutes } from './saved-searches/saved-searches.routes.ts';
export { runSavedSearchForViewer, getSavedSearch } from './saved-searches/saved-searches.service.ts';
export type { SavedSearch } from './saved-searches/saved-searches.schemas.ts';
export {
  syncSearchIndex,
  startSearchIndexer,
  delegateSearchIndexing,
  indexInShortTransactions,
} from './indexing/search.indexer.ts';
export { indexBeforeAnswer } from './indexing/search.freshness.ts';
export { visibleCollectionMemberIds } from './memory-index/search.columns.ts';
export {
  forgetCollectionMembers,
  loadMemoryIndex,
  memoryIndexLoaded,
  memoryIndexSettled,
  memoryIndexStats,
  noteRemovedDocuments,
  forwardRemovedDocuments,
  unloadMemoryIndex,
} from './memory-index/search.memindex.ts';
export { startSearchIndexWarmup } from './memory-index/search.warmup.ts';
export { createSearchRuntime, type SearchRuntime } from './runtime.ts';
export { snapshotDir as searchSnapshotDir } from './memory-index/search.snapshot.ts';
