import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../../deps.ts';
import type { App } from '../../core/http/app-types.ts';
import { clientIp, principalOf } from '../../core/http/authenticate.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../../core/http/responses.ts';
import {
  ExpireRequestSchema,
  ExpireResponseSchema,
  ImpersonateRequestSchema,
  RevokedCountSchema,
  SessionIdParamsSchema,
  UserIdParamsSchema,
  UserSessionParamsSchema,
  SessionListSchema,
  SessionResponseSchema,
  TokenRequestSchema,
} from './auth.schemas.ts';
import { impersonate } from './impersonation/impersonation.service.ts';
import {
  expireToken,
  listSessions,
  listUserSessions,
  revokeAllOwnSessions,
  revokeOwnSession,
  revokeUserSessionsAsAdmin,
} from './sessions/sessions.service.ts';
import { presentedToken } from './token-resolver.ts';
import { tokenRequest } from './sessions/token-request.ts';

const tags = ['authentication'];
const meta = (request: FastifyRequest) => ({ ip: clientIp(request), userAgent: request.headers['user-agent'] });

export function authRoutes(app: App, deps: Deps): void {
  app.addSchema(SessionResponseSchema);
  const AuthSession = Type.Ref('AuthSession');

  app.post(
    '/auth/token',
    {
      config: { public: true },
      schema: {
        operationId: 'GetAuthToken',
        tags,
        summary:
          'New token (username + password) or refresh (refreshToken, optionally with its accessToken; the same refresh token is returned)',
        security: [],
        body: TokenRequestSchema,
        response: {
          200: AuthSession,
          ...errorResponses('validation_failed', 'unauthorized', 'rate_limited', 'service_unavailable'),
        },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return tokenRequest(deps, request.body, meta(request));
    },
  );

  app.delete(
    '/auth/token',
    {
      config: { public: true },
      schema: {
        operationId: 'ExpireToken',
        tags,
        summary: 'Expire the token sent in AccessToken or Authorization (raw or Bearer), with its whole refresh family',
        security: [{ AccessToken: [] }, { bearerAuth: [] }],
        headers: Type.Object({
          accesstoken: Type.Optional(Type.String({ maxLength: 8192 })),
          authorization: Type.Optional(Type.String({ maxLength: 8192 })),
        }),
        body: ExpireRequestSchema,
        response: { 200: ExpireResponseSchema, ...errorResponses('validation_failed', 'unauthorized') },
      },
      // The body only echoes the session; clients that send none are served too.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request) => expireToken(deps, presentedToken(request), request.body, clientIp(request)),
  );

  app.post(
    '/auth/impersonate',
    {
      schema: {
        operationId: 'Impersonate',
        tags,
        summary: 'Tokens acting as another user of your organization (Impersonate privilege; not refreshable)',
        body: ImpersonateRequestSchema,
        response: {
          200: AuthSession,
          ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'not_found'),
        },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return impersonate(deps, principalOf(request), request.body, meta(request));
    },
  );

  app.get(
    '/auth/sessions',
    {
      schema: {
        operationId: 'GetSessions',
        tags,
        summary: 'Your active sessions',
        response: { 200: SessionListSchema, ...errorResponses(...AUTHENTICATED_ERRORS) },
      },
    },
    async (request) => listSessions(deps, principalOf(request)),
  );

  app.delete(
    '/auth/sessions/:id',
    {
      schema: {
        operationId: 'ExpireSession',
        tags,
        summary: 'End one of your sessions',
        params: SessionIdParamsSchema,
        response: {
          204: Type.Null({ description: 'Ended' }),
          ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'not_found'),
        },
      },
    },
    async (request, reply) => {
      await revokeOwnSession(deps, principalOf(request), request.params.id, clientIp(request));
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/auth/sessions',
    {
      schema: {
        operationId: 'ExpireAllSessions',
        tags,
        summary: 'End all your sessions (sign out everywhere)',
        response: { 200: RevokedCountSchema, ...errorResponses(...AUTHENTICATED_ERRORS) },
      },
    },
    async (request) => revokeAllOwnSessions(deps, principalOf(request), clientIp(request)),
  );

  app.get(
    '/user/:id/sessions',
    {
      schema: {
        operationId: 'GetUserSessions',
        tags,
        summary: "A user's active sessions (User Management)",
        params: UserIdParamsSchema,
        response: {
          200: SessionListSchema,
          ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'not_found'),
        },
      },
    },
    async (request) => listUserSessions(deps, principalOf(request), request.params.id),
  );

  app.delete(
    '/user/:id/sessions/:sessionId',
    {
      schema: {
        operationId: 'ExpireUserSession',
        tags,
        summary: "End one of a user's sessions (User Management; not of someone holding more than you)",
        params: UserSessionParamsSchema,
        response: {
          204: Type.Null({ description: 'Ended' }),
          ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'not_found'),
        },
      },
    },
    async (request, reply) => {
      await revokeUserSessionsAsAdmin(
        deps,
        principalOf(request),
        request.params.id,
        request.params.sessionId,
        clientIp(request),
      );
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/user/:id/sessions',
    {
      schema: {
        operationId: 'ExpireAllUserSessions',
        tags,
        summary: "End all of a user's sessions (User Management; not of someone holding more than you)",
        params: UserIdParamsSchema,
        response: {
          200: RevokedCountSchema,
          ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'not_found'),
        },
      },
    },
    async (request) =>
      revokeUserSessionsAsAdmin(deps, principalOf(request), request.params.id, undefined, clientIp(request)),
  );
}
