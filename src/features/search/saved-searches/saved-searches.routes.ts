import { Type } from 'typebox';
import type { Deps } from '../../../deps.ts';
import type { App } from '../../../core/http/app-types.ts';
import { principalOf } from '../../../core/http/authenticate.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../../../core/http/responses.ts';
import {
  IdParamsSchema,
  SavedSearchCreateSchema,
  SavedSearchListQuerySchema,
  SavedSearchListSchema,
  SavedSearchRunSchema,
  SavedSearchSchema,
  SavedSearchUpdateSchema,
} from './saved-searches.schemas.ts';
import {
  createSavedSearch,
  deleteSavedSearch,
  getSavedSearch,
  listSavedSearches,
  runSavedSearch,
  updateSavedSearch,
} from './saved-searches.service.ts';
import { SearchResultSchema } from '../search.schemas.ts';

const tags = ['saved-searches'];

/** Tessera's saved searches: private or shared through security templates; run with the runner's visibility. */
export function savedSearchRoutes(app: App, deps: Deps): void {
  app.addSchema(SavedSearchSchema);

  app.post(
    '/saved-searches',
    {
      schema: {
        operationId: 'CreateSavedSearch',
        tags,
        summary: 'Save a search (private, or shared through security templates)',
        body: SavedSearchCreateSchema,
        response: { 201: Type.Ref('SavedSearch'), ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed') },
      },
    },
    async (request, reply) => reply.code(201).send(await createSavedSearch(deps, principalOf(request), request.body)),
  );

  app.get(
    '/saved-searches',
    {
      schema: {
        operationId: 'ListSavedSearches',
        tags,
        summary: 'Saved searches this caller owns or that are shared with them',
        querystring: SavedSearchListQuerySchema,
        response: { 200: SavedSearchListSchema, ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed') },
      },
    },
    async (request) => listSavedSearches(deps, principalOf(request), request.query),
  );

  app.get(
    '/saved-searches/:id',
    {
      schema: {
        operationId: 'GetSavedSearch',
        tags,
        summary: 'A saved search',
        params: IdParamsSchema,
        response: { 200: Type.Ref('SavedSearch'), ...errorResponses(...AUTHENTICATED_ERRORS, 'not_found') },
      },
    },
    async (request) => getSavedSearch(deps, principalOf(request), request.params.id),
  );

  app.patch(
    '/saved-searches/:id',
    {
      schema: {
        operationId: 'UpdateSavedSearch',
        tags,
        summary: 'Change a saved search (its creator, or Edit Metadata through its templates)',
        params: IdParamsSchema,
        body: SavedSearchUpdateSchema,
        response: {
          200: Type.Ref('SavedSearch'),
          ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'not_found'),
        },
      },
    },
    async (request) => updateSavedSearch(deps, principalOf(request), request.params.id, request.body),
  );

  app.delete(
    '/saved-searches/:id',
    {
      schema: {
        operationId: 'DeleteSavedSearch',
        tags,
        summary: 'Delete a saved search (its creator)',
        params: IdParamsSchema,
        response: {
          204: Type.Null({ description: 'Deleted' }),
          ...errorResponses(...AUTHENTICATED_ERRORS, 'forbidden', 'not_found'),
        },
      },
    },
    async (request, reply) => {
      await deleteSavedSearch(deps, principalOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/saved-searches/:id/run',
    {
      // A read sent as POST (the reference's shape): an OAuth token with tessera.read reaches it.
      config: { scope: 'read' },
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        operationId: 'RunSavedSearch',
        tags,
        summary: "Run a saved search with the caller's own visibility",
        params: IdParamsSchema,
        body: SavedSearchRunSchema,
        response: {
          200: SearchResultSchema,
          ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'not_found'),
        },
      },
    },
    async (request) => runSavedSearch(deps, principalOf(request), request.params.id, request.body),
  );
}
