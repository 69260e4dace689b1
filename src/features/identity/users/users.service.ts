import type { Deps } from '../../../deps.ts';
import { audit } from '../../../core/audit.ts';
import { hasPrivilege, privilegesWithin, requireOwnSignIn, requirePrivileges } from '../../../core/authz/authorize.ts';
import {
  assertPrivilegesStillHeld,
  assertWithin,
  byKind,
  grantsOfGroups,
  holdingsOfPrincipal,
  lockOrganization,
  privilegesHeldByPeople,
  type Holdings,
} from '../../../core/authz/ceiling.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import { isUniqueViolation, type DbOrTrx } from '../../../core/db/connect.ts';
import { fromJson } from '../../../core/db/json.ts';
import type { UsersTable } from '../../../core/db/schema.ts';
import { AppError, conflict, forbidden, invalidField, notFound } from '../../../core/http/errors.ts';
import { newId } from '../../../core/ids.ts';
import type { GroupMembership, User, UserCreate, UserUpdate } from '../identity.schemas.ts';
import {
  endImpersonationsBy,
  endUserSessions,
  existingGroupIds,
  findGroup,
  findGroupByName,
  findRole,
  findRoleByName,
  findUserProfile,
  replaceUserGroups,
  userGrantBasis,
  type UserProfileRow,
} from '../identity.repo.ts';
import { hashPassword } from '../passwords/password.ts';
import { parsePrivileges } from '../principal.ts';
import { passwordProblem } from '../passwords/password-policy.ts';
import { publishUserEvent } from '../events.ts';

export function toUser(row: UserProfileRow): User {
  return {
    userId: row.id,
    customerId: row.customer_id,
    userName: row.account_type === 'federated' ? null : row.username,
    emailId: row.email,
    firstName: row.first_name,
    lastName: row.last_name,
    friendlyName: row.friendly_name,
    roleId: row.role_id,
    status: row.status,
    accountType: row.account_type,
    groups: fromJson<(string | null)[]>(row.group_ids, [])
      .filter((g): g is string => g !== null)
      .sort(),
    phone: row.phone,
    contact: row.contact,
    country: row.country,
    company: row.company,
    createdEpoch: row.created_at,
    lastUpdatedEpoch: row.updated_at,
    createdDate: new Date(row.created_at).toISOString(),
    lastUpdatedDate: new Date(row.updated_at).toISOString(),
  };
}

/**
 * The caller's own profile. It is made only of identity rows (user, organization, memberships), so
 * it is kept in memory like the principal and dropped the moment any of them changes
 * (core/db/revision.ts); a miss costs one compiled query.
 */
export async function getCurrentUser(deps: Deps, principal: Principal): Promise<User> {
  const user = await currentUsers(deps).get(`${principal.orgId} ${principal.userId}`, async () => {
    const row = await findUserProfile(deps.db, principal.orgId, principal.userId);
    return row ? { value: toUser(row), validUntil: Number.POSITIVE_INFINITY } : null;
  });
  if (!user) throw notFound('User');
  return user;
}

function currentUsers(deps: Deps) {
  return deps.runtime.identity.currentUsers;
}

/** getCurrentUser's answer when it is cached and current, synchronously (no promise); else undefined. */
export function cachedCurrentUser(deps: Deps, principal: Principal): User | undefined {
  return currentUsers(deps).peek(`${principal.orgId} ${principal.userId}`);
}

/** Users see themselves; seeing anyone else takes User Management. Anything else is "not found". */
async function visibleUser(db: DbOrTrx, principal: Principal, id: string): Promise<UserProfileRow> {
  const row = await findUserProfile(db, principal.orgId, id);
  if (!row || (row.id !== principal.userId && !hasPrivilege(principal, 'user_management'))) throw notFound('User');
  return row;
}

export async function getUser(deps: Deps, principal: Principal, id: string): Promise<User> {
  return toUser(await visibleUser(deps.db, principal, id));
}

