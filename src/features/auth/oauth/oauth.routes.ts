import formbody from '@fastify/formbody';
import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../../../deps.ts';
import type { App } from '../../../core/http/app-types.ts';
import { AppError } from '../../../core/http/errors.ts';
import { toAppError } from '../../../core/http/error-handler.ts';
import { clientIp, principalOf } from '../../../core/http/authenticate.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../../../core/http/responses.ts';
import {
  AuthorizeFormSchema,
  AuthorizeQuerySchema,
  ClientIdParamsSchema,
  ConsentClientParamsSchema,
  ConsentRevokedSchema,
  EndSessionQuerySchema,
  OAuthConsentListSchema,
  OAuthClientCreateSchema,
  OAuthClientCreatedSchema,
  OAuthClientListSchema,
  OAuthClientSchema,
  OAuthClientSecretSchema,
  OAuthClientUpdateSchema,
  OAuthErrorSchema,
  OAuthTokenResponseSchema,
  RevokeFormSchema,
  TokenFormSchema,
} from './oauth.schemas.ts';
import {
  createClient,
  deleteClient,
  getClient,
  listClients,
  rotateClientSecret,
  updateClient,
} from './clients/oauth-clients.service.ts';
import { listConsents, revokeConsent } from './oauth-consents.service.ts';
import { errorPage, loginPage, noticePage, pageSecurity, type LoginProvider } from './login-page/oauth.page.ts';
import { endSession, type ProviderLogout } from './end-session.service.ts';
import { isUuid } from '../../../core/ids.ts';
import { isWebAppClient } from './clients/web-app-client.ts';
import {
  approve,
  authenticateClient,
  checkAuthorizeRequest,
  denyRedirect,
  exchangeCode,
  OAuthError,
  refreshGrant,
  revokeToken,
  type AuthorizeParams,
} from './oauth.service.ts';

const tags = ['oauth2'];
const CSRF_COOKIE = 'tessera_oauth_csrf';
const Html = (description: string, headers?: Record<string, unknown>) => ({
  description,
  ...(headers ? { headers } : {}),
  content: { 'text/html': { schema: Type.String() } },
});
const RetryAfter = { 'Retry-After': { type: 'string', description: 'Seconds to wait before trying again' } };
/** A page for a person, or Tessera's JSON error when the request never reached the page (a field the schema refuses). */
const HtmlOrError = (description: string, headers?: Record<string, unknown>) => ({
  description,
  ...(headers ? { headers } : {}),
  content: { 'text/html': { schema: Type.String() }, 'application/json': { schema: Type.Ref('Error') } },
});
const meta = (request: FastifyRequest) => ({ ip: clientIp(request), userAgent: request.headers['user-agent'] });

function cookieValue(request: FastifyRequest, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return v.join('=');
  }
  return undefined;
}

function sendPage(reply: FastifyReply, status: number, html: string, csp: string): FastifyReply {
  return reply
    .code(status)
    .headers({
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': csp,
      'cache-control': 'no-store',
      'x-frame-options': 'DENY',
    })
    .send(html);
}

/**
 * The token and revocation endpoints answer every failure in RFC 6749 §5.2's form, validation and
 * media-type errors included (`invalid_request`), never in Tessera's general error format.
 */
function oauthErrorHandler(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error instanceof OAuthError) return sendOAuthError(reply, error);
  const appError = toAppError(error);
  if (appError.status >= 500) {
    request.log.error({ err: error }, 'request failed');
    return reply
      .code(500)
      .header('cache-control', 'no-store')
      .send({ error: 'server_error', error_description: 'Internal server error' });
  }
  if (appError.status === 429)
    return reply
      .code(429)
      .headers({ ...appError.headers, 'cache-control': 'no-store' })
      .send({ error: 'temporarily_unavailable', error_description: appError.message });
  return sendOAuthError(
    reply,
    new OAuthError(
      appError.status === 401 ? 'invalid_client' : 'invalid_request',
      appError.message,
      appError.status === 401 ? 401 : 400,
    ),
  );
}

function sendOAuthError(reply: FastifyReply, error: OAuthError): FastifyReply {
  if (error.status === 401) reply.header('www-authenticate', 'Basic realm="tessera"');
  return reply
    .code(error.status)
    .header('cache-control', 'no-store')
    .send({ error: error.error, error_description: error.message });
}

