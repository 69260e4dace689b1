import { randomBytes, randomUUID } from 'node:crypto';
import type { Deps } from '../../../deps.ts';
import { audit } from '../../../core/audit.ts';
import type { DbOrTrx } from '../../../core/db/connect.ts';
import { AppError, unauthorized } from '../../../core/http/errors.ts';
import { newId } from '../../../core/ids.ts';
import { dummyPasswordHash, findUserByUsername, passwordQueueDepth, verifyPassword } from '../../identity/index.ts';
import { scheduleCleanup } from './cleanup.ts';
import { loginSucceeded, reserveLoginAttempt } from '../throttle/login-throttle.ts';
import { findTokenSubject, insertRefreshToken, insertSession, type SessionRow } from './sessions.repo.ts';
import { signToken } from '../keys/signing-keys.ts';

export const ACCESS_TOKEN_TTL_MS = 60 * 60_000;
export const REFRESH_FAMILY_TTL_MS = 30 * 24 * 60 * 60_000;
/** Beyond this many queued hashes a login is refused at once rather than waiting (back-pressure). */
const MAX_HASH_QUEUE = 64;
/** One message for every credential failure: unknown user, wrong password, disabled account. */
export const BAD_CREDENTIALS_MESSAGE = 'Incorrect username or password';

export interface SessionResponse {
  endpointUrl: string;
  clientId: string;
  userPoolId: string;
  username: string;
  password: '';
  session: { authorization: string; accessToken: string; refreshToken: string; expireEpoch: number };
}

export interface RequestMeta {
  ip: string;
  userAgent?: string;
}

/** A stable first-party client id per organization, shaped like the reference's (26 lowercase hex). */
export function firstPartyClientId(deps: Deps, orgId: string): string {
  return Buffer.from(deps.keys.hash('first-party-client-id', orgId), 'base64url').toString('hex').slice(0, 26);
}

export function userPoolId(customerId: string): string {
  return `tessera_${customerId}`;
}

export function newRefreshToken(): string {
  return `rt_${randomBytes(32).toString('base64url')}`;
}

/**
 * The successor of a refresh token is derived from it, so retries inside the grace window get the same one
 * without storing it: under each held key (current first), with its hash under the same key.
 */
export function successorsOf(deps: Deps, refreshToken: string): { token: string; hash: string }[] {
  return deps.keys.keyIds.map((keyId) => {
    const token = `rt_${deps.keys.hashWith(keyId, 'refresh-successor', refreshToken)}`;
    return { token, hash: deps.keys.hashWith(keyId, 'refresh', token) };
  });
}

export function refreshHash(deps: Deps, refreshToken: string): string {
  return deps.keys.hash('refresh', refreshToken);
}

/** The token's hash under every held key, current first (sessions.repo's lookups take them all). */
export function refreshHashes(deps: Deps, refreshToken: string): string[] {
  return deps.keys.hashes('refresh', refreshToken);
}

export interface TokenSubject {
  id: string;
  org_id: string;
  username: string;
  email: string;
  customer_id: string;
}

/** Signs the id and access tokens of a session. */
export async function mintTokens(
  deps: Deps,
  subject: TokenSubject,
  session: Pick<SessionRow, 'id' | 'impersonator_id' | 'expires_at' | 'client_id' | 'scope'>,
  extra: { nonce?: string; groups?: string[] } = {},
): Promise<{ idToken: string; accessToken: string; expiresAt: number; audience: string }> {
  const now = deps.clock.now();
  const iat = Math.floor(now / 1000);
  const exp = Math.min(iat + ACCESS_TOKEN_TTL_MS / 1000, Math.floor(session.expires_at / 1000));
  const audience = session.client_id ?? firstPartyClientId(deps, subject.org_id);
  const act = session.impersonator_id ? { act: { sub: session.impersonator_id } } : {};
  const common = {
    sub: subject.id,
    sid: session.id,
    iat,
    exp,
    username: subject.username,
    org: subject.org_id,
    ...act,
  };
  const [idToken, accessToken] = await Promise.all([
    signToken(deps, {
      ...common,
      token_use: 'id',
      aud: audience,
      email: subject.email,
      email_verified: false,
      auth_time: iat,
      ...(extra.nonce ? { nonce: extra.nonce } : {}),
      ...(extra.groups ? { groups: extra.groups } : {}),
    }),
    signToken(deps, {
      ...common,
      token_use: 'access',
      client_id: audience,
      scope: session.scope ?? 'tessera',
      jti: randomUUID(),
    }),
  ]);
  return { idToken, accessToken, expiresAt: exp * 1000, audience };
}

export function sessionResponse(
  deps: Deps,
  subject: TokenSubject,
  tokens: { idToken: string; accessToken: string; expiresAt: number },
  refreshToken: string,
): SessionResponse {
  return {
    endpointUrl: `${deps.config.publicUrl}/v1`,
    clientId: firstPartyClientId(deps, subject.org_id),
    userPoolId: userPoolId(subject.customer_id),
    username: subject.username,
    password: '',
    session: {
      authorization: tokens.idToken,
      accessToken: tokens.accessToken,
      refreshToken,
      expireEpoch: tokens.expiresAt,
    },
  };
}

