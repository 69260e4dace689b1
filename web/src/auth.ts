/**
 * Sign-in through Tessera's own OAuth 2.0 authorization server: authorization code + PKCE (S256)
 * as the first-party public client `tessera-web`. The access token lives only in memory; the
 * refresh token (rotated on every use by the server) is kept in localStorage so that a reload or a
 * second tab stays signed in, and every refresh runs under a Web Lock so tabs never spend the same
 * refresh token twice (the server would take that as theft and end the session).
 */
export const CLIENT_ID = 'tessera-web';
const SCOPE = 'openid offline_access tessera.api';
const REFRESH_KEY = 'tessera.refreshToken';
const PENDING_KEY = 'tessera.pendingSignIn';
/** The organization last signed in to (kept after sign-out): its single sign-on providers are offered at the next sign-in. */
const ORGANIZATION_KEY = 'tessera.organization';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const LOCK = 'tessera-token-refresh';

interface TokenResponse {
  access_token: string;
  expires_in: number;
  refresh_token?: string;
  id_token?: string;
}

let accessToken: string | null = null;
/**
 * The id token of the current sign-in, in memory like the access token (every refresh, also the one
 * at page load, brings a new one): the hint RP-initiated logout needs to end a provider's session too.
 */
let idToken: string | null = null;
let expiresAt = 0;
let timer: ReturnType<typeof setTimeout> | undefined;
const listeners = new Set<(signedIn: boolean) => void>();

export function onAuthChange(listener: (signedIn: boolean) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function emit(signedIn: boolean): void {
  for (const l of listeners) l(signedIn);
}

function base64url(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function random(n = 32): string {
  return base64url(crypto.getRandomValues(new Uint8Array(n)));
}

export function redirectUri(): string {
  return `${location.origin}/app/callback`;
}

/**
 * The organization whose single sign-on providers the sign-in page should offer: `?organization=`
 * on an /app link (an administrator shares it, docs/sso.md), else the one last signed in to here.
 */
export function organizationHint(): string | null {
  const fromLink = new URL(location.href).searchParams.get('organization');
  if (fromLink && UUID.test(fromLink)) {
    localStorage.setItem(ORGANIZATION_KEY, fromLink);
    return fromLink;
  }
  const remembered = localStorage.getItem(ORGANIZATION_KEY);
  return remembered && UUID.test(remembered) ? remembered : null;
}

/** The claims of a JWT, unverified (only to remember which organization signed in; the server checks every token). */
function claimsOf(jwt: string): Record<string, unknown> {
  try {
    const part = jwt.split('.')[1] ?? '';
    return JSON.parse(atob(part.replace(/-/g, '+').replace(/_/g, '/'))) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** Sends the browser to the sign-in page; it comes back to /app/callback. */
export async function signIn(returnTo = location.pathname + location.search): Promise<void> {
  const organization = organizationHint();
  const verifier = random(48);
  const challenge = base64url(
    new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))),
  );
  const state = random(16);
  sessionStorage.setItem(
    PENDING_KEY,
    JSON.stringify({
      verifier,
      state,
      returnTo: returnTo.startsWith('/app') && !returnTo.startsWith('/app/callback') ? returnTo : '/app/',
    }),
  );
  const url = new URL('/v1/oauth2/authorize', location.origin);
  const params = {
    response_type: 'code',
    client_id: CLIENT_ID,
    redirect_uri: redirectUri(),
    scope: SCOPE,
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...(organization ? { organization } : {}),
  };
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  location.assign(url.toString());
}

async function tokenRequest(form: Record<string, string>): Promise<TokenResponse> {
  const response = await fetch('/v1/oauth2/token', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: CLIENT_ID, ...form }),
  });
  const body = await response.json().catch(() => ({}));
  if (!response.ok)
    throw new AuthError(
      body.error_description ?? body.error ?? `HTTP ${response.status}`,
      body.error === 'invalid_grant',
    );
  return body as TokenResponse;
}

export class AuthError extends Error {
  readonly sessionEnded: boolean;
  constructor(message: string, sessionEnded: boolean) {
    super(message);
    this.sessionEnded = sessionEnded;
  }
}

function accept(tokens: TokenResponse): void {
  accessToken = tokens.access_token;
  expiresAt = Date.now() + tokens.expires_in * 1000;
  if (tokens.refresh_token) localStorage.setItem(REFRESH_KEY, tokens.refresh_token);
  if (tokens.id_token) {
    idToken = tokens.id_token;
    const org = claimsOf(tokens.id_token).org;
    if (typeof org === 'string' && UUID.test(org)) localStorage.setItem(ORGANIZATION_KEY, org);
  }
  clearTimeout(timer);
  // Silent refresh a minute before the access token ends.
  timer = setTimeout(() => void refresh().catch(() => undefined), Math.max(5_000, tokens.expires_in * 1000 - 60_000));
}

/** Finishes the code flow on /app/callback; returns where the user was going. */
export async function completeSignIn(url: URL): Promise<string> {
  const pending = JSON.parse(sessionStorage.getItem(PENDING_KEY) ?? 'null') as {
    verifier: string;
    state: string;
    returnTo: string;
  } | null;
  sessionStorage.removeItem(PENDING_KEY);
  const error = url.searchParams.get('error');
  if (error) throw new AuthError(url.searchParams.get('error_description') ?? error, false);
  const code = url.searchParams.get('code');
  if (!pending || !code || url.searchParams.get('state') !== pending.state)
    throw new AuthError('the sign-in answer does not match a sign-in started here', false);
  accept(
    await tokenRequest({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri(),
      code_verifier: pending.verifier,
    }),
  );
  emit(true);
  return pending.returnTo;
}

