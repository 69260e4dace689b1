import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../../deps.ts';
import type { App } from '../../core/http/app-types.ts';
import { clientIp, principalOf } from '../../core/http/authenticate.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../../core/http/responses.ts';
import { errorPage, noticePage, pageSecurity } from '../auth/index.ts';
import {
  CallbackQuerySchema,
  LoggedOutQuerySchema,
  ProviderIdParamsSchema,
  SignInQuerySchema,
  SsoProviderCreateSchema,
  SsoProviderListSchema,
  SsoProviderSchema,
  SsoProviderUpdateSchema,
} from './sso.schemas.ts';
import { createProvider, deleteProvider, getProvider, listProviders, updateProvider } from './providers.service.ts';
import { BROWSER_COOKIE, finishSignIn, loggedOut, startSignIn, SIGNIN_TTL_MS, type Outcome } from './signin.service.ts';

const tags = ['sso'];
const Html = { content: { 'text/html': { schema: Type.String() } } };

function cookieValue(request: FastifyRequest, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return v.join('=');
  }
  return undefined;
}

function send(deps: Deps, reply: FastifyReply, outcome: Outcome, title = 'Sign-in'): FastifyReply {
  reply.header('cache-control', 'no-store');
  if (outcome.kind === 'redirect') {
    if (outcome.cookie) {
      const secure = deps.config.publicUrl.startsWith('https:') ? '; Secure' : '';
      // Lax: the provider sends the browser back with a top-level GET from its own site.
      reply.header(
        'set-cookie',
        `${BROWSER_COOKIE}=${outcome.cookie}; Path=/v1/sso; HttpOnly; SameSite=Lax; Max-Age=${SIGNIN_TTL_MS / 1000}${secure}`,
      );
    }
    return reply.redirect(outcome.location, 303);
  }
  const sec = pageSecurity();
  const html = outcome.status < 400 ? noticePage(title, outcome.message, sec) : errorPage(outcome.message, sec);
  return reply
    .code(outcome.status)
    .headers({
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': sec.csp,
      'x-frame-options': 'DENY',
    })
    .send(html);
}

/** /v1/sso: identity providers (administrators) and the sign-in through them (public, browser). */
export function ssoRoutes(v1: App, deps: Deps): void {
  v1.addSchema(SsoProviderSchema);
  const Provider = Type.Ref('SsoProvider');

  v1.post(
    '/sso/providers',
    {
      schema: {
        operationId: 'CreateSsoProvider',
        tags,
        summary: 'Add an OpenID Connect identity provider (User Management); its discovery document is read at once',
        body: SsoProviderCreateSchema,
        response: {
          201: Provider,
          ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'unprocessable'),
        },
      },
    },
    async (request, reply) => reply.code(201).send(await createProvider(deps, principalOf(request), request.body)),
  );

  v1.get(
    '/sso/providers',
    {
      schema: {
        operationId: 'GetSsoProviders',
        tags,
        summary: "The organization's identity providers (User Management)",
        response: { 200: SsoProviderListSchema, ...errorResponses(...AUTHENTICATED_ERRORS, 'forbidden') },
      },
    },
    async (request) => listProviders(deps, principalOf(request)),
  );

  v1.get(
    '/sso/providers/:id',
    {
      schema: {
        operationId: 'GetSsoProvider',
        tags,
        summary: 'One identity provider (User Management)',
        params: ProviderIdParamsSchema,
        response: {
          200: Provider,
          ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'not_found'),
        },
      },
    },
    async (request) => getProvider(deps, principalOf(request), request.params.id),
  );

  v1.patch(
    '/sso/providers/:id',
    {
      schema: {
        operationId: 'UpdateSsoProvider',
        tags,
        summary: 'Change an identity provider (User Management); a new issuer is discovered again',
        params: ProviderIdParamsSchema,
        body: SsoProviderUpdateSchema,
        response: {
          200: Provider,
          ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'not_found', 'unprocessable'),
        },
      },
    },
    async (request) => updateProvider(deps, principalOf(request), request.params.id, request.body),
  );

  v1.delete(
    '/sso/providers/:id',
    {
      schema: {
        operationId: 'DeleteSsoProvider',
        tags,
        summary: 'Remove an identity provider (User Management); accounts made through it stay',
        params: ProviderIdParamsSchema,
        response: {
          204: Type.Null({ description: 'Deleted' }),
          ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'not_found'),
        },
      },
    },
    async (request, reply) => {
      await deleteProvider(deps, principalOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  );

  v1.get(
    '/sso/providers/:id/signin',
    {
      config: { public: true },
      schema: {
        operationId: 'SsoSignIn',
        tags,
        summary:
          "Start signing in through an identity provider (linked from the login page); carries the application's authorization request",
        security: [],
        params: ProviderIdParamsSchema,
        querystring: SignInQuerySchema,
        response: {
          303: Type.Null({ description: 'To the identity provider' }),
          400: {
            description: 'An error page, or a JSON error for a malformed URL or a field the schema refuses',
            content: { 'text/html': { schema: Type.String() }, 'application/json': { schema: Type.Ref('Error') } },
          },
          404: Html,
        },
      },
    },
    async (request, reply) => send(deps, reply, await startSignIn(deps, request.params.id, request.query)),
  );

  v1.get(
    '/sso/callback',
    {
      config: { public: true },
      schema: {
        operationId: 'SsoCallback',
        tags,
        summary:
          "The identity provider's answer (redirect URI): checks it, finds or makes the account, maps groups, and returns to the application with a code",
        security: [],
        querystring: CallbackQuerySchema,
        response: {
          303: Type.Null({ description: 'To the application, with a code' }),
          400: Html,
          401: Html,
          403: Html,
        },
      },
    },
    async (request, reply) =>
      send(
        deps,
        reply,
        await finishSignIn(deps, request.query, cookieValue(request, BROWSER_COOKIE), {
          ip: clientIp(request),
          userAgent: request.headers['user-agent'],
        }),
      ),
  );

  v1.get(
    '/sso/logged-out',
    {
      config: { public: true },
      schema: {
        operationId: 'SsoLoggedOut',
        tags,
        summary: "Back from the identity provider's sign-out (post-logout redirect URI)",
        security: [],
        querystring: LoggedOutQuerySchema,
        response: { 200: Html, 303: Type.Null({ description: 'To the application' }) },
      },
    },
    async (request, reply) => send(deps, reply, loggedOut(deps, request.query.state), 'Signed out'),
  );
}
