import type { Deps } from '../../../deps.ts';
import { audit } from '../../../core/audit.ts';
import { requireOwnSignIn, requirePrivileges } from '../../../core/authz/authorize.ts';
import { assertWithin, byKind, grantsOfGroups, holdingsOfPrincipal } from '../../../core/authz/ceiling.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import { conflict, invalidField, notFound } from '../../../core/http/errors.ts';
import { endUserSessions, findUserProfile, userGrantBasis } from '../identity.repo.ts';
import { hashPassword, verifyPassword } from './password.ts';
import { passwordProblem } from './password-policy.ts';
import { parsePrivileges } from '../principal.ts';

/**
 * The signed-in person changes their own password, proving the current one. Every other session
 * of theirs ends (a stolen token stops working); the one making the change stays signed in.
 */
export async function changeOwnPassword(
  deps: Deps,
  principal: Principal,
  input: { currentPassword: string; newPassword: string },
  ip: string,
) {
  requireOwnSignIn(principal, 'Changing a password');
  const user = await findUserProfile(deps.db, principal.orgId, principal.userId);
  if (!user) throw notFound('User');
  if (user.account_type !== 'local' || !user.password_hash)
    throw conflict('This account has no password here; it signs in elsewhere');
  if (!(await verifyPassword(user.password_hash, input.currentPassword)))
    throw invalidField('body.currentPassword', 'is not your current password');
  const problem = passwordProblem(input.newPassword, user.username);
  if (problem) throw invalidField('body.newPassword', problem);
  if (input.newPassword === input.currentPassword)
    throw invalidField('body.newPassword', 'must differ from the current password');
  const hash = await hashPassword(input.newPassword);
  const now = deps.clock.now();
  const revoked = await deps.db.transaction().execute(async (trx) => {
    await trx
      .updateTable('users')
      .set({ password_hash: hash, updated_at: now })
      .where('org_id', '=', principal.orgId)
      .where('id', '=', user.id)
      .execute();
    const n = await endUserSessions(trx, principal.orgId, user.id, now, 'password_changed', principal.sessionId);
    await audit(trx, {
      orgId: principal.orgId,
      at: now,
      actorId: principal.userId,
      action: 'user.password_changed',
      targetType: 'user',
      targetId: user.id,
      ip,
      data: { revokedSessions: n },
    });
    return n;
  });
  return {
    status: 'success' as const,
    message: 'Password changed; your other sessions have ended',
    revokedSessions: revoked,
  };
}

/**
 * An administrator (User Management, own sign-in) sets someone else's password. The user must
 * not hold more than the administrator; every session of theirs ends.
 */
export async function resetPassword(
  deps: Deps,
  principal: Principal,
  userId: string,
  input: { newPassword: string },
  ip: string,
) {
  requirePrivileges(principal, 'user_management');
  const user = await findUserProfile(deps.db, principal.orgId, userId);
  if (!user) throw notFound('User');
  requireOwnSignIn(principal, 'Setting a password');
  if (user.id === principal.userId)
    throw conflict('Change your own password with PUT /v1/user/password and your current password');
  if (user.account_type !== 'local') throw conflict('This account has no password here; it signs in elsewhere');
  const basis = await userGrantBasis(deps.db, principal.orgId, user.id);
  const theirs = {
    privileges: parsePrivileges(basis?.privileges ?? '[]'),
    grants: await grantsOfGroups(deps.db, principal.orgId, basis?.groupIds ?? []),
  };
  assertWithin(byKind(theirs), byKind(await holdingsOfPrincipal(deps.db, principal)), 'The user holds');
  const problem = passwordProblem(input.newPassword, user.username);
  if (problem) throw invalidField('body.newPassword', problem);
  const hash = await hashPassword(input.newPassword);
  const now = deps.clock.now();
  const revoked = await deps.db.transaction().execute(async (trx) => {
    await trx
      .updateTable('users')
      .set({ password_hash: hash, updated_at: now })
      .where('org_id', '=', principal.orgId)
      .where('id', '=', user.id)
      .execute();
    const n = await endUserSessions(trx, principal.orgId, user.id, now, 'password_reset');
    await audit(trx, {
      orgId: principal.orgId,
      at: now,
      actorId: principal.userId,
      action: 'user.password_reset',
      targetType: 'user',
      targetId: user.id,
      ip,
      data: { revokedSessions: n },
    });
    return n;
  });
  return {
    status: 'success' as const,
    message: "Password set; the user's sessions have ended",
    revokedSessions: revoked,
  };
}
