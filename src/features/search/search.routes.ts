import type { Deps } from '../../deps.ts';
import type { App } from '../../core/http/app-types.ts';
import { principalOf } from '../../core/http/authenticate.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../../core/http/responses.ts';
import {
  KeywordSearchBodySchema,
  ScanBodySchema,
  ScanResultSchema,
  SearchBodySchema,
  SearchResultSchema,
} from './search.schemas.ts';
import { keywordSearch, scanAssets, streamlinedSearch } from './search.service.ts';

const tags = ['search'];
const emptyBody = async (request: { body: unknown }) => {
  request.body ??= {};
};

/** POST /search/keyword, POST /search (1.5) and POST /asset/scan: every hit, count and facet is over what the caller may view. */
export function searchRoutes(app: App, deps: Deps): void {
  app.post(
    '/search/keyword',
    {
      // A read sent as POST (the reference's shape): an OAuth token with tessera.read reaches it.
      config: { scope: 'read' },
      preValidation: emptyBody,
      schema: {
        operationId: 'Search',
        tags,
        summary: 'Keyword and facet search over the assets the caller may view (legacy payload; limit ≤ 100)',
        body: KeywordSearchBodySchema,
        response: { 200: SearchResultSchema, ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed') },
      },
    },
    async (request) => keywordSearch(deps, principalOf(request), request.body),
  );

  app.post(
    '/search',
    {
      // A read sent as POST (the reference's shape): an OAuth token with tessera.read reaches it.
      config: { scope: 'read' },
      preValidation: emptyBody,
      schema: {
        operationId: 'SearchAssets',
        tags,
        summary: 'Streamlined search (1.5): relevancy, includes, facets; limit ≤ 50',
        body: SearchBodySchema,
        response: { 200: SearchResultSchema, ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed') },
      },
    },
    async (request) => streamlinedSearch(deps, principalOf(request), request.body),
  );

  app.post(
    '/asset/scan',
    {
      // A read sent as POST (the reference's shape): an OAuth token with tessera.read reaches it.
      config: { scope: 'read' },
      preValidation: emptyBody,
      schema: {
        operationId: 'ScanAssets',
        tags,
        summary: 'Walk the whole result of a search with an opaque cursor (no duplicates or gaps while assets change)',
        body: ScanBodySchema,
        response: { 200: ScanResultSchema, ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed') },
      },
    },
    async (request) => scanAssets(deps, principalOf(request), request.body),
  );
}
