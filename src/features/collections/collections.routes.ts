import type { Deps } from '../../deps.ts';
import type { App } from '../../core/http/app-types.ts';
import { principalOf } from '../../core/http/authenticate.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../../core/http/responses.ts';
import {
  CollectionAssetsQuerySchema,
  CollectionCreateSchema,
  CollectionCreatedSchema,
  CollectionLegacyUpdateSchema,
  CollectionSchema,
  CollectionSearchBodySchema,
  CollectionSearchResultSchema,
  CollectionUpdateSchema,
  DeletedSchema,
  IdParamsSchema,
  UpdatedSchema,
} from './collections.schemas.ts';
import {
  createCollection,
  deleteCollection,
  getCollection,
  updateCollection,
  updateCollectionLegacy,
} from './collections.service.ts';
import { listCollectionAssets, searchCollections, searchInCollection } from './collections-search.service.ts';
import { KeywordSearchBodySchema, SearchResultSchema } from '../search/index.ts';
import { shareRoutes } from './share/share.routes.ts';

const tags = ['collections'];
const emptyBody = async (request: { body: unknown }) => {
  request.body ??= {};
};

export function collectionRoutes(app: App, deps: Deps): void {
  app.addSchema(CollectionSchema);

  app.post(
    '/collection',
    {
      preValidation: emptyBody,
      schema: {
        operationId: 'CreateCollection',
        tags,
        summary: 'Create a private or secured collection (Collection privilege; View on every member)',
        body: CollectionCreateSchema,
        response: {
          200: CollectionCreatedSchema,
          ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'conflict'),
        },
      },
    },
    async (request) => createCollection(deps, principalOf(request), request.body),
  );

  app.get(
    '/collection/:id',
    {
      schema: {
        operationId: 'GetCollection',
        tags,
        summary: 'A collection, with the members this caller may view',
        params: IdParamsSchema,
        response: { 200: CollectionSchema, ...errorResponses(...AUTHENTICATED_ERRORS, 'forbidden', 'not_found') },
      },
    },
    async (request) => getCollection(deps, principalOf(request), request.params.id),
  );

  app.patch(
    '/collection/:id',
    {
      preValidation: emptyBody,
      schema: {
        operationId: 'UpdateCollection',
        tags,
        summary: 'Rename, retype, or replace the membership (the members this caller may view) of a collection',
        params: IdParamsSchema,
        body: CollectionLegacyUpdateSchema,
        response: {
          200: UpdatedSchema,
          ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'not_found', 'conflict'),
        },
      },
    },
    async (request) => updateCollectionLegacy(deps, principalOf(request), request.params.id, request.body),
  );

  app.delete(
    '/collection/:id',
    {
      schema: {
        operationId: 'DeleteCollection',
        tags,
        summary: 'Delete a collection (private: Delete privilege; secured: Purge). Member assets are untouched.',
        params: IdParamsSchema,
        response: { 200: DeletedSchema, ...errorResponses(...AUTHENTICATED_ERRORS, 'forbidden', 'not_found') },
      },
    },
    async (request) => deleteCollection(deps, principalOf(request), request.params.id),
  );

  app.patch(
    '/collections/:id',
    {
      preValidation: emptyBody,
      schema: {
        operationId: 'UpdateCollectionNew',
        tags,
        summary:
          'Update name, security templates, membership (add/remove/replace) and metadata (partial) in one request (1.5)',
        params: IdParamsSchema,
        body: CollectionUpdateSchema,
        response: {
          200: UpdatedSchema,
          ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'not_found', 'conflict'),
        },
      },
    },
    async (request) => updateCollection(deps, principalOf(request), request.params.id, request.body),
  );

  app.get(
    '/collection/:id/assets',
    {
      schema: {
        operationId: 'GetCollectionAssets',
        tags,
        summary:
          "A page of the collection's assets this caller may view, with full asset records; totals and facets count only those",
        params: IdParamsSchema,
        querystring: CollectionAssetsQuerySchema,
        response: {
          200: SearchResultSchema,
          ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'not_found'),
        },
      },
    },
    async (request) => listCollectionAssets(deps, principalOf(request), request.params.id, request.query),
  );

  app.post(
    '/collection/:id/search',
    {
      // A read sent as POST (the reference's shape): an OAuth token with tessera.read reaches it.
      config: { scope: 'read' },
      preValidation: emptyBody,
      schema: {
        operationId: 'SearchCollectionAssets',
        tags,
        summary: 'Keyword search inside one collection (same body as POST /search/keyword)',
        params: IdParamsSchema,
        body: KeywordSearchBodySchema,
        response: {
          200: SearchResultSchema,
          ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'not_found'),
        },
      },
    },
    async (request) => searchInCollection(deps, principalOf(request), request.params.id, request.body),
  );

  app.post(
    '/search/collection',
    {
      // A read sent as POST (the reference's shape): an OAuth token with tessera.read reaches it.
      config: { scope: 'read' },
      preValidation: emptyBody,
      schema: {
        operationId: 'SearchCollections',
        tags: ['search', ...tags],
        summary: 'Search the collections this caller may see, by name and type',
        body: CollectionSearchBodySchema,
        response: {
          200: CollectionSearchResultSchema,
          ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed'),
        },
      },
    },
    async (request) => searchCollections(deps, principalOf(request), request.body),
  );

  shareRoutes(app, deps);
}
