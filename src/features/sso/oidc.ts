import { createRequire } from 'node:module';
import type { Deps } from '../../deps.ts';
import { assertAllowedTarget } from '../../core/net/ssrf.ts';
import type { Jwks } from './runtime.ts';

// Talking to an OpenID provider: discovery, the token endpoint, its keys and the id token check.
// undici and jose load on the first sign-in, not when the routes load (lean start).
const undici = (): typeof import('undici') => createRequire(import.meta.url)('undici');
const MAX_RESPONSE_BYTES = 256 * 1024;
const TIMEOUT_MS = 10_000;
/** A provider's keys are fetched again after this long, or at once when a token names an unknown key. */
const JWKS_TTL_MS = 5 * 60_000;

/** Something the provider did or said that ends the sign-in; `reason` goes to the audit trail. */
export class ProviderError extends Error {
  readonly reason: string;
  constructor(reason: string, message: string) {
    super(message);
    this.reason = reason;
  }
}

async function call(
  deps: Deps,
  url: string,
  init: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; json: unknown }> {
  await assertAllowedTarget(url, { allowPrivate: deps.config.allowPrivateTargets }).catch((err: Error) => {
    throw new ProviderError('target_refused', `${url} is not an allowed address: ${err.message}`);
  });
  let status: number;
  let text: string;
  try {
    const response = await undici().request(url, {
      method: init.method ?? 'GET',
      headers: { accept: 'application/json', 'user-agent': 'Tessera-SSO/1.0', ...init.headers },
      ...(init.body !== undefined ? { body: init.body } : {}),
      dispatcher: deps.runtime.sso.dispatcher(),
      headersTimeout: TIMEOUT_MS,
      bodyTimeout: TIMEOUT_MS,
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    status = response.statusCode;
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_RESPONSE_BYTES) throw new ProviderError('provider_response', `${url} answered too much`);
      chunks.push(chunk);
    }
    text = Buffer.concat(chunks).toString('utf8');
  } catch (err) {
    if (err instanceof ProviderError) throw err;
    throw new ProviderError('provider_unreachable', `${url} could not be reached`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ProviderError('provider_response', `${url} did not answer JSON (HTTP ${status})`);
  }
  return { status, json };
}

export interface ProviderMetadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  end_session_endpoint?: string;
}

const isHttpUrl = (v: unknown): v is string => {
  if (typeof v !== 'string') return false;
  try {
    const u = new URL(v);
    return u.protocol === 'https:' || u.protocol === 'http:';
  } catch {
    return false;
  }
};

/** The issuer's /.well-known/openid-configuration; its `issuer` must be exactly the one asked for (OIDC Discovery §4.3). */
export async function discover(deps: Deps, issuer: string): Promise<ProviderMetadata> {
  const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
  const { status, json } = await call(deps, url);
  if (status !== 200 || typeof json !== 'object' || json === null)
    throw new ProviderError('discovery', `${url} answered HTTP ${status}`);
  const m = json as Record<string, unknown>;
  if (m.issuer !== issuer)
    throw new ProviderError('discovery', `the provider names its issuer ${String(m.issuer)}, not ${issuer}`);
  for (const key of ['authorization_endpoint', 'token_endpoint', 'jwks_uri'] as const)
    if (!isHttpUrl(m[key])) throw new ProviderError('discovery', `the provider's metadata has no valid ${key}`);
  return {
    issuer,
    authorization_endpoint: m.authorization_endpoint as string,
    token_endpoint: m.token_endpoint as string,
    jwks_uri: m.jwks_uri as string,
    ...(isHttpUrl(m.end_session_endpoint) ? { end_session_endpoint: m.end_session_endpoint } : {}),
  };
}