/**
 * Checks a username and password with throttling, back-pressure and uniform failure (unknown
 * users are verified against a dummy hash, so both failures cost the same). Returns the user id.
 */
export async function checkPassword(
  deps: Deps,
  username: string,
  password: string,
  meta: RequestMeta,
): Promise<string> {
  if (passwordQueueDepth() >= MAX_HASH_QUEUE) {
    throw new AppError('service_unavailable', 'Too many sign-ins in progress; retry shortly', {
      headers: { 'retry-after': '1' },
    });
  }
  // Reserved (counted as a failure, locking past the free ones) before any hashing.
  const reservation = await reserveLoginAttempt(deps, username, meta.ip);
  const user = await findUserByUsername(deps.db, username);
  const stored = user?.password_hash ?? (await dummyPasswordHash());
  const matches = await verifyPassword(stored, password);
  if (!user || !matches || !user.password_hash || user.status !== 'enabled') {
    // A failure naming an existing account is in its organization's audit trail (an unknown name has no organization).
    if (user) {
      const reason =
        user.status !== 'enabled' ? `account_${user.status}` : !user.password_hash ? 'no_password' : 'wrong_password';
      await audit(deps.db, {
        orgId: user.org_id,
        at: deps.clock.now(),
        actorId: null,
        action: 'auth.signin_failed',
        targetType: 'user',
        targetId: user.id,
        ip: meta.ip,
        data: { username: user.username, reason },
      });
    }
    throw unauthorized(BAD_CREDENTIALS_MESSAGE);
  }
  await loginSucceeded(deps, reservation);
  return user.id;
}

export interface OpenSessionOptions {
  kind: SessionRow['kind'];
  meta: RequestMeta;
  impersonatorId?: string;
  clientId?: string;
  scope?: string;
  ttlMs?: number;
  refreshable: boolean;
  /** Pre-chosen session id (OAuth records it on the code in the same transaction). */
  id?: string;
  /** The identity provider the person signed in through (features/sso). */
  ssoProviderId?: string;
}

/** Writes a session and its first refresh token inside the caller's transaction. */
export async function insertSessionRows(
  deps: Deps,
  trx: DbOrTrx,
  subject: TokenSubject,
  options: OpenSessionOptions,
): Promise<{ session: SessionRow; refreshToken: string }> {
  const now = deps.clock.now();
  const session: SessionRow = {
    id: options.id ?? newId(now),
    org_id: subject.org_id,
    user_id: subject.id,
    kind: options.kind,
    client_id: options.clientId ?? null,
    impersonator_id: options.impersonatorId ?? null,
    scope: options.scope ?? null,
    ip: options.meta.ip,
    user_agent: options.meta.userAgent?.slice(0, 300) ?? null,
    created_at: now,
    last_used_at: now,
    expires_at: now + (options.ttlMs ?? REFRESH_FAMILY_TTL_MS),
    revoked_at: null,
    revoked_reason: null,
    sso_provider_id: options.ssoProviderId ?? null,
  };
  const refreshToken = options.refreshable ? newRefreshToken() : '';
  await insertSession(trx, session);
  // A sign-in (an impersonation is audited as such by impersonation.service.ts).
  if (options.kind !== 'impersonation') {
    await audit(trx, {
      orgId: subject.org_id,
      at: now,
      actorId: subject.id,
      action: 'auth.signin',
      targetType: 'session',
      targetId: session.id,
      ip: options.meta.ip,
      objects: [{ type: 'user', id: subject.id }],
      data: {
        kind: options.kind,
        ...(options.clientId ? { clientId: options.clientId } : {}),
        ...(options.ssoProviderId ? { ssoProviderId: options.ssoProviderId } : {}),
      },
    });
  }
  if (refreshToken) {
    await insertRefreshToken(trx, {
      token_hash: refreshHash(deps, refreshToken),
      hash_key_id: deps.keys.keyId,
      session_id: session.id,
      org_id: session.org_id,
      generation: 0,
      created_at: now,
    });
  }
  return { session, refreshToken };
}

/** Opens a session (refresh family) for an enabled user. */
export async function openSession(
  deps: Deps,
  userId: string,
  options: OpenSessionOptions,
): Promise<{ subject: TokenSubject; session: SessionRow; refreshToken: string }> {
  const subject = await findTokenSubject(deps.db, userId);
  if (!subject || subject.status !== 'enabled') throw unauthorized(BAD_CREDENTIALS_MESSAGE);
  const { session, refreshToken } = await deps.db
    .transaction()
    .execute((trx) => insertSessionRows(deps, trx, subject, options));
  await scheduleCleanup(deps);
  return { subject, session, refreshToken };
}

export async function login(
  deps: Deps,
  username: string,
  password: string,
  meta: RequestMeta,
): Promise<SessionResponse> {
  const userId = await checkPassword(deps, username, password, meta);
  const { subject, session, refreshToken } = await openSession(deps, userId, {
    kind: 'password',
    meta,
    refreshable: true,
  });
  return sessionResponse(deps, subject, await mintTokens(deps, subject, session), refreshToken);
}
