import type { Deps } from '../../../deps.ts';
import { audit } from '../../../core/audit.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import { notFound, unauthorized } from '../../../core/http/errors.ts';
import {
  findSession,
  findTokenSubject,
  listActiveSessions,
  revokeSession,
  revokeUserSessions,
} from './sessions.repo.ts';
import { managedUser } from '../../identity/index.ts';
import { verifySignature } from '../keys/signing-keys.ts';
import { firstPartyClientId, userPoolId } from './tokens.service.ts';

export interface SessionView {
  id: string;
  kind: 'password' | 'impersonation' | 'oauth';
  current: boolean;
  clientId: string | null;
  impersonatorId: string | null;
  ip: string | null;
  userAgent: string | null;
  createdEpoch: number;
  lastUsedEpoch: number;
  expireEpoch: number;
}

export async function listSessions(
  deps: Deps,
  principal: Principal,
  userId = principal.userId,
): Promise<{ sessions: SessionView[] }> {
  const rows = await listActiveSessions(deps.db, principal.orgId, userId, deps.clock.now());
  return {
    sessions: rows.map((r) => ({
      id: r.id,
      kind: r.kind,
      current: r.id === principal.sessionId,
      clientId: r.client_id,
      impersonatorId: r.impersonator_id,
      ip: r.ip,
      userAgent: r.user_agent,
      createdEpoch: r.created_at,
      lastUsedEpoch: r.last_used_at,
      expireEpoch: r.expires_at,
    })),
  };
}

/** Ends one of the caller's own sessions; anyone else's is "not found". */
export async function revokeOwnSession(deps: Deps, principal: Principal, sessionId: string, ip: string): Promise<void> {
  const now = deps.clock.now();
  const row = await findSession(deps.db, sessionId);
  if (!row || row.org_id !== principal.orgId || row.user_id !== principal.userId || row.revoked_at !== null)
    throw notFound('Session');
  await deps.db.transaction().execute(async (trx) => {
    await revokeSession(trx, sessionId, now, 'user_revoked');
    await audit(trx, {
      orgId: principal.orgId,
      at: now,
      actorId: principal.impersonatorId ?? principal.userId,
      action: 'auth.session.revoke',
      targetType: 'session',
      targetId: sessionId,
      ip,
    });
  });
}

/** "Sign out everywhere": every session of the caller, including the current one. */
export async function revokeAllOwnSessions(deps: Deps, principal: Principal, ip: string): Promise<{ revoked: number }> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const revoked = await revokeUserSessions(trx, principal.orgId, principal.userId, now, 'user_revoked_all');
    await audit(trx, {
      orgId: principal.orgId,
      at: now,
      actorId: principal.impersonatorId ?? principal.userId,
      action: 'auth.session.revoke_all',
      targetType: 'user',
      targetId: principal.userId,
      ip,
      data: { revoked },
    });
    return { revoked };
  });
}

export interface ExpireBody {
  endpointUrl?: string;
  clientId?: string;
  userPoolId?: string;
  username?: string;
  session?: { authorization?: string; accessToken?: string; refreshToken?: string };
}

/**
 * DELETE /v1/auth/token: ends the session the token in `AccessToken` or `Authorization` belongs to — its access and
 * id tokens and its whole refresh family. A merely expired (but genuine) token may still end
 * its session, so a client returning after an hour can still sign out.
 */
export async function expireToken(deps: Deps, accessToken: string | undefined, body: ExpireBody, ip: string) {
  if (!accessToken) throw unauthorized('Send the token to expire in the AccessToken or Authorization header');
  const claims = await verifySignature(deps, accessToken);
  if (!claims) throw unauthorized();
  const [session, subject] = await Promise.all([
    findSession(deps.db, claims.sid),
    findTokenSubject(deps.db, claims.sub),
  ]);
  const now = deps.clock.now();
  if (
    !session ||
    session.revoked_at !== null ||
    session.user_id !== claims.sub ||
    session.expires_at <= now ||
    !subject
  )
    throw unauthorized();
  await deps.db.transaction().execute(async (trx) => {
    await revokeSession(trx, session.id, now, 'logout');
    await audit(trx, {
      orgId: session.org_id,
      at: now,
      actorId: session.impersonator_id ?? session.user_id,
      action: 'auth.logout',
      targetType: 'session',
      targetId: session.id,
      ip,
    });
  });
  return {
    endpointUrl: `${deps.config.publicUrl}/v1`,
    clientId: firstPartyClientId(deps, subject.org_id),
    userPoolId: userPoolId(subject.customer_id),
    username: subject.username,
    session: { authorization: '', accessToken: '', refreshToken: body.session?.refreshToken ?? '' },
  };
}

/** An administrator (User Management) reads someone's active sessions; another organization's user is 404. */
export async function listUserSessions(
  deps: Deps,
  principal: Principal,
  userId: string,
): Promise<{ sessions: SessionView[] }> {
  const user = await managedUser(deps.db, principal, userId, false);
  return listSessions(deps, principal, user.userId);
}

/**
 * An administrator ends one of someone's sessions (or all of them, `sessionId` undefined): User
 * Management, and the user must hold nothing the caller lacks. Their tokens stop working at once.
 */
export async function revokeUserSessionsAsAdmin(
  deps: Deps,
  principal: Principal,
  userId: string,
  sessionId: string | undefined,
  ip: string,
): Promise<{ revoked: number }> {
  const user = await managedUser(deps.db, principal, userId, true);
  const now = deps.clock.now();
  if (sessionId !== undefined) {
    const row = await findSession(deps.db, sessionId);
    if (!row || row.org_id !== principal.orgId || row.user_id !== user.userId || row.revoked_at !== null)
      throw notFound('Session');
  }
  return deps.db.transaction().execute(async (trx) => {
    const revoked =
      sessionId === undefined
        ? await revokeUserSessions(trx, principal.orgId, user.userId, now, 'admin_revoked_all')
        : Number(await revokeSession(trx, sessionId, now, 'admin_revoked'));
    await audit(trx, {
      orgId: principal.orgId,
      at: now,
      actorId: principal.impersonatorId ?? principal.userId,
      action: sessionId === undefined ? 'auth.session.admin_revoke_all' : 'auth.session.admin_revoke',
      targetType: sessionId === undefined ? 'user' : 'session',
      targetId: sessionId ?? user.userId,
      ip,
      data: { userId: user.userId, revoked },
    });
    return { revoked };
  });
}