async function assignableRole(db: DbOrTrx, principal: Principal, field: string, by: { id?: string; name?: string }) {
  const role = by.id
    ? await findRole(db, principal.orgId, by.id)
    : await findRoleByName(db, principal.orgId, by.name ?? '');
  if (!role) throw invalidField(field, 'names no role of this organization');
  if (!privilegesWithin(parsePrivileges(role.privileges), principal.privileges)) {
    throw forbidden('A role with privileges you do not hold cannot be assigned');
  }
  return role;
}

async function assertGroupsExist(db: DbOrTrx, orgId: string, groups: readonly string[]): Promise<void> {
  const found = await existingGroupIds(db, orgId, groups);
  const missing = groups.filter((g) => !found.has(g));
  if (missing.length > 0) throw invalidField('body.groups', `names groups that do not exist: ${missing.join(', ')}`);
}

/** What a user holds now: role privileges and the template permissions their groups bring. */
async function userHoldings(db: DbOrTrx, orgId: string, userId: string): Promise<Holdings> {
  const basis = await userGrantBasis(db, orgId, userId);
  if (!basis) return { privileges: new Set(), grants: new Map() };
  return { privileges: parsePrivileges(basis.privileges), grants: await grantsOfGroups(db, orgId, basis.groupIds) };
}

/**
 * A change to someone else needs the caller's own sign-in (API keys, impersonation and OAuth
 * tokens cannot change people) and may not touch anyone holding more than the caller.
 */
async function assertMayChange(db: DbOrTrx, principal: Principal, caller: Holdings, userId: string): Promise<void> {
  if (userId === principal.userId) return;
  requireOwnSignIn(principal, 'Changing another user');
  assertWithin(byKind(await userHoldings(db, principal.orgId, userId)), byKind(caller), 'The user holds');
}

/** What a change gives a user (the caller included) must be the caller's, compared by kind (core/authz/ceiling.ts). */
function assertGives(_principal: Principal, _userId: string, gives: Holdings, caller: Holdings, what: string): void {
  assertWithin(byKind(gives), byKind(caller), what);
}