/** The authorization_code grant with the PKCE verifier; returns the id token. */
export async function exchangeCode(
  deps: Deps,
  provider: { token_endpoint: string; client_id: string },
  clientSecret: string | null,
  input: { code: string; redirectUri: string; codeVerifier: string },
): Promise<string> {
  const form = new URLSearchParams({
    grant_type: 'authorization_code',
    code: input.code,
    redirect_uri: input.redirectUri,
    code_verifier: input.codeVerifier,
  });
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (clientSecret) {
    const enc = (v: string) => encodeURIComponent(v).replace(/%20/g, '+');
    headers.authorization = `Basic ${Buffer.from(`${enc(provider.client_id)}:${enc(clientSecret)}`).toString('base64')}`;
  } else {
    form.set('client_id', provider.client_id);
  }
  const { status, json } = await call(deps, provider.token_endpoint, {
    method: 'POST',
    headers,
    body: form.toString(),
  });
  const body = (typeof json === 'object' && json !== null ? json : {}) as Record<string, unknown>;
  if (status !== 200) {
    const error = typeof body.error === 'string' ? body.error.slice(0, 100) : `HTTP ${status}`;
    throw new ProviderError('token_exchange', `the provider refused the code (${error})`);
  }
  if (typeof body.id_token !== 'string') throw new ProviderError('token_exchange', 'the provider sent no id_token');
  return body.id_token;
}

async function fetchJwks(deps: Deps, uri: string, fresh: boolean): Promise<Jwks> {
  const cache = deps.runtime.sso.jwks;
  const hit = cache.get(uri);
  const now = Date.now();
  if (hit && !fresh && now - hit.at < JWKS_TTL_MS) return hit.jwks;
  const { status, json } = await call(deps, uri);
  const keys = (json as { keys?: unknown } | null)?.keys;
  if (status !== 200 || !Array.isArray(keys)) throw new ProviderError('jwks', `${uri} answered no key set`);
  const jwks = { keys: keys.filter((k): k is Record<string, unknown> => typeof k === 'object' && k !== null) };
  cache.set(uri, { at: now, jwks });
  return jwks;
}

export type IdClaims = Record<string, unknown> & { sub: string };

/**
 * Checks an id token (OIDC Core §3.1.3.7): signed by a key of the provider's JWKS with an
 * asymmetric algorithm, `iss` the provider's issuer, `aud` containing our client id (and `azp`
 * ours when there are several), not expired, and `nonce` the one this sign-in sent.
 */
export async function verifyIdToken(
  deps: Deps,
  provider: { issuer: string; client_id: string; jwks_uri: string },
  idToken: string,
  nonce: string,
): Promise<IdClaims> {
  const jose = await import('jose');
  const check = async (fresh: boolean) => {
    const keys = jose.createLocalJWKSet((await fetchJwks(deps, provider.jwks_uri, fresh)) as never);
    return jose.jwtVerify(idToken, keys, {
      issuer: provider.issuer,
      audience: provider.client_id,
      algorithms: ['EdDSA', 'Ed25519', 'ES256', 'ES384', 'ES512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'],
      currentDate: new Date(deps.clock.now()),
      clockTolerance: 60,
      requiredClaims: ['sub', 'exp', 'iat'],
    });
  };
  let payload: Record<string, unknown>;
  try {
    payload = (await check(false)).payload;
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'ERR_JWKS_NO_MATCHING_KEY') {
      // The provider may have rotated its keys since we last fetched them.
      try {
        payload = (await check(true)).payload;
      } catch (again) {
        throw idTokenError(again);
      }
    } else throw idTokenError(err);
  }
  if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== provider.client_id)
    throw new ProviderError('id_token_audience', 'the id token was issued to another party (azp)');
  if (typeof payload.nonce !== 'string' || payload.nonce !== nonce)
    throw new ProviderError('id_token_nonce', 'the id token does not carry the nonce of this sign-in');
  if (typeof payload.sub !== 'string' || payload.sub === '' || payload.sub.length > 255)
    throw new ProviderError('id_token_subject', 'the id token has no usable subject');
  return payload as IdClaims;
}

function idTokenError(err: unknown): ProviderError {
  if (err instanceof ProviderError) return err;
  const code = (err as { code?: string }).code ?? '';
  const claim = (err as { claim?: string }).claim;
  if (code === 'ERR_JWT_EXPIRED') return new ProviderError('id_token_expired', 'the id token has expired');
  if (code === 'ERR_JWT_CLAIM_VALIDATION_FAILED')
    return new ProviderError(
      claim === 'iss' ? 'id_token_issuer' : claim === 'aud' ? 'id_token_audience' : 'id_token_claims',
      `the id token's ${claim ?? 'claims'} is not acceptable`,
    );
  if (code === 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' || code === 'ERR_JWKS_NO_MATCHING_KEY')
    return new ProviderError('id_token_signature', "the id token's signature does not verify with the provider's keys");
  return new ProviderError('id_token_invalid', 'the id token is malformed or not acceptable');
}
