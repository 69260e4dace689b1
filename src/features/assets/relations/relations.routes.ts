import { Type } from 'typebox';
import { docRequired } from '../../../core/http/doc-schema.ts';
import type { Deps } from '../../../deps.ts';
import type { App } from '../../../core/http/app-types.ts';
import { principalOf } from '../../../core/http/authenticate.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../../../core/http/responses.ts';
import { createLinks, listLinks, removeLinks } from './links.service.ts';

const tags = ['assets'];
const IdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });
const write = errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'not_found', 'conflict');

const LinkBody = Type.Object({
  secondaryIds: Type.Optional(
    Type.Array(
      Type.Object({
        id: Type.Optional(Type.String({ maxLength: 100 })),
        linkType: Type.Optional(
          Type.String({ maxLength: 50, description: 'child, derivative or placed-graphic (placed_graphic accepted)' }),
        ),
      }),
      { maxItems: 1000 },
    ),
  ),
});
docRequired(LinkBody, ['secondaryIds']);
// training/relationships.md's request.
Object.assign(LinkBody, {
  examples: [{ secondaryIds: [{ id: '8f1c7d2e-0a4b-4c5d-9e6f-1a2b3c4d5e6f', linkType: 'child' }] }],
});
docRequired(LinkBody.properties.secondaryIds.items, ['id']);
const LinkResults = Type.Array(
  Type.Object({
    status: Type.Union([Type.Literal('success'), Type.Literal('error')]),
    message: Type.String(),
    relationshipId: Type.Optional(Type.String()),
  }),
);
/** The reference's relationship context: where its Asset fields linkType, relationshipId and secondaryId are filled. */
const Relationship = Type.Object({
  primaryId: Type.String(),
  secondaryId: Type.String({ description: 'The linked asset' }),
  linkType: Type.String({ description: 'child, derivative or placed-graphic' }),
  relationshipId: Type.String({ description: '`<primaryId>-<secondaryId>`' }),
  customerId: Type.String(),
  createdEpoch: Type.Integer(),
  lastUpdatedEpoch: Type.Integer(),
});

/** Relationships between assets (links): list, create, remove. */
export function relationRoutes(app: App, deps: Deps): void {
  app.get(
    '/asset/:id/link',
    {
      schema: {
        operationId: 'GetAssetRelationship',
        tags,
        summary: 'Relationships of an asset, either side (View on both assets)',
        params: IdParams,
        response: { 200: Type.Array(Relationship), ...errorResponses(...AUTHENTICATED_ERRORS, 'not_found') },
      },
    },
    async (request) => listLinks(deps, principalOf(request), request.params.id),
  );
  app.post(
    '/asset/:id/link',
    {
      schema: {
        operationId: 'CreateRelationship',
        tags,
        summary: 'Relate assets to this one (Relationship permission); per-item results',
        params: IdParams,
        body: LinkBody,
        response: { 200: LinkResults, ...write },
      },
    },
    async (request) => createLinks(deps, principalOf(request), request.params.id, request.body.secondaryIds),
  );
  app.patch(
    '/asset/:id/link',
    {
      schema: {
        operationId: 'RemoveRelationship',
        tags,
        summary: 'Remove relationships of this asset (Relationship permission); per-item results',
        params: IdParams,
        body: LinkBody,
        response: { 200: LinkResults, ...write },
      },
    },
    async (request) => removeLinks(deps, principalOf(request), request.params.id, request.body.secondaryIds),
  );
}
