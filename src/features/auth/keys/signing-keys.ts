import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign,
  verify,
  type JsonWebKey,
  type KeyObject,
} from 'node:crypto';
import type { Deps } from '../../../deps.ts';

type JWK = JsonWebKey & { kid?: string; alg?: string; use?: string };

/**
 * JWT signing keys live in the database (private halves sealed by the keyring) so that every
 * instance sharing it signs with the same key and verifies everyone's tokens. The active key id
 * is claimed once through `server_state`, so instances starting together converge on one key.
 * Tokens are compact JWS (EdDSA/Ed25519) made and checked with node:crypto's synchronous
 * sign/verify: WebCrypto's async path hops through the thread pool, which under load put
 * milliseconds on the p99 of every token issue (tests verify them with `jose`).
 */
const ALG = 'EdDSA';
const ACTIVE_KEY = 'auth.signing_kid';
/** Reload keys on an unknown kid at most this often (garbage tokens must not hammer the DB). */
const RELOAD_INTERVAL_MS = 1000;
const VERIFIED_CACHE_MAX = 20_000;

export interface TokenClaims {
  iss: string;
  sub: string;
  aud?: string | string[];
  exp: number;
  iat: number;
  sid: string;
  token_use: 'id' | 'access';
  jti?: string;
  username?: string;
  act?: { sub: string };
  client_id?: string;
  [claim: string]: unknown;
}

export interface KeyState {
  signing?: Promise<{ kid: string; key: KeyObject }>;
  verifying: Map<string, KeyObject>;
  publicJwks: JWK[];
  lastReload: number;
  /** Signature checks are pure, so a token verified once need not be verified again (expiry and revocation still are). */
  verified: Map<string, TokenClaims>;
}

/** This process's key state; one per Deps, held by the runtime (deps.runtime.auth.keys). */
export function createKeyState(): KeyState {
  return { verifying: new Map(), publicJwks: [], lastReload: 0, verified: new Map() };
}

async function reload(deps: Deps, state: KeyState): Promise<void> {
  state.lastReload = Date.now();
  const rows = await deps.db
    .selectFrom('auth_signing_keys')
    .select(['kid', 'public_jwk', 'retired_at'])
    .orderBy('created_at')
    .execute();
  const jwks: JWK[] = [];
  for (const row of rows) {
    const jwk = JSON.parse(row.public_jwk) as JWK;
    if (!state.verifying.has(row.kid)) state.verifying.set(row.kid, createPublicKey({ key: jwk, format: 'jwk' }));
    if (row.retired_at === null) jwks.push({ ...jwk, kid: row.kid, alg: ALG, use: 'sig' });
  }
  state.publicJwks = jwks;
}

async function loadSigningKey(deps: Deps, state: KeyState): Promise<{ kid: string; key: KeyObject }> {
  const existing = await deps.db
    .selectFrom('server_state')
    .select('value')
    .where('key', '=', ACTIVE_KEY)
    .executeTakeFirst();
  let kid = existing?.value;
  if (!kid) {
    const now = deps.clock.now();
    const pair = generateKeyPairSync('ed25519');
    const candidate = `k${now.toString(36)}${Math.random().toString(36).slice(2, 8)}`;
    await deps.db
      .insertInto('auth_signing_keys')
      .values({
        kid: candidate,
        alg: ALG,
        public_jwk: JSON.stringify(pair.publicKey.export({ format: 'jwk' })),
        private_jwk_sealed: deps.keys.encrypt(JSON.stringify(pair.privateKey.export({ format: 'jwk' }))),
        created_at: now,
        retired_at: null,
      })
      .execute();
    await deps.db
      .insertInto('server_state')
      .values({ key: ACTIVE_KEY, value: candidate, updated_at: now })
      .onConflict((oc) => oc.column('key').doNothing())
      .execute();
    kid = (
      await deps.db.selectFrom('server_state').select('value').where('key', '=', ACTIVE_KEY).executeTakeFirstOrThrow()
    ).value;
    if (kid !== candidate) await deps.db.deleteFrom('auth_signing_keys').where('kid', '=', candidate).execute();
  }
  const row = await deps.db
    .selectFrom('auth_signing_keys')
    .select('private_jwk_sealed')
    .where('kid', '=', kid)
    .executeTakeFirstOrThrow();
  const key = createPrivateKey({ key: JSON.parse(deps.keys.decrypt(row.private_jwk_sealed)) as JWK, format: 'jwk' });
  await reload(deps, state);
  return { kid, key };
}

