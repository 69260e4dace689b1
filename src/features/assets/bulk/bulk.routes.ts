import { Type } from 'typebox';
import type { Deps } from '../../../deps.ts';
import type { App } from '../../../core/http/app-types.ts';
import { principalOf } from '../../../core/http/authenticate.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../../../core/http/responses.ts';
import { startBulkEdit, startPurge, startRegenerate } from './bulk.service.ts';
import { docAs } from '../../../core/http/doc-schema.ts';
import { legacyTableInputDoc, legacyValueInputDoc } from '../../metadata/index.ts';

const tags = ['assets'];
const write = errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'not_found', 'conflict');

const Op = Type.Union([Type.Literal('replace'), Type.Literal('append'), Type.Literal('remove')], {
  description:
    "replace (the default) sets the value; append adds to what each asset has (multi-value attributes, tables, text); remove takes the given values out (Tessera's extension; for securityTemplateOp, removes those templates)",
});
const BulkEditBody = Type.Object({
  metadataTemplateId: Type.String({ maxLength: 100 }),
  objectIds: Type.Array(Type.String({ maxLength: 100 }), { minItems: 1, maxItems: 100_000 }),
  metadataDocument: Type.Optional(
    Type.Array(
      Type.Object({
        metadataDefinitionId: Type.String({ maxLength: 100 }),
        metadataDefinitionValue: Type.Optional(docAs(Type.Unknown(), legacyValueInputDoc)),
        metadataDefinitionTableValue: Type.Optional(docAs(Type.Array(Type.Array(Type.Unknown())), legacyTableInputDoc)),
        operation: Type.Optional(Op),
      }),
      { maxItems: 2000 },
    ),
  ),
  securityTemplateIds: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 50 })),
  securityTemplateOp: Type.Optional(Op),
});
const Started = Type.Object({ actionId: Type.String(), status: Type.String() });

/** Work on many assets at once, each as an Action: bulk edit, the recycle-bin purge, rendition regeneration. */
export function bulkRoutes(app: App, deps: Deps): void {
  app.patch(
    '/asset',
    {
      schema: {
        operationId: 'EditAssets',
        tags,
        summary:
          'Bulk edit: the same metadata and security changes on many assets, as an Action (GET /v1/action/{jobId})',
        body: BulkEditBody,
        response: {
          200: Type.Object({
            jobId: Type.String(),
            collectionId: Type.Null({ description: 'Tessera makes no collection of the edited assets' }),
          }),
          ...write,
        },
      },
    },
    async (request) => startBulkEdit(deps, principalOf(request), request.body),
  );

  app.post(
    '/asset/purge',
    {
      schema: {
        operationId: 'PurgeAssets',
        tags,
        summary: 'Permanently remove recycle-bin assets (Purge privilege), as an Action',
        body: Type.Object({
          objectIds: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 10_000 })),
          all: Type.Optional(Type.Boolean()),
        }),
        response: { 200: Started, ...write },
      },
    },
    async (request) => startPurge(deps, principalOf(request), request.body),
  );

  app.post(
    '/asset/renditions',
    {
      schema: {
        operationId: 'RegenerateRenditions',
        tags,
        summary: 'Render the renditions of assets again (Content Management), as an Action',
        body: Type.Object({
          objectIds: Type.Array(Type.String({ maxLength: 100 }), { minItems: 1, maxItems: 10_000 }),
        }),
        response: { 200: Started, ...write },
      },
    },
    async (request) => startRegenerate(deps, principalOf(request), request.body.objectIds),
  );
}
