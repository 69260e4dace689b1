import type { Deps } from '../../deps.ts';
import { unauthorized } from '../../core/http/errors.ts';
import { findRefreshToken, findTokenSubject, insertRefreshToken, lockSession, markRefreshTokenUsed, revokeSession, touchSession, type SessionRow } from './sessions.repo.ts';
import { mintTokens, refreshHash, sessionResponse, successorOf, type SessionResponse, type TokenSubject } from './tokens.service.ts';
import { verifySignature } from './signing-keys.ts';

export type RotationOutcome =
  | { ok: true; session: SessionRow; refreshToken: string }
  | { ok: false; reason: 'unknown' | 'inactive' | 'client' | 'reuse' };

/**
 * One refresh of a token family, serialized per family (row lock on PostgreSQL; SQLite runs one
 * transaction at a time), so a concurrent revoke or refresh can never fork the family:
 * - the current token rotates to its successor (derived from it, stored only as a hash);
 * - the token just rotated, replayed inside the grace window while its successor is still
 *   current, yields that same successor (lost responses, parallel tabs);
 * - anything else already used is a replay: the whole family is revoked.
 */
export async function rotateRefreshToken(deps: Deps, refreshToken: string, expect: { clientId: string | null; sessionId?: string }): Promise<RotationOutcome> {
  if (!refreshToken.startsWith('rt_') || refreshToken.length > 200) return { ok: false, reason: 'unknown' };
  const hash = refreshHash(deps, refreshToken);
  const first = await findRefreshToken(deps.db, hash);
  if (!first || (expect.sessionId !== undefined && first.session_id !== expect.sessionId)) return { ok: false, reason: 'unknown' };
  const graceMs = deps.config.refreshGraceSeconds * 1000;
  const outcome = await deps.db.transaction().execute(async (trx): Promise<RotationOutcome> => {
    const now = deps.clock.now();
    const session = await lockSession(trx, deps.engine, first.session_id);
    if (!session || session.revoked_at !== null || session.expires_at <= now || session.kind === 'impersonation') return { ok: false, reason: 'inactive' };
    if (session.client_id !== expect.clientId) return { ok: false, reason: 'client' };
    const row = await findRefreshToken(trx, hash);
    if (!row) return { ok: false, reason: 'unknown' };
    const successor = successorOf(deps, refreshToken);
    const successorHash = refreshHash(deps, successor);
    if (row.used_at === null) {
      await insertRefreshToken(trx, { token_hash: successorHash, session_id: session.id, org_id: session.org_id, generation: row.generation + 1, created_at: now });
      await markRefreshTokenUsed(trx, hash, now, successorHash);
      await touchSession(trx, session.id, now);
      return { ok: true, session, refreshToken: successor };
    }
    if (now - row.used_at < graceMs && row.successor_hash === successorHash) {
      const next = await findRefreshToken(trx, successorHash);
      if (next && next.used_at === null) return { ok: true, session, refreshToken: successor };
    }
    await revokeSession(trx, session.id, now, 'refresh_token_reuse');
    return { ok: false, reason: 'reuse' };
  });
  if (!outcome.ok && outcome.reason === 'reuse') deps.log.warn({ sessionId: first.session_id }, 'refresh token reuse: session revoked');
  return outcome;
}

/** POST /v1/auth/token with a refresh token: the access token must be one of the same session (its expiry is irrelevant). */
export async function refreshSession(deps: Deps, accessToken: string, refreshToken: string): Promise<SessionResponse> {
  const claims = await verifySignature(deps, accessToken);
  if (!claims) throw unauthorized('Invalid or expired refresh token');
  const outcome = await rotateRefreshToken(deps, refreshToken, { clientId: null, sessionId: claims.sid });
  if (!outcome.ok) throw unauthorized('Invalid or expired refresh token');
  const subject = await activeSubject(deps, outcome.session);
  return sessionResponse(deps, subject, await mintTokens(deps, subject, outcome.session), outcome.refreshToken);
}

/** A disabled (or deleted) user's session ends at its next refresh. */
export async function activeSubject(deps: Deps, session: SessionRow): Promise<TokenSubject> {
  const subject = await findTokenSubject(deps.db, session.user_id);
  if (!subject || subject.status !== 'enabled' || subject.org_id !== session.org_id) {
    await revokeSession(deps.db, session.id, deps.clock.now(), 'user_disabled');
    throw unauthorized('Invalid or expired refresh token');
  }
  return subject;
}
