export { searchRoutes } from './search.routes.ts';
export { runSearch, specFromBody, type RunOptions, type RunResult } from './search.service.ts';
export { parseQuery, type SearchSpec } from './search.query.ts';
export { upsertDocuments, removeDocuments, type SearchDocumentInput } from './search-index.repo.ts';
export { viewableTemplateIds } from './visibility.ts';
export type { FacetResult } from './search.engine.ts';
export { KeywordSearchBodySchema, SearchResultSchema } from './search.schemas.ts';