/** Hooks from other features, wired in app.ts: single sign-on (features/sso). */
export interface OAuthHooks {
  /** The identity providers the login page offers for an organization; each link carries the authorization request. */
  loginProviders?: (orgId: string, request: Record<string, string>) => Promise<LoginProvider[]>;
  /** Where to send a person whose session came from an identity provider, to sign out there too. */
  providerLogout?: ProviderLogout;
}

/** Everything under /v1/oauth2: client registration (administrators) and the authorization server (public). */
export async function oauthRoutes(v1: App, deps: Deps, hooks: OAuthHooks = {}): Promise<void> {
  await v1.register(
    async (app: App) => {
      // Form bodies (RFC 6749) are parsed only in this scope.
      await app.register(formbody);
      app.addSchema(OAuthClientSchema);

      app.post(
        '/clients',
        {
          schema: {
            operationId: 'CreateOAuthClient',
            tags,
            summary: 'Register an OAuth client (User Management)',
            body: OAuthClientCreateSchema,
            response: {
              201: OAuthClientCreatedSchema,
              ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden'),
            },
          },
        },
        async (request, reply) =>
          reply.code(201).send(await createClient(deps, principalOf(request), request.body, clientIp(request))),
      );

      app.get(
        '/clients',
        {
          schema: {
            operationId: 'GetOAuthClients',
            tags,
            summary: 'OAuth clients of your organization (User Management)',
            response: { 200: OAuthClientListSchema, ...errorResponses(...AUTHENTICATED_ERRORS, 'forbidden') },
          },
        },
        async (request) => listClients(deps, principalOf(request)),
      );

      app.get(
        '/clients/:id',
        {
          schema: {
            operationId: 'GetOAuthClient',
            tags,
            summary: 'One OAuth client (User Management)',
            params: ClientIdParamsSchema,
            response: {
              200: Type.Ref('OAuthClient'),
              ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'not_found'),
            },
          },
        },
        async (request) => getClient(deps, principalOf(request), request.params.id),
      );

      app.patch(
        '/clients/:id',
        {
          schema: {
            operationId: 'UpdateOAuthClient',
            tags,
            summary: 'Rename an OAuth client or replace its redirect URIs (User Management)',
            params: ClientIdParamsSchema,
            body: OAuthClientUpdateSchema,
            response: {
              200: Type.Ref('OAuthClient'),
              ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'not_found', 'conflict'),
            },
          },
        },
        async (request) => updateClient(deps, principalOf(request), request.params.id, request.body, clientIp(request)),
      );

      app.post(
        '/clients/:id/secret',
        {
          // Nothing to send: a request without a body is the usual one.
          preValidation: async (request) => {
            request.body ??= {};
          },
          schema: {
            operationId: 'RotateOAuthClientSecret',
            tags,
            summary:
              'Give a confidential OAuth client a new secret, shown once; the old one stops working (User Management)',
            params: ClientIdParamsSchema,
            body: Type.Optional(Type.Object({}, { additionalProperties: false, description: 'Nothing: send no body' })),
            response: {
              200: OAuthClientSecretSchema,
              ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'not_found', 'conflict'),
            },
          },
        },
        async (request) => rotateClientSecret(deps, principalOf(request), request.params.id, clientIp(request)),
      );

      app.delete(
        '/clients/:id',
        {
          schema: {
            operationId: 'DeleteOAuthClient',
            tags,
            summary: 'Delete an OAuth client and end its sessions (User Management)',
            params: ClientIdParamsSchema,
            response: {
              204: Type.Null({ description: 'Deleted' }),
              ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden', 'not_found'),
            },
          },
        },
        async (request, reply) => {
          await deleteClient(deps, principalOf(request), request.params.id, clientIp(request));
          return reply.code(204).send(null);
        },
      );

      app.get(
        '/consents',
        {
          schema: {
            operationId: 'GetOAuthConsents',
            tags,
            summary: 'OAuth clients you have authorized that still hold open sessions in your name',
            response: { 200: OAuthConsentListSchema, ...errorResponses(...AUTHENTICATED_ERRORS) },
          },
        },
        async (request) => listConsents(deps, principalOf(request)),
      );

      app.delete(
        '/consents/:clientId',
        {
          schema: {
            operationId: 'RevokeOAuthConsent',
            tags,
            summary:
              'Withdraw your consent to an OAuth client: every access and refresh token it holds for you ends at once',
            params: ConsentClientParamsSchema,
            response: {
              200: ConsentRevokedSchema,
              ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'not_found'),
            },
          },
        },
        async (request) => revokeConsent(deps, principalOf(request), request.params.clientId, clientIp(request)),
      );

      const showLogin = async (
        request: FastifyRequest,
        reply: FastifyReply,
        params: AuthorizeParams & { organization?: string },
        extra: { status?: number; error?: string; username?: string; headers?: Record<string, string> } = {},
      ) => {
        const check = await checkAuthorizeRequest(deps, params);
        if (check.kind === 'page_error') {
          const sec = pageSecurity();
          return sendPage(reply, 400, errorPage(check.message, sec), sec.csp);
        }
        if (check.kind === 'redirect_error') return reply.redirect(check.location, 303);
        let csrfCookie = cookieValue(request, CSRF_COOKIE);
        if (!csrfCookie || !/^[A-Za-z0-9_-]{43}$/.test(csrfCookie)) {
          csrfCookie = randomBytes(32).toString('base64url');
          const secure = deps.config.publicUrl.startsWith('https:') ? '; Secure' : '';
          reply.header(
            'set-cookie',
            `${CSRF_COOKIE}=${csrfCookie}; Path=/v1/oauth2; HttpOnly; SameSite=Strict; Max-Age=1800${secure}`,
          );
        }
        if (extra.headers) reply.headers(extra.headers);
        const sec = pageSecurity([new URL(check.redirectUri).origin]);
        // A registered client belongs to one organization; the web app serves all, so it names one (?organization=).
        const providerOrg = isWebAppClient(check.client)
          ? params.organization && isUuid(params.organization)
            ? params.organization
            : undefined
          : check.client.org_id;
        const providers =
          providerOrg && hooks.loginProviders ? await hooks.loginProviders(providerOrg, check.params) : [];
        const html = loginPage(
          {
            clientName: check.client.name,
            scope: check.scope,
            // The web app's organization stays on the form, so a page shown again after an error still offers its providers.
            params:
              isWebAppClient(check.client) && providerOrg
                ? { ...check.params, organization: providerOrg }
                : check.params,
            csrf: deps.keys.hash('oauth-csrf', csrfCookie),
            error: extra.error,
            username: extra.username,
            firstParty: isWebAppClient(check.client),
            providers,
          },
          sec,
        );
        return sendPage(reply, extra.status ?? 200, html, sec.csp);
      };

      app.get(
        '/authorize',
        {
          config: { public: true },
          schema: {
            operationId: 'OAuthAuthorize',
            tags,
            summary: 'Authorization endpoint: login and consent page (code flow, PKCE S256)',
            security: [],
            querystring: AuthorizeQuerySchema,
            response: {
              200: Html('The login and consent page'),
              303: Type.Null({
                description: 'Error redirect to the client (RFC 6749 §4.1.2.1)',
                headers: { Location: { type: 'string', description: 'redirect_uri with error and state' } },
              }),
              400: HtmlOrError(
                'An error page (unknown client, redirect_uri not registered), or a JSON error naming a query field the schema refuses',
              ),
            },
          },
        },
        async (request, reply) => showLogin(request, reply, request.query),
      );

      app.post(
        '/authorize',
        {
          config: { public: true },
          schema: {
            operationId: 'OAuthAuthorizeSubmit',
            tags,
            summary: 'Login-and-consent form submission',
            security: [],
            body: AuthorizeFormSchema,
            response: {
              303: Type.Null({
                description: 'Redirect to the client with a code or an error',
                headers: { Location: { type: 'string', description: 'redirect_uri with code (or error) and state' } },
              }),
              400: HtmlOrError(
                'The page again with the error (no username or password), or a JSON error naming a form field the schema refuses',
              ),
              401: Html('The page again: incorrect username or password'),
              403: Html('The form expired or did not come from this page, or the web app is turned off'),
              429: Html('The page again: too many failed sign-ins (Retry-After)', RetryAfter),
              503: HtmlOrError(
                'The page again: too many sign-ins in progress; or a JSON error when the database is busy',
                RetryAfter,
              ),
            },
          },
        },
        async (request, reply) => {
          const form = request.body;
          const cookie = cookieValue(request, CSRF_COOKIE);
          if (!cookie || !form.csrf || !deps.keys.verify('oauth-csrf', cookie, form.csrf)) {
            const sec = pageSecurity();
            return sendPage(
              reply,
              403,
              errorPage('The form expired or was not sent from this page. Go back and try again.', sec),
              sec.csp,
            );
          }
          const check = await checkAuthorizeRequest(deps, form);
          if (check.kind !== 'ok') return showLogin(request, reply, form);
          if (form.decision !== 'allow') return reply.redirect(denyRedirect(deps, check), 303);
          if (!form.username || !form.password)
            return showLogin(request, reply, form, {
              status: 400,
              error: 'Enter your username and password.',
              username: form.username,
            });
          try {
            return reply.redirect(await approve(deps, check, form.username, form.password, meta(request)), 303);
          } catch (error) {
            if (!(error instanceof AppError) || (error.status >= 500 && error.status !== 503)) throw error;
            const message = error.status === 401 ? 'Incorrect username or password.' : error.message;
            return showLogin(request, reply, form, {
              status: error.status,
              error: message,
              username: form.username,
              headers: error.headers,
            });
          }
        },
      );

      app.get(
        '/logout',
        {
          config: { public: true },
          schema: {
            operationId: 'OAuthEndSession',
            tags,
            summary:
              'End-session endpoint (RP-initiated logout): ends the session of id_token_hint, signs out at its identity provider when it came from one, then returns to post_logout_redirect_uri',
            security: [],
            querystring: EndSessionQuerySchema,
            response: {
              200: Html('A page saying the session has ended'),
              303: Type.Null({ description: 'On to the provider or back to the client' }),
              400: HtmlOrError('A page naming what is wrong with the request'),
            },
          },
        },
        async (request, reply) => {
          const outcome = await endSession(deps, request.query, { ip: clientIp(request) }, hooks.providerLogout);
          if (outcome.kind === 'redirect')
            return reply.header('cache-control', 'no-store').redirect(outcome.location, 303);
          const sec = pageSecurity();
          const html =
            outcome.status === 200 ? noticePage('Signed out', outcome.message, sec) : errorPage(outcome.message, sec);
          return sendPage(reply, outcome.status, html, sec.csp);
        },
      );

      app.post(
        '/token',
        {
          config: { public: true },
          errorHandler: oauthErrorHandler,
          schema: {
            operationId: 'OAuthToken',
            tags,
            summary: 'Token endpoint (authorization_code with PKCE, refresh_token); application/x-www-form-urlencoded',
            security: [],
            body: TokenFormSchema,
            response: { 200: OAuthTokenResponseSchema, 400: OAuthErrorSchema, 401: OAuthErrorSchema },
          },
        },
        async (request, reply) => {
          const form = request.body;
          try {
            const client = await authenticateClient(deps, {
              authorization: request.headers.authorization,
              client_id: form.client_id,
              client_secret: form.client_secret,
            });
            let tokens;
            if (form.grant_type === 'authorization_code')
              tokens = await exchangeCode(deps, client, form, meta(request));
            else if (form.grant_type === 'refresh_token') tokens = await refreshGrant(deps, client, form.refresh_token);
            else
              throw new OAuthError(
                form.grant_type ? 'unsupported_grant_type' : 'invalid_request',
                form.grant_type ? 'Supported: authorization_code, refresh_token' : 'grant_type is required',
              );
            return reply.headers({ 'cache-control': 'no-store', pragma: 'no-cache' }).send(tokens);
          } catch (error) {
            if (error instanceof OAuthError) return sendOAuthError(reply, error);
            throw error;
          }
        },
      );

      app.post(
        '/revoke',
        {
          config: { public: true },
          errorHandler: oauthErrorHandler,
          schema: {
            operationId: 'OAuthRevoke',
            tags,
            summary: 'Token revocation (RFC 7009): ends the session of a refresh or access token',
            security: [],
            body: RevokeFormSchema,
            response: {
              200: Type.Null({ description: 'Revoked, or the token was unknown: no body (RFC 7009 §2.2)' }),
              400: OAuthErrorSchema,
              401: OAuthErrorSchema,
            },
          },
        },
        async (request, reply) => {
          try {
            const client = await authenticateClient(deps, {
              authorization: request.headers.authorization,
              client_id: request.body.client_id,
              client_secret: request.body.client_secret,
            });
            await revokeToken(deps, client, request.body.token);
            // No body (RFC 7009 §2.2), as declared; send(null) would write a JSON `null`.
            return (reply as FastifyReply).code(200).send();
          } catch (error) {
            if (error instanceof OAuthError) return sendOAuthError(reply, error);
            throw error;
          }
        },
      );
    },
    { prefix: '/oauth2' },
  );
}
