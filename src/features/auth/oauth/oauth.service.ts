import { createHash, randomBytes } from 'node:crypto';
import type { Deps } from '../../../deps.ts';
import { ALL_OAUTH_SCOPES } from '../../../core/authz/scopes.ts';
import { AppError } from '../../../core/http/errors.ts';
import type { OAuthClientsTable } from '../../../core/db/schema.ts';
import {
  checkPassword,
  insertSessionRows,
  mintTokens,
  type RequestMeta,
  type TokenSubject,
} from '../sessions/tokens.service.ts';
import { activeSubject, rotateRefreshToken } from '../sessions/refresh.service.ts';
import {
  findRefreshToken,
  findSession,
  findTokenSubject,
  revokeSession,
  type SessionRow,
} from '../sessions/sessions.repo.ts';
import {
  clientRedirectUris,
  findActiveClient,
  rehashClientSecret,
  secretMatches,
} from './clients/oauth-clients.service.ts';
import { verifySignature } from '../keys/signing-keys.ts';
import { groupNamesOfUser } from '../../identity/index.ts';
import {
  ensureWebAppClient,
  isWebAppClient,
  sameClient,
  webAppClient,
  webAppClientRowId,
  webAppRedirectAllowed,
  WEB_APP_CLIENT_ID,
} from './clients/web-app-client.ts';

export const CODE_TTL_MS = 60_000;
/** The scopes a client may ask for (their meaning: core/authz/scopes.ts, docs/auth.md). */
export const SCOPES = ALL_OAUTH_SCOPES;
const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

/** An RFC 6749 §5.2 error, answered as `{error, error_description}`. */
export class OAuthError extends Error {
  readonly error: string;
  readonly status: number;
  constructor(error: string, description: string, status = 400) {
    super(description);
    this.error = error;
    this.status = status;
  }
}

export interface AuthorizeParams {
  client_id?: string;
  redirect_uri?: string;
  response_type?: string;
  state?: string;
  scope?: string;
  code_challenge?: string;
  code_challenge_method?: string;
  nonce?: string;
}

export type AuthorizeCheck =
  | { kind: 'page_error'; message: string }
  | { kind: 'redirect_error'; location: string }
  | { kind: 'ok'; client: OAuthClientsTable; redirectUri: string; scope: string; params: Record<string, string> };

/** Adds parameters to a redirect URI (which may already carry a query), always with `iss` (RFC 9207). */
export function redirectTo(deps: Deps, redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  url.searchParams.set('iss', deps.config.publicUrl);
  return url.toString();
}

/**
 * Validates an authorization request. Until the client and its exact redirect URI are known,
 * errors are shown on our page (never redirected to an unverified URI); after that they go
 * back to the client as RFC 6749 §4.1.2.1 error redirects.
 */
export async function checkAuthorizeRequest(deps: Deps, p: AuthorizeParams): Promise<AuthorizeCheck> {
  const client =
    p.client_id === WEB_APP_CLIENT_ID
      ? webAppClient()
      : p.client_id
        ? await findActiveClient(deps.db, p.client_id)
        : undefined;
  if (!client) return { kind: 'page_error', message: 'Unknown or missing client_id.' };
  const redirectOk =
    p.redirect_uri !== undefined &&
    (isWebAppClient(client)
      ? webAppRedirectAllowed(deps.config.publicUrl, p.redirect_uri)
      : clientRedirectUris(client).includes(p.redirect_uri));
  if (!p.redirect_uri || !redirectOk) {
    return { kind: 'page_error', message: 'The redirect_uri is missing or not registered for this client.' };
  }
  const fail = (error: string, description: string): AuthorizeCheck => ({
    kind: 'redirect_error',
    location: redirectTo(deps, p.redirect_uri!, { error, error_description: description, state: p.state }),
  });
  if (p.response_type !== 'code') return fail('unsupported_response_type', 'Only response_type=code is supported');
  if (p.code_challenge_method !== 'S256')
    return fail('invalid_request', 'PKCE with code_challenge_method=S256 is required');
  if (!p.code_challenge || !CHALLENGE.test(p.code_challenge))
    return fail('invalid_request', 'code_challenge must be a base64url SHA-256 (43 characters)');
  const requested = (p.scope ?? 'openid').split(' ').filter(Boolean);
  const unknown = requested.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length > 0) return fail('invalid_scope', `Unknown scope: ${unknown.join(' ')}`);
  const scope = [...new Set(requested.length > 0 ? requested : ['openid'])].join(' ');
  const params: Record<string, string> = {
    client_id: client.id,
    redirect_uri: p.redirect_uri,
    response_type: 'code',
    scope,
    code_challenge: p.code_challenge,
    code_challenge_method: 'S256',
  };
  if (p.state !== undefined) params.state = p.state;
  if (p.nonce !== undefined) params.nonce = p.nonce;
  return { kind: 'ok', client, redirectUri: p.redirect_uri, scope, params };
}

