import { Type } from 'typebox';
import type { Deps } from '../../../deps.ts';
import type { App } from '../../../core/http/app-types.ts';
import { principalOf } from '../../../core/http/authenticate.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../../../core/http/responses.ts';
import { listRecycleBin } from './recycle-bin.service.ts';

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

const RecycleBinItem = Type.Object({
  objectId: Type.String({
    description:
      'The current version; pass it to POST /v1/asset/purge or to POST /v1/asset/{id}/delete {action: undelete}',
  }),
  fileId: Type.String(),
  originalFileId: Type.String(),
  filename: Type.String(),
  objectType: Type.String(),
  versionNumber: Type.Integer(),
  fileSizeInBytes: Type.Union([Type.Integer(), Type.Null()]),
  metadataDeletedEpoch: Type.Integer({ description: 'When it went to the recycle bin (epoch ms)' }),
  deletedBy: Nullable(
    Type.String({ description: 'The user who deleted it (null for assets deleted before this was recorded)' }),
  ),
  deletedByName: Nullable(Type.String()),
  mayRestore: Type.Boolean({
    description: 'Whether the caller may restore it (Delete permission on the asset and the privilege it takes)',
  }),
  mayPurge: Type.Boolean({
    description:
      'Whether the caller may purge it (the Purge privilege and View and Delete on the asset; the purge checks every version)',
  }),
});

const RecycleBinPage = Type.Object({
  items: Type.Array(RecycleBinItem),
  nextCursor: Nullable(Type.String({ description: 'Pass as cursor for the next page; null on the last' })),
  purge: Type.Object({
    allowed: Type.Boolean({ description: 'Whether the caller holds the Purge privilege' }),
    operation: Type.String({
      description: 'How to purge listed assets: POST /v1/asset/purge with {objectIds} (or {all: true})',
    }),
  }),
});

export function recycleBinRoutes(app: App, deps: Deps): void {
  app.get(
    '/asset/recycle-bin',
    {
      schema: {
        operationId: 'ListRecycleBin',
        tags: ['assets'],
        summary:
          'Deleted assets of the organization the caller may view, newest deletion first, with who deleted them and when; purge them with POST /v1/asset/purge',
        querystring: Type.Object({
          cursor: Type.Optional(
            Type.String({ maxLength: 1000, description: 'nextCursor of the previous page; omit on the first' }),
          ),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'Page size (default 50)' })),
        }),
        response: { 200: RecycleBinPage, ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed') },
      },
    },
    async (request) => listRecycleBin(deps, principalOf(request), request.query),
  );
}
