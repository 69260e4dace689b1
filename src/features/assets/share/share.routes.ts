import { Type } from 'typebox';
import { docRequired } from '../../../core/http/doc-schema.ts';
import type { Deps } from '../../../deps.ts';
import type { App } from '../../../core/http/app-types.ts';
import { principalOf } from '../../../core/http/authenticate.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../../../core/http/responses.ts';
import { revokeAssetShare, shareAssets } from './share.service.ts';

const tags = ['assets'];

const ShareBody = Type.Object({
  sender: Type.Optional(Type.Object({ name: Type.Optional(Type.String({ maxLength: 200 })) })),
  shareUsers: Type.Optional(
    Type.Array(
      Type.Object({
        email: Type.Optional(Type.String({ maxLength: 320 })),
        name: Type.Optional(Type.String({ maxLength: 200 })),
      }),
      { maxItems: 100 },
    ),
  ),
  assets: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 500 })),
  shareMessage: Type.Optional(Type.String({ maxLength: 5000 })),
  expiration: Type.Optional(Type.Integer({ description: 'Seconds the links stay valid (default 7 days)' })),
});
// Required by the service, which names a missing one with the reference's message (core/http/doc-schema.ts).
docRequired(ShareBody, ['sender', 'shareUsers', 'assets']);
// The reference's example (§7.15).
Object.assign(ShareBody, {
  examples: [
    {
      sender: { name: 'Jane Smith' },
      shareUsers: [{ email: 'john.doe@example.com', name: 'John Doe' }],
      assets: ['8f1c7d2e-0a4b-4c5d-9e6f-1a2b3c4d5e6f'],
      shareMessage: 'Here are the assets',
    },
  ],
});
docRequired(ShareBody.properties.sender, ['name']);
docRequired(ShareBody.properties.shareUsers.items, ['email']);
const ShareResponse = Type.Object({
  status: Type.Literal('success'),
  message: Type.String(),
  mailQueued: Type.Boolean({
    description:
      'A mail per recipient is in the outbox; the workers deliver it, retrying while the SMTP server is unavailable',
  }),
  mailIds: Type.Array(Type.String(), {
    description: 'Outbox ids of the queued mails, one per recipient (empty when SMTP is not configured)',
  }),
  links: Type.Array(
    Type.Object({ assetId: Type.String(), filename: Type.String(), url: Type.String(), expiresEpoch: Type.Integer() }),
  ),
  shareId: Type.String({ description: 'The share: DELETE /v1/asset/share/{shareId} revokes every link it made' }),
});

/** Share assets by e-mail: a time-limited link per asset, a mail per recipient through the outbox. */
export function shareRoutes(app: App, deps: Deps): void {
  app.post(
    '/asset/share',
    {
      schema: {
        operationId: 'ShareAssets',
        tags,
        summary: 'Share assets by e-mail: a time-limited link per asset (Download permission)',
        body: ShareBody,
        response: { 200: ShareResponse, ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden') },
      },
    },
    async (request) => shareAssets(deps, principalOf(request), request.body),
  );

  app.delete(
    '/asset/share/:shareId',
    {
      schema: {
        operationId: 'RevokeAssetShare',
        tags,
        summary:
          'Revoke an asset share: every link it made answers 410 at once. The sharer, or someone who may share every asset in it',
        params: Type.Object({ shareId: Type.String({ format: 'uuid' }) }),
        response: {
          204: Type.Null({ description: 'Revoked' }),
          ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'not_found'),
        },
      },
    },
    async (request, reply) => {
      await revokeAssetShare(deps, principalOf(request), request.params.shareId);
      return reply.code(204).send(null);
    },
  );
}