export async function createUser(
  deps: Deps,
  principal: Principal,
  input: UserCreate,
  ip: string,
): Promise<{ userId: string; roleId: string }> {
  requirePrivileges(principal, 'user_management', 'security_template_management');
  // A new person (with a password, or signing in elsewhere) is a lasting credential.
  requireOwnSignIn(principal, 'Creating a user');
  // A local account without a password cannot sign in until it is given one: set by an
  // administrator, or chosen by the person through an invitation (POST /v1/user/{id}/invitation).
  if (input.accountType === 'local' && input.password !== undefined) {
    const problem = passwordProblem(input.password, input.username);
    if (problem) throw invalidField('body.password', problem);
  }
  const passwordHash =
    input.accountType === 'local' && input.password !== undefined ? await hashPassword(input.password) : null;
  const now = deps.clock.now();
  const userId = newId(now);
  try {
    await deps.db.transaction().execute(async (trx) => {
      const role = await assignableRole(trx, principal, 'body.userRoleId', { id: input.userRoleId });
      await assertGroupsExist(trx, principal.orgId, input.groups);
      const caller = await holdingsOfPrincipal(trx, principal);
      assertGives(
        principal,
        userId,
        {
          privileges: parsePrivileges(role.privileges),
          grants: await grantsOfGroups(trx, principal.orgId, input.groups),
        },
        caller,
        'These groups give',
      );
      const attrs = input.customAttributes ?? {};
      await trx
        .insertInto('users')
        .values({
          id: userId,
          org_id: principal.orgId,
          username: input.username,
          username_key: input.username.toLowerCase(),
          email: input.email,
          first_name: input.firstName,
          last_name: input.lastName,
          friendly_name: input.friendlyName,
          status: 'enabled',
          account_type: input.accountType,
          role_id: role.id,
          password_hash: passwordHash,
          phone: attrs.phone === undefined ? null : String(attrs.phone),
          company: attrs.company ?? null,
          country: attrs.country ?? null,
          contact: attrs.contact === undefined ? null : String(attrs.contact),
          created_at: now,
          updated_at: now,
        })
        .execute();
      await replaceUserGroups(trx, principal.orgId, userId, input.groups);
      await audit(trx, {
        orgId: principal.orgId,
        at: now,
        actorId: principal.userId,
        action: 'user.created',
        targetType: 'user',
        targetId: userId,
        ip,
      });
      await publishUserEvent(trx, now, principal.orgId, principal.userId, 'user.created', userId);
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict('A user with this username already exists', 'body.username');
    throw error;
  }
  return { userId, roleId: input.userRoleId };
}

const SELF_SERVICE_FIELDS = [
  'firstName',
  'lastName',
  'friendlyName',
  'email',
  'company',
  'country',
  'contact',
  'phone',
] as const;

export async function updateUser(
  deps: Deps,
  principal: Principal,
  id: string,
  input: UserUpdate,
  ip: string,
): Promise<User> {
  const now = deps.clock.now();
  const row = await deps.db.transaction().execute(async (trx) => {
    const privileged =
      input.userRoleId !== undefined ||
      input.userRoleName !== undefined ||
      input.groups !== undefined ||
      input.status !== undefined;
    if (privileged) await lockOrganization(trx, principal.orgId);
    const user = await visibleUser(trx, principal, id);
    if (privileged) requirePrivileges(principal, 'user_management');
    const caller = await holdingsOfPrincipal(trx, principal);
    await assertMayChange(trx, principal, caller, user.id);
    if (input.status === 'disabled' && user.id === principal.userId)
      throw conflict('You cannot disable your own account', 'body.status');
    const heldBefore = privileged ? await privilegesHeldByPeople(trx, principal.orgId) : undefined;
    const patch: Partial<UsersTable> = { updated_at: now };
    for (const field of SELF_SERVICE_FIELDS) {
      const value = input[field];
      if (value === undefined) continue;
      const column = (
        {
          firstName: 'first_name',
          lastName: 'last_name',
          friendlyName: 'friendly_name',
          email: 'email',
          company: 'company',
          country: 'country',
          contact: 'contact',
          phone: 'phone',
        } as const
      )[field];
      (patch as Record<string, unknown>)[column] = String(value);
    }
    let rolePrivileges: string | undefined;
    if (input.userRoleId !== undefined || input.userRoleName !== undefined) {
      const role = await assignableRole(trx, principal, input.userRoleId ? 'body.userRoleId' : 'body.userRoleName', {
        id: input.userRoleId,
        name: input.userRoleName,
      });
      // The reference's own example sends both: fine when they name the same role.
      if (input.userRoleId && input.userRoleName !== undefined && role.name_key !== input.userRoleName.toLowerCase()) {
        throw invalidField('body.userRoleName', `names a different role than body.userRoleId ("${role.name}")`);
      }
      patch.role_id = role.id;
      rolePrivileges = role.privileges;
    }
    if (input.status !== undefined) patch.status = input.status;
    if (input.groups !== undefined) {
      await assertGroupsExist(trx, principal.orgId, input.groups);
      // Whatever the user would hold afterwards (privileges and group permissions) must be the caller's too.
      const privileges = rolePrivileges !== undefined ? parsePrivileges(rolePrivileges) : new Set<never>();
      assertGives(
        principal,
        user.id,
        { privileges, grants: await grantsOfGroups(trx, principal.orgId, input.groups) },
        caller,
        'These groups give',
      );
      await replaceUserGroups(trx, principal.orgId, user.id, input.groups);
    }
    await trx.updateTable('users').set(patch).where('org_id', '=', principal.orgId).where('id', '=', user.id).execute();
    if (input.status === 'disabled' && user.status !== 'disabled') {
      // Disabling ends every session at once (re-enabling does not revive them), and any impersonation by the user.
      await endUserSessions(trx, principal.orgId, user.id, now, 'user_disabled');
      await endImpersonationsBy(trx, principal.orgId, user.id, now);
    }
    if (heldBefore) await assertPrivilegesStillHeld(trx, principal.orgId, heldBefore);
    const after = (await findUserProfile(trx, principal.orgId, user.id))!;
    // A change that changes nothing records nothing (no audit row, no event, same lastUpdated).
    if (sameProfile(user, after)) {
      await trx
        .updateTable('users')
        .set({ updated_at: user.updated_at })
        .where('org_id', '=', principal.orgId)
        .where('id', '=', user.id)
        .execute();
      return user;
    }
    await audit(trx, {
      orgId: principal.orgId,
      at: now,
      actorId: principal.userId,
      action: 'user.updated',
      targetType: 'user',
      targetId: user.id,
      ip,
      data: { fields: Object.keys(input) },
    });
    await publishUserEvent(trx, now, principal.orgId, principal.userId, 'user.updated', user.id);
    return after;
  });
  return toUser(row);
}

function sameProfile(a: UserProfileRow, b: UserProfileRow): boolean {
  const groups = (row: UserProfileRow) =>
    fromJson<(string | null)[]>(row.group_ids, [])
      .filter((g) => g !== null)
      .sort()
      .join(',');
  const { updated_at: _a, group_ids: _ga, ...restA } = a;
  const { updated_at: _b, group_ids: _gb, ...restB } = b;
  return groups(a) === groups(b) && JSON.stringify(restA) === JSON.stringify(restB);
}

export async function changeGroupMembership(
  deps: Deps,
  principal: Principal,
  id: string,
  input: GroupMembership,
  change: 'add' | 'remove',
  ip: string,
): Promise<void> {
  requirePrivileges(principal, 'user_management');
  if (!input.userGroupId && !input.userGroupName)
    throw invalidField('body.userGroupId', 'send userGroupId or userGroupName');
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    const user = await visibleUser(trx, principal, id);
    const group = input.userGroupId
      ? await findGroup(trx, principal.orgId, input.userGroupId)
      : await findGroupByName(trx, principal.orgId, input.userGroupName!);
    if (!group)
      throw invalidField(
        input.userGroupId ? 'body.userGroupId' : 'body.userGroupName',
        'names no group of this organization',
      );
    const caller = await holdingsOfPrincipal(trx, principal);
    await assertMayChange(trx, principal, caller, user.id);
    if (change === 'add') {
      // Joining a group gives its template permissions: the caller must hold them (themselves included).
      assertGives(
        principal,
        user.id,
        { privileges: new Set(), grants: await grantsOfGroups(trx, principal.orgId, [group.id]) },
        caller,
        'This group gives',
      );
      // Concurrent adds: exactly one inserts; the others change nothing and record nothing.
      const inserted = await trx
        .insertInto('user_groups')
        .values({ org_id: principal.orgId, user_id: user.id, group_id: group.id })
        .onConflict((oc) => oc.columns(['user_id', 'group_id']).doNothing())
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0)
        throw new AppError('conflict', 'User is already part of this group.');
    } else {
      const deleted = await trx
        .deleteFrom('user_groups')
        .where('org_id', '=', principal.orgId)
        .where('user_id', '=', user.id)
        .where('group_id', '=', group.id)
        .executeTakeFirst();
      if (Number(deleted.numDeletedRows) === 0) throw new AppError('conflict', 'User is not part of this group.');
    }
    await trx.updateTable('users').set({ updated_at: now }).where('id', '=', user.id).execute();
    await audit(trx, {
      orgId: principal.orgId,
      at: now,
      actorId: principal.userId,
      action: `user.group_${change === 'add' ? 'added' : 'removed'}`,
      targetType: 'user',
      targetId: user.id,
      ip,
      data: { groupId: group.id },
    });
    await publishUserEvent(trx, now, principal.orgId, principal.userId, 'user.updated', user.id);
  });
}

/**
 * The user an administrator (User Management) acts on, for what other features do to people (their
 * sessions): another organization's or a missing user is "not found"; with `withinCaller`, someone
 * holding more than the caller is refused with 403 (the privilege ceiling).
 */
export async function managedUser(
  db: DbOrTrx,
  principal: Principal,
  userId: string,
  withinCaller: boolean,
): Promise<{ userId: string; username: string }> {
  requirePrivileges(principal, 'user_management');
  const user = await findUserProfile(db, principal.orgId, userId);
  if (!user) throw notFound('User');
  if (withinCaller && user.id !== principal.userId)
    assertWithin(
      byKind(await userHoldings(db, principal.orgId, user.id)),
      byKind(await holdingsOfPrincipal(db, principal)),
      'The user holds',
    );
  return { userId: user.id, username: user.username };
}
