// OAuth 2.0 client credentials (RFC 6749 §4.4) for endpoints that require a bearer token: one token
// per endpoint configuration, cached until shortly before it expires, fetched by one caller at a
// time, refreshed once when the receiver answers 401.
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Dispatcher } from 'undici';

// Loaded on first use, not at start (issue 14: lean start).
const request: typeof import('undici').request = (...args) =>
  (createRequire(import.meta.url)('undici') as typeof import('undici')).request(...args);
import { classifyError, type ErrorClass, type SendInput, type SendResult, sendOnce } from '../send/send.ts';

export type ClientAuthMethod = 'client_secret_basic' | 'client_secret_post';

export interface TokenProviderConfig {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  /** Space-separated string or list of scopes. */
  scope?: string | readonly string[];
  /** Extra form parameters (e.g. `audience`); they cannot override the grant or client credentials. */
  extraParams?: Readonly<Record<string, string>>;
  authMethod?: ClientAuthMethod;
}

export interface TokenProviderOptions extends TokenProviderConfig {
  dispatcher: Dispatcher;
  /** Epoch ms. */
  now: () => number;
  /** Token request deadline; default 10 s. */
  timeoutMs?: number;
  /** After a failed fetch, callers get the same error without a new request for this long; default 5 s. */
  errorCooldownMs?: number;
  /** invalidate() is ignored for tokens younger than this, so a receiver answering 401 to every token
   * cannot turn each delivery into a token request; default 0 (always honoured). */
  minRefreshIntervalMs?: number;
}

export interface TokenProvider {
  /** A valid access token (from cache or freshly fetched). Rejects with TokenFetchError. */
  getToken(): Promise<string>;
  /** Drops `token` from the cache (the receiver rejected it); a newer cached token is kept. */
  invalidate(token: string): void;
}

export type TokenFailure = 'http_status' | 'invalid_response' | 'transport';

export class TokenFetchError extends Error {
  readonly code = 'ERR_WEBHOOK_OAUTH_TOKEN';
  readonly kind: TokenFailure;
  /** HTTP status of the token response, when there was one. */
  readonly status: number | undefined;
  /** The OAuth `error` code from the token server (e.g. invalid_client), when given. */
  readonly oauthError: string | undefined;
  /** Transport class (timeout, dns, ssrf_blocked, …) when kind is 'transport'. */
  readonly transportClass: ErrorClass | undefined;
  constructor(
    kind: TokenFailure,
    message: string,
    details: { status?: number; oauthError?: string; transportClass?: ErrorClass } = {},
  ) {
    super(message);
    this.name = 'TokenFetchError';
    this.kind = kind;
    this.status = details.status;
    this.oauthError = details.oauthError;
    this.transportClass = details.transportClass;
  }
}

/** Tokens are refreshed this long before they expire: 60 s, or 10 % of the lifetime for short tokens. */
export const MAX_REFRESH_SKEW_MS = 60_000;
/** Used when the token server omits expires_in. */
export const DEFAULT_TOKEN_LIFETIME_MS = 300_000;
const MAX_TOKEN_RESPONSE_BYTES = 64 * 1024;

export function refreshSkewMs(lifetimeMs: number): number {
  return Math.min(MAX_REFRESH_SKEW_MS, Math.floor(lifetimeMs * 0.1));
}

// RFC 6749 §2.3.1: client id and secret are form-urlencoded before Basic encoding.
const formEncode = (value: string) => new URLSearchParams({ v: value }).toString().slice(2);

function scopeString(scope: TokenProviderConfig['scope']): string | undefined {
  if (scope === undefined) return undefined;
  const joined =
    typeof scope === 'string'
      ? scope.trim()
      : scope
          .map((s) => s.trim())
          .filter(Boolean)
          .join(' ');
  return joined === '' ? undefined : joined;
}

async function fetchToken(options: TokenProviderOptions): Promise<{ token: string; lifetimeMs: number }> {
  const form = new URLSearchParams();
  for (const [key, value] of Object.entries(options.extraParams ?? {})) form.set(key, value);
  form.set('grant_type', 'client_credentials');
  const scope = scopeString(options.scope);
  if (scope !== undefined) form.set('scope', scope);
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
    'user-agent': 'Tessera-Webhooks/1.0',
  };
  if ((options.authMethod ?? 'client_secret_basic') === 'client_secret_basic') {
    form.delete('client_id');
    form.delete('client_secret');
    headers.authorization = `Basic ${Buffer.from(`${formEncode(options.clientId)}:${formEncode(options.clientSecret)}`).toString('base64')}`;
  } else {
    form.set('client_id', options.clientId);
    form.set('client_secret', options.clientSecret);
  }
  const timeoutMs = options.timeoutMs ?? 10_000;
  let status: number;
  let text: string;
  try {
    const response = await request(options.tokenUrl, {
      method: 'POST',
      body: form.toString(),
      headers,
      dispatcher: options.dispatcher,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
    });
    status = response.statusCode;
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_TOKEN_RESPONSE_BYTES) break;
      chunks.push(chunk);
    }
    text = Buffer.concat(chunks).toString('utf8');
  } catch (err) {
    const timedOut = (err as { name?: string })?.name === 'TimeoutError';
    const transportClass = classifyError(err, timedOut);
    throw new TokenFetchError('transport', `token request to ${options.tokenUrl} failed (${transportClass})`, {
      transportClass,
    });
  }
  let json: Record<string, unknown> | undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed))
      json = parsed as Record<string, unknown>;
  } catch {
    json = undefined;
  }
  if (status < 200 || status > 299) {
    const oauthError = typeof json?.error === 'string' ? json.error.slice(0, 100) : undefined;
    throw new TokenFetchError(
      'http_status',
      `token server answered HTTP ${status}${oauthError ? ` (${oauthError})` : ''}`,
      { status, ...(oauthError ? { oauthError } : {}) },
    );
  }
  const token = json?.access_token;
  if (typeof token !== 'string' || token === '')
    throw new TokenFetchError('invalid_response', 'token response has no access_token', { status });
  // It goes into an Authorization header: printable ASCII without spaces only.
  if (!/^[\x21-\x7e]+$/.test(token) || token.length > 8192)
    throw new TokenFetchError('invalid_response', 'access_token is not a valid bearer token', { status });
  const tokenType = json?.token_type;
  if (typeof tokenType === 'string' && tokenType.toLowerCase() !== 'bearer') {
    throw new TokenFetchError('invalid_response', `unsupported token_type ${tokenType.slice(0, 40)}`, { status });
  }
  const expiresIn = Number(json?.expires_in);
  const lifetimeMs = Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn * 1000 : DEFAULT_TOKEN_LIFETIME_MS;
  return { token, lifetimeMs };
}

