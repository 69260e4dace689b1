import { Type } from 'typebox';
import type { Deps } from '../../../deps.ts';
import type { App } from '../../../core/http/app-types.ts';
import { clientIp, principalOf } from '../../../core/http/authenticate.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../../../core/http/responses.ts';
import {
  IdParamsSchema,
  InvitationAcceptedSchema,
  InvitationAcceptSchema,
  InvitationSchema,
} from '../identity.schemas.ts';
import { acceptInvitation, createInvitation } from './invitations.service.ts';

const tags = ['people'];

export function invitationRoutes(app: App, deps: Deps): void {
  app.post(
    '/user/:id/invitation',
    {
      schema: {
        operationId: 'InviteUser',
        tags,
        summary:
          'A one-time link for a local user to choose their password (User Management; shown once, works for 7 days, replaces an earlier invitation)',
        params: IdParamsSchema,
        body: Type.Object({}, { additionalProperties: false, description: 'Nothing: send no body or an empty object' }),
        response: {
          200: InvitationSchema,
          ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'not_found', 'conflict'),
        },
      },
      // Nothing is read from the body; clients that send none are served too.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return createInvitation(deps, principalOf(request), request.params.id, clientIp(request));
    },
  );

  app.post(
    '/user/invitation/accept',
    {
      config: { public: true },
      schema: {
        operationId: 'AcceptInvitation',
        tags,
        summary: "Set your password with an invitation's token (no sign-in; the token works once)",
        security: [],
        body: InvitationAcceptSchema,
        response: {
          200: InvitationAcceptedSchema,
          ...errorResponses('validation_failed', 'conflict', 'gone'),
        },
      },
    },
    async (request) => acceptInvitation(deps, request.body, clientIp(request)),
  );
}