let refreshing: Promise<string> | null = null;

/** A new access token from the stored refresh token, one tab at a time. */
export function refresh(): Promise<string> {
  refreshing ??= (async () => {
    const run = async () => {
      // Another tab may have refreshed while we waited for the lock: its successor token is stored.
      const stored = localStorage.getItem(REFRESH_KEY);
      if (!stored) throw new AuthError('not signed in', true);
      try {
        accept(await tokenRequest({ grant_type: 'refresh_token', refresh_token: stored }));
      } catch (error) {
        if (error instanceof AuthError && error.sessionEnded) forget();
        throw error;
      }
      return accessToken!;
    };
    return navigator.locks ? navigator.locks.request(LOCK, run) : run();
  })().finally(() => {
    refreshing = null;
  });
  return refreshing;
}

export function hasStoredSession(): boolean {
  return localStorage.getItem(REFRESH_KEY) !== null;
}

/**
 * Acting as someone else (POST /v1/auth/impersonate): their access token, in memory only, is used
 * for every call instead of the person's own, which keeps being refreshed underneath. It has no
 * refresh token and ends at its expiry, on Stop, or on a reload (the app is the person's own again).
 */
export interface Acting {
  accessToken: string;
  expiresAt: number;
  username: string;
}
let acting: Acting | null = null;
const actingListeners = new Set<(acting: Acting | null) => void>();

export function actingAs(): Acting | null {
  return acting;
}

export function onActingChange(listener: (acting: Acting | null) => void): () => void {
  actingListeners.add(listener);
  return () => actingListeners.delete(listener);
}

export function startActing(as: Acting): void {
  acting = as;
  for (const l of actingListeners) l(acting);
}

/** Back to the person's own session; the impersonation session is ended on the server too. */
export async function stopActing(): Promise<void> {
  const ended = acting;
  if (!ended) return;
  acting = null;
  for (const l of actingListeners) l(null);
  await fetch('/v1/auth/token', {
    method: 'DELETE',
    headers: { authorization: `Bearer ${ended.accessToken}` },
  }).catch(() => undefined);
}

/** The current access token (the impersonation's while acting), refreshed first when it is about to end. */
export async function token(): Promise<string> {
  if (acting) {
    if (Date.now() < acting.expiresAt - 5_000) return acting.accessToken;
    await stopActing();
  }
  if (accessToken && Date.now() < expiresAt - 30_000) return accessToken;
  return refresh();
}

/** Drops this sign-in's tokens (the page keeps showing until emit). */
function clearSession(): void {
  if (acting) void stopActing();
  accessToken = null;
  expiresAt = 0;
  clearTimeout(timer);
  localStorage.removeItem(REFRESH_KEY);
  idToken = null;
}

function forget(): void {
  clearSession();
  emit(false);
}

/**
 * Ends this sign-in (RFC 7009 revocation of the refresh token: the whole session ends), then, with
 * the sign-in's id token, goes through the end-session endpoint (GET /v1/oauth2/logout): when the
 * session came from an organization's identity provider, that ends the provider's session too, and
 * the browser comes back to /app/?signed-out.
 */
export async function signOut(): Promise<void> {
  const stored = localStorage.getItem(REFRESH_KEY);
  const hint = idToken;
  // With an id token the browser leaves for the end-session endpoint and the app says "signed out"
  // when it comes back (returnedFromSignOut); saying it here first would flash it before the
  // navigation, and a slow revocation made that flash last.
  clearSession();
  if (!hint) emit(false);
  if (stored) {
    await fetch('/v1/oauth2/revoke', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: CLIENT_ID, token: stored }),
      // A server that does not answer must not keep the person from leaving.
      signal: AbortSignal.timeout(5000),
    }).catch(() => undefined);
  }
  if (hint) {
    const url = new URL('/v1/oauth2/logout', location.origin);
    url.searchParams.set('id_token_hint', hint);
    url.searchParams.set('client_id', CLIENT_ID);
    url.searchParams.set('post_logout_redirect_uri', `${location.origin}/app/?signed-out`);
    location.assign(url.toString());
  }
}

/** Came back from the end-session endpoint: says so once, and leaves a clean address. */
export function returnedFromSignOut(): boolean {
  const url = new URL(location.href);
  if (!url.searchParams.has('signed-out')) return false;
  url.searchParams.delete('signed-out');
  history.replaceState(null, '', url.pathname + url.search + url.hash);
  return true;
}

/** Ends every session of this user, on every device and app. */
export async function signOutEverywhere(): Promise<void> {
  const bearer = await token();
  const response = await fetch('/v1/auth/sessions', {
    method: 'DELETE',
    headers: { authorization: `Bearer ${bearer}` },
  });
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  forget();
}

// Another tab signed out (the refresh token went away): so does this one.
addEventListener('storage', (event) => {
  if (event.key === REFRESH_KEY && event.newValue === null && accessToken) {
    accessToken = null;
    clearTimeout(timer);
    emit(false);
  }
});
