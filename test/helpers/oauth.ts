import type { LightMyRequestResponse } from 'fastify';
import * as oauth from 'oauth4webapi';
import type { App } from '../../src/core/http/app-types.ts';

/** A fetch for oauth4webapi that goes through app.inject instead of the network. */
export function injectFetch(app: App) {
  return async (url: string, init: RequestInit = {}): Promise<Response> => {
    const u = new URL(url);
    const headers = Object.fromEntries(new Headers(init.headers).entries());
    const res = await app.inject({
      method: (init.method ?? 'GET') as 'GET',
      url: u.pathname + u.search,
      headers,
      payload: init.body === undefined || init.body === null ? undefined : String(init.body),
    });
    const out = new Headers();
    for (const [k, v] of Object.entries(res.headers))
      if (v !== undefined) out.set(k, Array.isArray(v) ? v.join(', ') : String(v));
    return new Response(res.statusCode === 204 ? null : res.rawPayload, { status: res.statusCode, headers: out });
  };
}

export function oauthOptions(app: App) {
  return { [oauth.customFetch]: injectFetch(app), [oauth.allowInsecureRequests]: true } as const;
}

const unescape = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

/** The hidden inputs of the login page, and the CSRF cookie it set. */
export function loginForm(
  page: LightMyRequestResponse,
  cookieFallback?: string,
): { fields: Record<string, string>; cookie: string } {
  const fields: Record<string, string> = {};
  for (const m of page.body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    fields[unescape(m[1]!)] = unescape(m[2]!);
  const setCookie = page.headers['set-cookie'];
  const cookie = (Array.isArray(setCookie) ? setCookie[0] : setCookie)?.split(';')[0] ?? cookieFallback ?? '';
  return { fields, cookie };
}

/** Opens the authorization URL, fills in the login form and submits it; returns the form response (303 to the client on success). */
export async function signInThroughPage(
  app: App,
  authorizationUrl: URL,
  user: { username: string; password: string },
  decision = 'allow',
): Promise<LightMyRequestResponse> {
  const page = await app.inject({ method: 'GET', url: authorizationUrl.pathname + authorizationUrl.search });
  if (page.statusCode !== 200) return page;
  const { fields, cookie } = loginForm(page);
  return app.inject({
    method: 'POST',
    url: '/v1/oauth2/authorize',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    payload: new URLSearchParams({ ...fields, username: user.username, password: user.password, decision }).toString(),
  });
}

const REDIRECT = 'http://127.0.0.1:9/callback';

type InjectCtx = {
  app: App;
  inject: (o: {
    method: 'POST' | 'GET';
    url: string;
    headers?: Record<string, string>;
    payload?: unknown;
  }) => Promise<LightMyRequestResponse>;
};

/** Registers a public client of the administrator's organization; returns its id. */
export async function registerClient(
  ctx: InjectCtx,
  adminHeaders: Record<string, string>,
  name = 'Third party',
): Promise<string> {
  const reg = await ctx.inject({
    method: 'POST',
    url: '/v1/oauth2/clients',
    headers: adminHeaders,
    payload: { name, redirectUris: [REDIRECT] },
  });
  if (reg.statusCode !== 201) throw new Error(`client registration: ${reg.statusCode} ${reg.body}`);
  return (reg.json() as { clientId: string }).clientId;
}

/** The user signs in on the consent page and allows `scope`: an authorization code, not yet exchanged. */
export async function authorizationCode(
  ctx: InjectCtx,
  clientId: string,
  user: { username: string; password: string },
  scope: string,
): Promise<{ code: string; verifier: string }> {
  const verifier = oauth.generateRandomCodeVerifier();
  const url = new URL('http://localhost/v1/oauth2/authorize');
  const params = {
    client_id: clientId,
    redirect_uri: REDIRECT,
    response_type: 'code',
    scope,
    state: 's',
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  };
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  const submitted = await signInThroughPage(ctx.app, url, user);
  const location = submitted.headers.location;
  if (submitted.statusCode !== 303 || !location) throw new Error(`consent: ${submitted.statusCode} ${submitted.body}`);
  const code = new URL(String(location)).searchParams.get('code');
  if (!code) throw new Error(`no code in ${location}`);
  return { code, verifier };
}

/** The client exchanges a code at the token endpoint (the raw response). */
export function exchangeCode(
  ctx: InjectCtx,
  clientId: string,
  grant: { code: string; verifier: string },
): Promise<LightMyRequestResponse> {
  return ctx.app.inject({
    method: 'POST',
    url: '/v1/oauth2/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      grant_type: 'authorization_code',
      code: grant.code,
      redirect_uri: REDIRECT,
      code_verifier: grant.verifier,
      client_id: clientId,
    }).toString(),
  });
}

/** The client uses a refresh token at the token endpoint (the raw response). */
export function refreshAtClient(
  ctx: InjectCtx,
  clientId: string,
  refreshToken: string,
): Promise<LightMyRequestResponse> {
  return ctx.app.inject({
    method: 'POST',
    url: '/v1/oauth2/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: clientId,
    }).toString(),
  });
}

/**
 * A third-party access token for `user` (and its refresh token when offline_access is asked),
 * obtained through the real authorization-code flow with PKCE, by a new public client of `org`
 * unless `clientId` names one already registered.
 */
export async function oauthTokenFor(
  ctx: InjectCtx,
  adminHeaders: Record<string, string>,
  user: { username: string; password: string },
  scope: string,
  options: { clientId?: string } = {},
): Promise<{ accessToken: string; refreshToken?: string; clientId: string; scope: string }> {
  const clientId = options.clientId ?? (await registerClient(ctx, adminHeaders));
  const res = await exchangeCode(ctx, clientId, await authorizationCode(ctx, clientId, user, scope));
  if (res.statusCode !== 200) throw new Error(`token: ${res.statusCode} ${res.body}`);
  const body = res.json() as { access_token: string; refresh_token?: string; scope: string };
  return { accessToken: body.access_token, refreshToken: body.refresh_token, clientId, scope: body.scope };
}
