import type { Deps } from '../../../deps.ts';
import { unauthorized } from '../../../core/http/errors.ts';
import {
  findRefreshToken,
  findSession,
  findTokenSubject,
  insertRefreshToken,
  lockRefreshToken,
  markRefreshTokenUsed,
  rehashRefreshToken,
  revokeSession,
  touchSession,
  type SessionRow,
} from './sessions.repo.ts';
import {
  mintTokens,
  refreshHash,
  refreshHashes,
  sessionResponse,
  successorsOf,
  type SessionResponse,
  type TokenSubject,
} from './tokens.service.ts';
import { verifySignature } from '../keys/signing-keys.ts';

export type RotationOutcome =
  | { ok: true; session: SessionRow; refreshToken: string }
  | { ok: false; reason: 'unknown' | 'inactive' | 'client' | 'reuse' };

/**
 * One refresh of a token family. The presented token's row is locked first (FOR UPDATE on
 * PostgreSQL; SQLite runs one transaction at a time), so concurrent uses of one token are
 * serialized and the family can never fork:
 * - the current token rotates to its successor (derived from it, stored only as a hash);
 * - the token just rotated, replayed inside the grace window while its successor is still
 *   current, yields that same successor (lost responses, parallel tabs);
 * - anything else already used is a replay: the whole session is revoked.
 * A revocation racing a refresh needs no lock: every token is checked against the session row
 * on use, so whatever a concurrent refresh mints for a revoked session is dead on arrival.
 */
export async function rotateRefreshToken(
  deps: Deps,
  refreshToken: string,
  expect: { clientId: string | null; sessionId?: string },
): Promise<RotationOutcome> {
  if (!refreshToken.startsWith('rt_') || refreshToken.length > 200) return { ok: false, reason: 'unknown' };
  const hashes = refreshHashes(deps, refreshToken);
  const graceMs = deps.config.refreshGraceSeconds * 1000;
  const outcome = await deps.db
    .transaction()
    .execute(async (trx): Promise<RotationOutcome & { sessionId?: string }> => {
      const now = deps.clock.now();
      const row = await lockRefreshToken(trx, deps.engine, hashes);
      if (!row || (expect.sessionId !== undefined && row.session_id !== expect.sessionId))
        return { ok: false, reason: 'unknown' };
      const session = await findSession(trx, row.session_id);
      if (!session || session.revoked_at !== null || session.expires_at <= now || session.kind === 'impersonation')
        return { ok: false, reason: 'inactive' };
      if (session.client_id !== expect.clientId) return { ok: false, reason: 'client' };
      // Under the current key; a retry may find the successor made under another held key (a rotation).
      const successors = successorsOf(deps, refreshToken);
      const { token: successor, hash: successorHash } = successors[0]!;
      if (row.used_at === null) {
        await insertRefreshToken(trx, {
          token_hash: successorHash,
          hash_key_id: deps.keys.keyId,
          session_id: session.id,
          org_id: session.org_id,
          generation: row.generation + 1,
          created_at: now,
        });
        await markRefreshTokenUsed(trx, row.token_hash, now, successorHash);
        await touchSession(trx, session.id, now);
        return { ok: true, session, refreshToken: successor };
      }
      const given = successors.find((s) => s.hash === row.successor_hash);
      if (now - row.used_at < graceMs && given) {
        const next = await findRefreshToken(trx, [given.hash]);
        if (next && next.used_at === null) return { ok: true, session, refreshToken: given.token };
      }
      await revokeSession(trx, session.id, now, 'refresh_token_reuse');
      return { ok: false, reason: 'reuse', sessionId: session.id };
    });
  if (!outcome.ok && outcome.reason === 'reuse')
    deps.log.warn({ sessionId: outcome.sessionId }, 'refresh token reuse: session revoked');
  return outcome;
}

/**
 * POST /v1/auth/token with a refresh token. First-party refresh tokens do not rotate: the reference's
 * clients cache the login response and refresh with the same token for its whole 30 days, so the
 * same token is returned again. It ends with its session: 30 days after sign-in, `DELETE
 * /v1/auth/token`, a revoked session, a disabled user. OAuth clients keep rotation with reuse
 * detection (`/v1/oauth2/token`). The access token is optional; when sent it must be of the same
 * session (its expiry is irrelevant).
 */
export async function refreshSession(
  deps: Deps,
  accessToken: string | undefined,
  refreshToken: string,
): Promise<SessionResponse> {
  let sessionId: string | undefined;
  if (accessToken !== undefined) {
    const claims = await verifySignature(deps, accessToken);
    if (!claims) throw unauthorized(INVALID_REFRESH);
    sessionId = claims.sid;
  }
  if (!refreshToken.startsWith('rt_') || refreshToken.length > 200) throw unauthorized(INVALID_REFRESH);
  const row = await findRefreshToken(deps.db, refreshHashes(deps, refreshToken));
  // A token already rotated away (by an earlier version, which rotated) is refused, not revived.
  if (!row || row.used_at !== null || (sessionId !== undefined && row.session_id !== sessionId))
    throw unauthorized(INVALID_REFRESH);
  const now = deps.clock.now();
  const session = await findSession(deps.db, row.session_id);
  if (
    !session ||
    session.revoked_at !== null ||
    session.expires_at <= now ||
    session.kind !== 'password' ||
    session.client_id !== null
  ) {
    throw unauthorized(INVALID_REFRESH);
  }
  const subject = await activeSubject(deps, session);
  await touchSession(deps.db, session.id, now);
  // Found under a previous key (a secret rotation): re-keyed, so it outlives that key.
  const current = refreshHash(deps, refreshToken);
  if (row.token_hash !== current) await rehashRefreshToken(deps.db, row.token_hash, current, deps.keys.keyId);
  return sessionResponse(deps, subject, await mintTokens(deps, subject, session), refreshToken);
}

const INVALID_REFRESH = 'Invalid or expired refresh token';

/** A disabled (or deleted) user's session ends at its next refresh. */
export async function activeSubject(deps: Deps, session: SessionRow): Promise<TokenSubject> {
  const subject = await findTokenSubject(deps.db, session.user_id);
  if (!subject || subject.status !== 'enabled' || subject.org_id !== session.org_id) {
    await revokeSession(deps.db, session.id, deps.clock.now(), 'user_disabled');
    throw unauthorized('Invalid or expired refresh token');
  }
  return subject;
}
