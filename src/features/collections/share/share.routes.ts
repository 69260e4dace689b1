import { Type } from 'typebox';
import { docRequired } from '../../../core/http/doc-schema.ts';
import type { Deps } from '../../../deps.ts';
import type { App } from '../../../core/http/app-types.ts';
import { principalOf } from '../../../core/http/authenticate.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../../../core/http/responses.ts';
import { SignedQuery } from '../../assets/index.ts';
import { revokeShare, serveShare, shareCollection } from './share.service.ts';

const tags = ['collections'];

const ShareBodySchema = Type.Object({
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
  shareMessage: Type.Optional(Type.String({ maxLength: 5000 })),
  expiration: Type.Optional(
    Type.Integer({ description: 'Seconds the links stay valid (60 to 2592000; default 7 days)' }),
  ),
});

// Required by the service, which names a missing one with the reference's message (core/http/doc-schema.ts).
docRequired(ShareBodySchema, ['sender', 'shareUsers']);
// The reference's CollectionShareRequest example (§9.6).
Object.assign(ShareBodySchema, {
  examples: [
    {
      sender: { name: 'Jane Smith' },
      shareUsers: [{ email: 'john.doe@example.com', name: 'John Doe' }],
      shareMessage: 'Here is the collection',
    },
  ],
});
docRequired(ShareBodySchema.properties.sender, ['name']);
docRequired(ShareBodySchema.properties.shareUsers.items, ['email']);
const ShareStartedSchema = Type.Object({
  StatusCode: Type.Integer({
    description: "The reference's Lambda-invoke envelope: 200 (the invocation's status; the HTTP status is 202)",
    examples: [200],
  }),
  ExecutedVersion: Type.String({
    description: "The reference's Lambda-invoke envelope: always $LATEST",
    examples: ['$LATEST'],
  }),
  Payload: Type.String({
    description:
      "JSON text of {statusCode: 200, body}, body the JSON text of {message} (the reference's envelope; the same message as `message`)",
  }),
  status: Type.Literal('success'),
  message: Type.String(),
  actionId: Type.String({ format: 'uuid', description: 'Follow GET /v1/action/{actionId}' }),
  jobId: Type.String({ format: 'uuid', description: 'Same as actionId' }),
  mailSent: Type.Boolean({ description: 'Always false here: mail goes when the zips are ready (see `mail`)' }),
  mail: Type.Union([Type.Literal('queued'), Type.Literal('not_configured')], {
    description:
      'queued: each recipient is mailed a link when the zips are ready; not_configured: no SMTP, the links are below',
  }),
  expiresEpoch: Type.Integer({ description: 'When the links stop working (epoch ms)' }),
  links: Type.Array(Type.Object({ email: Type.String(), url: Type.String(), expiresEpoch: Type.Integer() }), {
    description: 'Only when no mail is sent',
  }),
});

export function shareRoutes(app: App, deps: Deps): void {
  app.post(
    '/collection/:id/share',
    {
      preValidation: async (request: { body: unknown }) => {
        request.body ??= {};
      },
      schema: {
        operationId: 'ShareCollection',
        tags,
        summary:
          'Share a collection by e-mail: each recipient gets a time-limited link to a zip of the members they may see, built as an Action (202)',
        params: Type.Object({ id: Type.String({ maxLength: 100 }) }),
        body: ShareBodySchema,
        response: {
          202: ShareStartedSchema,
          ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'not_found'),
        },
      },
    },
    async (request, reply) =>
      reply.code(202).send(await shareCollection(deps, principalOf(request), request.params.id, request.body)),
  );

  app.delete(
    '/collection/:id/share/:shareId',
    {
      schema: {
        operationId: 'RevokeCollectionShare',
        tags,
        summary:
          'Revoke a collection share (its actionId): its links answer 410 at once and its zips are removed. The sharer, or someone who may edit the collection',
        params: Type.Object({ id: Type.String({ maxLength: 100 }), shareId: Type.String({ format: 'uuid' }) }),
        response: {
          204: Type.Null({ description: 'Revoked' }),
          ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'not_found'),
        },
      },
    },
    async (request, reply) => {
      await revokeShare(deps, principalOf(request), request.params.id, request.params.shareId);
      return reply.code(204).send(null);
    },
  );

  // The links mailed by a share: the signature is the permission.
  app.get(
    '/collection-share/:shareId/:recipient',
    {
      config: { public: true },
      schema: {
        operationId: 'GetSharedCollectionZip',
        tags,
        summary: 'The zip behind a collection-share link (signed, expiring)',
        security: [],
        params: Type.Object({
          shareId: Type.String({ format: 'uuid' }),
          recipient: Type.String({ pattern: '^[0-9]{1,3}$' }),
        }),
        querystring: SignedQuery,
        response: {
          200: Type.String({ format: 'binary', description: 'The zip (206 for a range request, 304 when unchanged)' }),
          206: Type.String({ format: 'binary' }),
          304: Type.Null({ description: 'Not modified' }),
          416: Type.Ref('Error', { description: 'Range Not Satisfiable' }),
          ...errorResponses('validation_failed', 'forbidden', 'not_found', 'gone'),
        },
      },
    },
    async (request, reply) => serveShare(deps, request, reply, request.params, request.query),
  );
}