/** Checks the user's password on the consent page; the user must belong to the client's organization. Returns the code redirect. */
export async function approve(
  deps: Deps,
  check: Extract<AuthorizeCheck, { kind: 'ok' }>,
  username: string,
  password: string,
  meta: RequestMeta,
): Promise<string> {
  const userId = await checkPassword(deps, username, password, meta);
  return issueAuthorizationCode(deps, check, userId);
}

/**
 * The end of a successful sign-in at the authorization endpoint (a password on our page, or an
 * identity provider's answer through features/sso): a one-time code for the client, returned as
 * the redirect to it. The user must belong to the client's organization (the web app: any).
 */
export async function issueAuthorizationCode(
  deps: Deps,
  check: Extract<AuthorizeCheck, { kind: 'ok' }>,
  userId: string,
  options: { ssoProviderId?: string } = {},
): Promise<string> {
  const subject = await findTokenSubject(deps.db, userId);
  const now = deps.clock.now();
  let clientId = check.client.id;
  if (subject && isWebAppClient(check.client)) {
    // The web app serves every organization: the code goes to the user's organization's client row.
    const row = await ensureWebAppClient(deps.db, subject.org_id, now);
    if (!row)
      throw new AppError(
        'forbidden',
        'The web app is turned off for your organization (its OAuth client was deleted).',
      );
    clientId = row.id;
  } else if (!subject || subject.org_id !== check.client.org_id) {
    throw new AppError('unauthorized', 'Incorrect username or password');
  }
  if (!subject) throw new AppError('unauthorized', 'Incorrect username or password');
  const code = randomBytes(32).toString('base64url');
  await deps.db
    .insertInto('oauth_codes')
    .values({
      code_hash: deps.keys.hash('oauth-code', code),
      client_id: clientId,
      org_id: subject.org_id,
      user_id: userId,
      redirect_uri: check.redirectUri,
      code_challenge: check.params.code_challenge!,
      scope: check.scope,
      nonce: check.params.nonce ?? null,
      created_at: now,
      expires_at: now + CODE_TTL_MS,
      used_at: null,
      session_id: null,
      sso_provider_id: options.ssoProviderId ?? null,
    })
    .execute();
  return redirectTo(deps, check.redirectUri, { code, state: check.params.state });
}

export function denyRedirect(deps: Deps, check: Extract<AuthorizeCheck, { kind: 'ok' }>): string {
  return redirectTo(deps, check.redirectUri, {
    error: 'access_denied',
    error_description: 'The user denied the request',
    state: check.params.state,
  });
}

export interface ClientCredentials {
  authorization?: string;
  client_id?: string;
  client_secret?: string;
}

/** client_secret_basic, client_secret_post, or none (public clients, identified by client_id). */
export async function authenticateClient(deps: Deps, creds: ClientCredentials): Promise<OAuthClientsTable> {
  let id = creds.client_id;
  let secret = creds.client_secret;
  const basic = creds.authorization && /^basic\s+(.+)$/i.exec(creds.authorization);
  if (basic) {
    const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw new OAuthError('invalid_client', 'Malformed Basic credentials', 401);
    try {
      id = decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' '));
      secret = decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' '));
    } catch {
      throw new OAuthError('invalid_client', 'Malformed Basic credentials', 401);
    }
  }
  const client = id === WEB_APP_CLIENT_ID ? webAppClient() : id ? await findActiveClient(deps.db, id) : undefined;
  if (!client) throw new OAuthError('invalid_client', 'Unknown client', 401);
  if (client.secret_hash ? !secret || !secretMatches(deps, client, secret) : secret !== undefined && secret !== '') {
    throw new OAuthError('invalid_client', 'Client authentication failed', 401);
  }
  if (client.secret_hash && secret) await rehashClientSecret(deps, client, secret);
  return client;
}

export interface OAuthTokens {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  /** Only when the grant includes offline_access. */
  refresh_token?: string;
  id_token: string;
  scope: string;
}

async function respond(
  deps: Deps,
  subject: TokenSubject,
  session: SessionRow,
  refreshToken: string,
  nonce?: string,
): Promise<OAuthTokens> {
  // The `groups` claim (group names) lets a relying party map them, as Tessera's own single sign-on does.
  const groups = await groupNamesOfUser(deps.db, subject.org_id, subject.id);
  const tokens = await mintTokens(deps, subject, session, { groups, ...(nonce ? { nonce } : {}) });
  return {
    access_token: tokens.accessToken,
    token_type: 'Bearer',
    expires_in: Math.max(0, Math.ceil((tokens.expiresAt - deps.clock.now()) / 1000)),
    ...(refreshToken ? { refresh_token: refreshToken } : {}),
    id_token: tokens.idToken,
    scope: session.scope ?? 'openid',
  };
}

/**
 * authorization_code grant. The code row is locked (PostgreSQL) or the transaction serialized
 * (SQLite), so exactly one exchange wins; any later use of the code is a replay and revokes the
 * session the first exchange opened (RFC 6749 §4.1.2). A failed PKCE check also burns the code.
 */