export async function signToken(deps: Deps, claims: Omit<TokenClaims, 'iss'> & { iss?: string }): Promise<string> {
  const state = deps.runtime.auth.keys;
  state.signing ??= loadSigningKey(deps, state).catch((error) => {
    state.signing = undefined;
    throw error;
  });
  const { kid, key } = await state.signing;
  const header = Buffer.from(JSON.stringify({ alg: ALG, kid, typ: 'JWT' })).toString('base64url');
  const payload = Buffer.from(JSON.stringify({ ...claims, iss: claims.iss ?? deps.config.publicUrl })).toString(
    'base64url',
  );
  const input = `${header}.${payload}`;
  return `${input}.${sign(null, Buffer.from(input), key).toString('base64url')}`;
}

/**
 * The claims of a token this server signed, or null when it is not one (bad shape, unknown key,
 * bad signature, other issuer). Expiry is NOT checked here: callers compare `exp` with the clock.
 */
function isCanonicalBase64url(part: string): boolean {
  return (
    part.length > 0 &&
    /^[A-Za-z0-9_-]+$/.test(part) &&
    part.length % 4 !== 1 &&
    Buffer.from(part, 'base64url').toString('base64url') === part
  );
}

export async function verifySignature(deps: Deps, token: string): Promise<TokenClaims | null> {
  const state = deps.runtime.auth.keys;
  const cached = state.verified.get(token);
  if (cached) return cached;
  if (token.length > 4096) return null;
  const parts = token.split('.');
  // Only canonical base64url: no padding, no stray characters, no non-zero trailing bits, so one
  // token has exactly one spelling (the cache, revocation lists and logs can trust the string).
  if (parts.length !== 3 || !parts.every(isCanonicalBase64url)) return null;
  let header: { alg?: unknown; kid?: unknown; crit?: unknown };
  let claims: TokenClaims;
  try {
    header = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString('utf8'));
    claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (
    header.alg !== ALG ||
    typeof header.kid !== 'string' ||
    header.crit !== undefined ||
    typeof claims !== 'object' ||
    claims === null
  )
    return null;
  let key = state.verifying.get(header.kid);
  if (!key && Date.now() - state.lastReload >= RELOAD_INTERVAL_MS) {
    await reload(deps, state);
    key = state.verifying.get(header.kid);
  }
  if (!key) return null;
  const signature = Buffer.from(parts[2]!, 'base64url');
  if (signature.length !== 64 || !verify(null, Buffer.from(`${parts[0]}.${parts[1]}`), key, signature)) return null;
  if (
    claims.iss !== deps.config.publicUrl ||
    typeof claims.sub !== 'string' ||
    typeof claims.sid !== 'string' ||
    typeof claims.exp !== 'number'
  )
    return null;
  if (claims.token_use !== 'id' && claims.token_use !== 'access') return null;
  if (state.verified.size >= VERIFIED_CACHE_MAX) state.verified.clear();
  state.verified.set(token, claims);
  return claims;
}

/** The public keys, as published at /.well-known/jwks.json. */
export async function publicJwks(deps: Deps): Promise<{ keys: JWK[] }> {
  const state = deps.runtime.auth.keys;
  await reload(deps, state);
  if (state.publicJwks.length === 0) {
    state.signing ??= loadSigningKey(deps, state);
    await state.signing;
  }
  return { keys: state.publicJwks };
}