export function createTokenProvider(options: TokenProviderOptions): TokenProvider {
  let cached: { token: string; fetchedAt: number; refreshAt: number } | null = null;
  let inflight: Promise<string> | null = null;
  let failure: { error: unknown; until: number } | null = null;
  const cooldown = options.errorCooldownMs ?? 5000;

  return {
    getToken() {
      const now = options.now();
      if (cached && now < cached.refreshAt) return Promise.resolve(cached.token);
      if (inflight) return inflight;
      if (failure && now < failure.until) return Promise.reject(failure.error);
      const startedAt = now;
      inflight = fetchToken(options).then(
        ({ token, lifetimeMs }) => {
          // Measured from when the request started, so network time only makes us refresh earlier.
          cached = { token, fetchedAt: startedAt, refreshAt: startedAt + lifetimeMs - refreshSkewMs(lifetimeMs) };
          failure = null;
          inflight = null;
          return token;
        },
        (error: unknown) => {
          failure = { error, until: options.now() + cooldown };
          inflight = null;
          throw error;
        },
      );
      return inflight;
    },
    invalidate(token) {
      if (cached?.token === token && options.now() - cached.fetchedAt >= (options.minRefreshIntervalMs ?? 0))
        cached = null;
    },
  };
}

/** Token providers for many endpoints; a changed OAuth configuration gets a fresh provider. */
export class TokenProviderCache {
  readonly #providers = new Map<string, { hash: string; provider: TokenProvider }>();
  readonly #options: Omit<TokenProviderOptions, keyof TokenProviderConfig>;
  readonly #maxEntries: number;

  constructor(options: Omit<TokenProviderOptions, keyof TokenProviderConfig> & { maxEntries?: number }) {
    const { maxEntries, ...rest } = options;
    this.#options = rest;
    this.#maxEntries = maxEntries ?? 10_000;
  }

  get(endpointId: string, config: TokenProviderConfig): TokenProvider {
    const hash = configHash(config);
    const entry = this.#providers.get(endpointId);
    this.#providers.delete(endpointId);
    if (entry && entry.hash === hash) {
      this.#providers.set(endpointId, entry); // most recently used goes last
      return entry.provider;
    }
    const provider = createTokenProvider({ ...this.#options, ...config });
    this.#providers.set(endpointId, { hash, provider });
    if (this.#providers.size > this.#maxEntries) this.#providers.delete(this.#providers.keys().next().value!);
    return provider;
  }

  delete(endpointId: string): void {
    this.#providers.delete(endpointId);
  }

  get size(): number {
    return this.#providers.size;
  }
}

export function configHash(config: TokenProviderConfig): string {
  const extra = Object.entries(config.extraParams ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const canonical = JSON.stringify([
    config.tokenUrl,
    config.clientId,
    config.clientSecret,
    scopeString(config.scope) ?? null,
    extra,
    config.authMethod ?? 'client_secret_basic',
  ]);
  return createHash('sha256').update(canonical).digest('base64url');
}

export interface OAuthSendResult extends SendResult {
  /** True when the first attempt got 401 and was retried with a freshly fetched token. */
  oauthRetried: boolean;
}

/**
 * Calls `send` with `Authorization: Bearer <token>`; on 401 invalidates the token and retries once with
 * a new one. Never throws: a token failure becomes a result with errorClass 'oauth_token'.
 */
export async function withOAuthRetry(
  provider: TokenProvider,
  send: (authorization: string) => Promise<SendResult>,
): Promise<OAuthSendResult> {
  const started = performance.now();
  const tokenFailure = (err: unknown, oauthRetried: boolean): OAuthSendResult => ({
    ok: false,
    latencyMs: performance.now() - started,
    responseBody: '',
    responseHeaders: {},
    errorClass: 'oauth_token',
    error: err instanceof Error ? err.message : String(err),
    oauthRetried,
  });
  let token: string;
  try {
    token = await provider.getToken();
  } catch (err) {
    return tokenFailure(err, false);
  }
  const first = await send(`Bearer ${token}`);
  if (first.status !== 401) return { ...first, oauthRetried: false };
  provider.invalidate(token);
  let fresh: string;
  try {
    fresh = await provider.getToken();
  } catch (err) {
    return tokenFailure(err, true);
  }
  return { ...(await send(`Bearer ${fresh}`)), oauthRetried: true };
}

/** sendOnce with the endpoint's bearer token and one refresh-and-retry on 401. */
export function sendWithOAuth(provider: TokenProvider, input: SendInput): Promise<OAuthSendResult> {
  return withOAuthRetry(provider, (authorization) =>
    sendOnce({ ...input, headers: { ...input.headers, authorization } }),
  );
}