export async function exchangeCode(
  deps: Deps,
  client: OAuthClientsTable,
  form: { code?: string; redirect_uri?: string; code_verifier?: string },
  meta: RequestMeta,
): Promise<OAuthTokens> {
  if (!form.code) throw new OAuthError('invalid_request', 'code is required');
  if (!form.code_verifier || !VERIFIER.test(form.code_verifier))
    throw new OAuthError('invalid_request', 'code_verifier (43-128 unreserved characters) is required');
  // Codes live minutes: one made under a previous key (a secret rotation under way) is still found.
  const hashes = deps.keys.hashes('oauth-code', form.code);
  const challenge = createHash('sha256').update(form.code_verifier).digest('base64url');
  const outcome = await deps.db.transaction().execute(async (trx) => {
    const now = deps.clock.now();
    const code = await trx
      .selectFrom('oauth_codes')
      .selectAll()
      .where('code_hash', 'in', hashes)
      .$if(deps.engine === 'postgres', (q) => q.forUpdate())
      .executeTakeFirst();
    if (!code || !sameClient(client, code.client_id, code.org_id)) return { error: 'The code is invalid' };
    const hash = code.code_hash;
    if (code.used_at !== null) {
      if (code.session_id) await revokeSession(trx, code.session_id, now, 'code_replay');
      return { error: 'The code was already used; the tokens issued for it are revoked' };
    }
    const burn = () => trx.updateTable('oauth_codes').set({ used_at: now }).where('code_hash', '=', hash).execute();
    if (code.expires_at <= now) return { error: 'The code has expired' };
    if (form.redirect_uri !== code.redirect_uri)
      return { error: 'redirect_uri does not match the authorization request' };
    if (challenge !== code.code_challenge) {
      await burn();
      return { error: 'PKCE verification failed' };
    }
    const subject = await findTokenSubject(trx, code.user_id);
    if (!subject || subject.status !== 'enabled') {
      await burn();
      return { error: 'The user can no longer sign in' };
    }
    const { session, refreshToken } = await insertSessionRows(deps, trx, subject, {
      kind: 'oauth',
      clientId: code.client_id,
      scope: code.scope,
      meta,
      // Only offline_access earns a refresh token; without it access ends with the access token.
      refreshable: code.scope.split(' ').includes('offline_access'),
      ...(code.sso_provider_id ? { ssoProviderId: code.sso_provider_id } : {}),
    });
    await trx
      .updateTable('oauth_codes')
      .set({ used_at: now, session_id: session.id })
      .where('code_hash', '=', hash)
      .execute();
    return { subject, session, refreshToken, nonce: code.nonce ?? undefined };
  });
  if ('error' in outcome) throw new OAuthError('invalid_grant', outcome.error!);
  return respond(deps, outcome.subject, outcome.session, outcome.refreshToken, outcome.nonce);
}

/** refresh_token grant: the same rotation, grace and reuse detection as POST /v1/auth/token, bound to the client. */
export async function refreshGrant(
  deps: Deps,
  client: OAuthClientsTable,
  refreshToken: string | undefined,
): Promise<OAuthTokens> {
  if (!refreshToken) throw new OAuthError('invalid_request', 'refresh_token is required');
  let clientId = client.id;
  if (isWebAppClient(client)) {
    // The web app's refresh tokens belong to its row in the session's organization.
    const row =
      refreshToken.startsWith('rt_') && refreshToken.length <= 200
        ? await findRefreshToken(deps.db, deps.keys.hashes('refresh', refreshToken))
        : undefined;
    if (!row) throw new OAuthError('invalid_grant', 'The refresh token is invalid, expired or revoked');
    clientId = webAppClientRowId(row.org_id);
  }
  const outcome = await rotateRefreshToken(deps, refreshToken, { clientId });
  if (!outcome.ok) throw new OAuthError('invalid_grant', 'The refresh token is invalid, expired or revoked');
  let subject: TokenSubject;
  try {
    subject = await activeSubject(deps, outcome.session);
  } catch {
    throw new OAuthError('invalid_grant', 'The user can no longer sign in');
  }
  return respond(deps, subject, outcome.session, outcome.refreshToken);
}

/** RFC 7009: revokes the session behind a refresh or access token of this client; unknown tokens are fine. */
export async function revokeToken(deps: Deps, client: OAuthClientsTable, token: string | undefined): Promise<void> {
  if (!token) throw new OAuthError('invalid_request', 'token is required');
  let sessionId: string | undefined;
  if (token.startsWith('rt_')) {
    sessionId = (await findRefreshToken(deps.db, deps.keys.hashes('refresh', token)))?.session_id;
  } else {
    sessionId = (await verifySignature(deps, token))?.sid;
  }
  if (!sessionId) return;
  const session = await findSession(deps.db, sessionId);
  if (session && sameClient(client, session.client_id, session.org_id))
    await revokeSession(deps.db, session.id, deps.clock.now(), 'oauth_revoke');
}
