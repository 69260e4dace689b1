import { createHash, randomBytes } from 'node:crypto';
import type { Deps } from '../../../deps.ts';
import { audit } from '../../../core/audit.ts';
import { requireOwnSignIn, requirePrivileges } from '../../../core/authz/authorize.ts';
import { assertWithin, byKind, grantsOfGroups, holdingsOfPrincipal } from '../../../core/authz/ceiling.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import { AppError, conflict, invalidField, notFound } from '../../../core/http/errors.ts';
import { endUserSessions, findUserProfile, userGrantBasis } from '../identity.repo.ts';
import { hashPassword } from '../passwords/password.ts';
import { passwordProblem } from '../passwords/password-policy.ts';
import { parsePrivileges } from '../principal.ts';

/** How long an invitation's link works. */
export const INVITATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** Tokens are stored only as their SHA-256: a database leak yields no working link. */
export function invitationTokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * An administrator (User Management, own sign-in) invites a local user: a one-time link to choose
 * their password, shown to the administrator once. A new invitation replaces the user's previous
 * one. As with setting a password, the user must not hold more than the administrator.
 */
export async function createInvitation(
  deps: Deps,
  principal: Principal,
  userId: string,
  ip: string,
): Promise<{ url: string; token: string; expiresAt: string; expiresEpoch: number }> {
  requirePrivileges(principal, 'user_management');
  const user = await findUserProfile(deps.db, principal.orgId, userId);
  if (!user) throw notFound('User');
  requireOwnSignIn(principal, 'Inviting a user');
  if (user.id === principal.userId) throw conflict('You cannot invite yourself; change your own password instead');
  if (user.account_type !== 'local') throw conflict('This account has no password here; it signs in elsewhere');
  if (user.status !== 'enabled') throw conflict('The account is disabled; enable it before inviting');
  const basis = await userGrantBasis(deps.db, principal.orgId, user.id);
  const theirs = {
    privileges: parsePrivileges(basis?.privileges ?? '[]'),
    grants: await grantsOfGroups(deps.db, principal.orgId, basis?.groupIds ?? []),
  };
  assertWithin(byKind(theirs), byKind(await holdingsOfPrincipal(deps.db, principal)), 'The user holds');
  const token = randomBytes(32).toString('base64url');
  const now = deps.clock.now();
  const expiresAt = now + INVITATION_TTL_MS;
  await deps.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('user_invitations').where('user_id', '=', user.id).execute();
    await trx
      .insertInto('user_invitations')
      .values({
        user_id: user.id,
        org_id: principal.orgId,
        token_hash: invitationTokenHash(token),
        created_by: principal.userId,
        created_at: now,
        expires_at: expiresAt,
      })
      .execute();
    await audit(trx, {
      orgId: principal.orgId,
      at: now,
      actorId: principal.userId,
      action: 'user.invited',
      targetType: 'user',
      targetId: user.id,
      ip,
      data: { expiresAt },
    });
  });
  const url = new URL('/app/set-password', deps.config.publicUrl);
  url.searchParams.set('token', token);
  return { url: url.toString(), token, expiresAt: new Date(expiresAt).toISOString(), expiresEpoch: expiresAt };
}

function badToken(): AppError {
  return invalidField('body.token', 'is not a valid invitation: it may have been used or replaced by a newer one');
}

/**
 * Unauthenticated: the invited person sets their password with the link's token. The token works
 * once (it is deleted in the same transaction as the password is set) and until it expires; every
 * session the user had ends. Answers the username so the app can offer to sign in.
 */
export async function acceptInvitation(
  deps: Deps,
  input: { token: string; password: string },
  ip: string,
): Promise<{ status: 'success'; message: string; username: string }> {
  const hash = invitationTokenHash(input.token);
  const invitation = await deps.db
    .selectFrom('user_invitations')
    .selectAll()
    .where('token_hash', '=', hash)
    .executeTakeFirst();
  if (!invitation) throw badToken();
  const now = deps.clock.now();
  if (invitation.expires_at <= now)
    throw new AppError('gone', 'body.token: the invitation has expired; ask for a new one', {
      details: [{ field: 'body.token', message: 'has expired; ask for a new invitation' }],
    });
  const user = await findUserProfile(deps.db, invitation.org_id, invitation.user_id);
  if (!user || user.account_type !== 'local') throw badToken();
  if (user.status !== 'enabled') throw conflict('The account is disabled');
  const problem = passwordProblem(input.password, user.username);
  if (problem) throw invalidField('body.password', problem);
  const passwordHash = await hashPassword(input.password);
  await deps.db.transaction().execute(async (trx) => {
    // Consumed here: of two uses at once, only one deletes the row.
    const taken = await trx
      .deleteFrom('user_invitations')
      .where('token_hash', '=', hash)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    if (Number(taken.numDeletedRows) !== 1) throw badToken();
    await trx
      .updateTable('users')
      .set({ password_hash: passwordHash, updated_at: now })
      .where('org_id', '=', invitation.org_id)
      .where('id', '=', user.id)
      .execute();
    const revoked = await endUserSessions(trx, invitation.org_id, user.id, now, 'password_set_by_invitation');
    await audit(trx, {
      orgId: invitation.org_id,
      at: now,
      actorId: user.id,
      action: 'user.invitation_accepted',
      targetType: 'user',
      targetId: user.id,
      ip,
      data: { invitedBy: invitation.created_by, revokedSessions: revoked },
    });
  });
  return { status: 'success', message: 'Password set; sign in with it', username: user.username };
}
