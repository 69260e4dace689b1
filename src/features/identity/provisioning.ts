import type { Expression } from 'kysely';
import { audit } from '../../core/audit.ts';
import { privilegesWithin } from '../../core/authz/authorize.ts';
import { assertWithin, byKind, grantsOfGroups, holdingsOfPrincipal } from '../../core/authz/ceiling.ts';
import type { Principal } from '../../core/authz/principal.ts';
import type { DbOrTrx, Trx } from '../../core/db/connect.ts';
import type { UsersTable } from '../../core/db/schema.ts';
import { conflict, forbidden, invalidField, notFound } from '../../core/http/errors.ts';
import { newId } from '../../core/ids.ts';
import { createLocalUser } from './directory.ts';
import { publishUserEvent } from './events.ts';
import { endImpersonationsBy, endUserSessions, findRoleByName, userGrantBasis } from './identity.repo.ts';
import { parsePrivileges } from './principal.ts';
import { addGroup, assertGroupWithin, removeGroup } from './access/groups.service.ts';

/**
 * Users and groups as a provisioning client (SCIM, features/scim) sees and changes them. People only:
 * API keys' service accounts are never listed or changed. The caller's privileges are checked by the
 * caller (User Management); what a change gives or touches must lie within the caller's holdings
 * (core/authz/ceiling.ts), as for every other identity change. Call the writes inside a transaction.
 */

export interface ProvisionedUser {
  id: string;
  username: string;
  email: string;
  firstName: string;
  lastName: string;
  active: boolean;
  createdAt: number;
  updatedAt: number;
  groups: { id: string; name: string }[];
}

export interface ProvisionedGroup {
  id: string;
  name: string;
  createdAt: number;
  updatedAt: number;
  members: { id: string; username: string }[];
}

/** Ids a query leaves out (SCIM's deleted resources), as a subquery of the caller's own table. */
export type ExcludedIds = Expression<unknown>;

export interface UserCriteria {
  ids?: readonly string[];
  /** Case-insensitive (SCIM userName is not case-exact). */
  username?: string;
  /** Case-insensitive. */
  email?: string;
  exclude?: ExcludedIds;
}

function usersQuery(db: DbOrTrx, orgId: string, where: UserCriteria) {
  return db
    .selectFrom('users')
    .where('org_id', '=', orgId)
    .where('account_type', '!=', 'service')
    .$if(where.ids !== undefined, (q) => q.where('id', 'in', where.ids!.length > 0 ? [...where.ids!] : ['']))
    .$if(where.username !== undefined, (q) => q.where('username_key', '=', where.username!.toLowerCase()))
    .$if(where.email !== undefined, (q) =>
      q.where((eb) => eb(eb.fn('lower', ['email']), '=', where.email!.toLowerCase())),
    )
    .$if(where.exclude !== undefined, (q) => q.where('id', 'not in', where.exclude as never));
}

async function withGroups(db: DbOrTrx, orgId: string, rows: UsersTable[]): Promise<ProvisionedUser[]> {
  const ids = rows.map((r) => r.id);
  const memberships =
    ids.length === 0
      ? []
      : await db
          .selectFrom('user_groups')
          .innerJoin('groups', 'groups.id', 'user_groups.group_id')
          .select(['user_groups.user_id', 'groups.id', 'groups.name'])
          .where('user_groups.org_id', '=', orgId)
          .where('user_groups.user_id', 'in', ids)
          .orderBy('groups.name_key')
          .execute();
  return rows.map((r) => ({
    id: r.id,
    username: r.username,
    email: r.email,
    firstName: r.first_name,
    lastName: r.last_name,
    active: r.status === 'enabled',
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    groups: memberships.filter((m) => m.user_id === r.id).map((m) => ({ id: m.id, name: m.name })),
  }));
}

/** The people of the organization matching `where`, oldest first, one page of them, and how many match. */
export async function provisionedUsers(
  db: DbOrTrx,
  orgId: string,
  where: UserCriteria,
  page: { offset: number; limit: number },
): Promise<{ total: number; users: ProvisionedUser[] }> {
  const total = await usersQuery(db, orgId, where)
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .executeTakeFirstOrThrow();
  const rows =
    page.limit === 0
      ? []
      : await usersQuery(db, orgId, where)
          .selectAll()
          .orderBy('created_at')
          .orderBy('id')
          .offset(page.offset)
          .limit(page.limit)
          .execute();
  return { total: Number(total.n), users: await withGroups(db, orgId, rows) };
}

/** One person of the organization, or undefined. */
export async function provisionedUser(
  db: DbOrTrx,
  orgId: string,
  id: string,
  exclude?: ExcludedIds,
): Promise<ProvisionedUser | undefined> {
  const row = await usersQuery(db, orgId, { ids: [id], exclude })
    .selectAll()
    .executeTakeFirst();
  return row ? (await withGroups(db, orgId, [row]))[0] : undefined;
}

export interface ProvisionedUserInput {
  username: string;
  email: string;
  firstName: string;
  lastName: string;
  active: boolean;
}

/** The organization's Viewer role: what a provisioned person gets (their groups give the rest). */
async function provisioningRole(db: DbOrTrx, principal: Principal) {
  const role = await findRoleByName(db, principal.orgId, 'viewer');
  if (!role) throw conflict('The organization has no Viewer role, which provisioned users receive');
  if (!privilegesWithin(parsePrivileges(role.privileges), principal.privileges))
    throw forbidden('Provisioned users receive the Viewer role, whose privileges you do not all hold');
  return role;
}

/** A federated person (no password: they sign in through the organization's identity provider), in Everyone. */
export async function createProvisionedUser(
  trx: Trx,
  principal: Principal,
  input: ProvisionedUserInput,
  now: number,
): Promise<string> {
  const role = await provisioningRole(trx, principal);
  const id = newId(now);
  await createLocalUser(trx, {
    id,
    orgId: principal.orgId,
    username: input.username,
    email: input.email,
    firstName: input.firstName,
    lastName: input.lastName,
    roleId: role.id,
    passwordHash: null,
    now,
    accountType: 'federated',
  });
  const grants = await grantsOfGroups(trx, principal.orgId, (await userGrantBasis(trx, principal.orgId, id))!.groupIds);
  assertWithin(
    byKind({ privileges: new Set(), grants }),
    byKind(await holdingsOfPrincipal(trx, principal)),
    'The Everyone group gives',
  );
  if (!input.active) await trx.updateTable('users').set({ status: 'disabled' }).where('id', '=', id).execute();
  await audit(trx, {
    orgId: principal.orgId,
    at: now,
    actorId: principal.userId,
    action: 'user.created',
    targetType: 'user',
    targetId: id,
    data: { provisioned: true },
  });
  await publishUserEvent(trx, now, principal.orgId, principal.userId, 'user.created', id);
  return id;
}

/** Someone the caller may change: not themselves being disabled, and holding nothing beyond the caller. */
async function assertMayProvision(trx: Trx, principal: Principal, userId: string): Promise<void> {
  const basis = await userGrantBasis(trx, principal.orgId, userId);
  if (!basis) throw notFound('User');
  assertWithin(
    byKind({
      privileges: parsePrivileges(basis.privileges),
      grants: await grantsOfGroups(trx, principal.orgId, basis.groupIds),
    }),
    byKind(await holdingsOfPrincipal(trx, principal)),
    'The user holds',
  );
}

/**
 * Changes a provisioned person. Disabling ends their sessions and impersonations at once (their API
 * keys stop working too, as keys never outlive their creator's account). `leaveGroups` also takes
 * them out of every group (deprovisioning). Returns whether anything changed.
 */
export async function updateProvisionedUser(
  trx: Trx,
  principal: Principal,
  id: string,
  input: Partial<ProvisionedUserInput> & { leaveGroups?: boolean },
  now: number,
): Promise<boolean> {
  const row = await usersQuery(trx, principal.orgId, { ids: [id] })
    .selectAll()
    .executeTakeFirst();
  if (!row) throw notFound('User');
  await assertMayProvision(trx, principal, id);
  if (input.active === false && id === principal.userId)
    throw conflict('You cannot disable your own account', 'active');
  const patch: Partial<UsersTable> = {};
  const changes: Record<string, { before: unknown; after: unknown }> = {};
  const set = <K extends keyof UsersTable>(column: K, field: string, value: UsersTable[K] | undefined) => {
    if (value === undefined || row[column] === value) return;
    patch[column] = value;
    changes[field] = { before: row[column], after: value };
  };
  if (input.username !== undefined && input.username !== row.username) {
    set('username', 'username', input.username);
    patch.username_key = input.username.toLowerCase();
  }
  set('email', 'email', input.email);
  set('first_name', 'firstName', input.firstName);
  set('last_name', 'lastName', input.lastName);
  if (input.active !== undefined) set('status', 'status', input.active ? 'enabled' : 'disabled');
  let left = 0;
  if (input.leaveGroups) {
    const result = await trx
      .deleteFrom('user_groups')
      .where('org_id', '=', principal.orgId)
      .where('user_id', '=', id)
      .executeTakeFirst();
    left = Number(result.numDeletedRows);
  }
  if (Object.keys(patch).length === 0 && left === 0) return false;
  await trx
    .updateTable('users')
    .set({ ...patch, updated_at: now })
    .where('org_id', '=', principal.orgId)
    .where('id', '=', id)
    .execute();
  if (patch.status === 'disabled') {
    await endUserSessions(trx, principal.orgId, id, now, 'user_disabled');
    await endImpersonationsBy(trx, principal.orgId, id, now);
  }
  await audit(trx, {
    orgId: principal.orgId,
    at: now,
    actorId: principal.userId,
    action: 'user.updated',
    targetType: 'user',
    targetId: id,
    changes,
    data: { provisioned: true, ...(left > 0 ? { leftGroups: left } : {}) },
  });
  await publishUserEvent(trx, now, principal.orgId, principal.userId, 'user.updated', id);
  return true;
}

export interface GroupCriteria {
  ids?: readonly string[];
  /** Case-insensitive (group names are unique case-insensitively). */
  name?: string;
}

function groupsQuery(db: DbOrTrx, orgId: string, where: GroupCriteria) {
  return db
    .selectFrom('groups')
    .where('org_id', '=', orgId)
    .$if(where.ids !== undefined, (q) => q.where('id', 'in', where.ids!.length > 0 ? [...where.ids!] : ['']))
    .$if(where.name !== undefined, (q) => q.where('name_key', '=', where.name!.toLowerCase()));
}

async function withMembers(
  db: DbOrTrx,
  orgId: string,
  rows: { id: string; name: string; created_at: number; updated_at: number }[],
  exclude: ExcludedIds | undefined,
): Promise<ProvisionedGroup[]> {
  const ids = rows.map((r) => r.id);
  const members =
    ids.length === 0
      ? []
      : await db
          .selectFrom('user_groups')
          .innerJoin('users', 'users.id', 'user_groups.user_id')
          .select(['user_groups.group_id', 'users.id', 'users.username'])
          .where('user_groups.org_id', '=', orgId)
          .where('user_groups.group_id', 'in', ids)
          .where('users.account_type', '!=', 'service')
          .$if(exclude !== undefined, (q) => q.where('users.id', 'not in', exclude as never))
          .orderBy('users.created_at')
          .orderBy('users.id')
          .execute();
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    members: members.filter((m) => m.group_id === r.id).map((m) => ({ id: m.id, username: m.username })),
  }));
}

/** The organization's groups matching `where`, by name, one page of them, and how many match. */
export async function provisionedGroups(
  db: DbOrTrx,
  orgId: string,
  where: GroupCriteria,
  page: { offset: number; limit: number },
  excludeMembers?: ExcludedIds,
): Promise<{ total: number; groups: ProvisionedGroup[] }> {
  const total = await groupsQuery(db, orgId, where)
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .executeTakeFirstOrThrow();
  const rows =
    page.limit === 0
      ? []
      : await groupsQuery(db, orgId, where)
          .select(['id', 'name', 'created_at', 'updated_at'])
          .orderBy('name_key')
          .orderBy('id')
          .offset(page.offset)
          .limit(page.limit)
          .execute();
  return { total: Number(total.n), groups: await withMembers(db, orgId, rows, excludeMembers) };
}

export async function provisionedGroup(
  db: DbOrTrx,
  orgId: string,
  id: string,
  excludeMembers?: ExcludedIds,
): Promise<ProvisionedGroup | undefined> {
  const row = await groupsQuery(db, orgId, { ids: [id] })
    .select(['id', 'name', 'created_at', 'updated_at'])
    .executeTakeFirst();
  return row ? (await withMembers(db, orgId, [row], excludeMembers))[0] : undefined;
}

/** A new group (empty; add members with changeGroupMembers). A taken name is a unique violation. */
export async function createProvisionedGroup(
  trx: Trx,
  principal: Principal,
  name: string,
  now: number,
): Promise<string> {
  return (await addGroup(trx, principal, { name, description: '' }, now, { provisioned: true })).id;
}

/** Renames a group (a taken name is a unique violation). */
export async function renameProvisionedGroup(
  trx: Trx,
  principal: Principal,
  id: string,
  name: string,
  now: number,
): Promise<void> {
  const row = await groupsQuery(trx, principal.orgId, { ids: [id] })
    .select(['name'])
    .executeTakeFirst();
  if (!row) throw notFound('Group');
  if (row.name === name) return;
  await assertGroupWithin(trx, principal, id);
  await trx
    .updateTable('groups')
    .set({ name, name_key: name.toLowerCase(), updated_at: now })
    .where('org_id', '=', principal.orgId)
    .where('id', '=', id)
    .execute();
  await audit(trx, {
    orgId: principal.orgId,
    at: now,
    actorId: principal.userId,
    action: 'group.updated',
    targetType: 'group',
    targetId: id,
    changes: { name: { before: row.name, after: name } },
    data: { provisioned: true },
  });
}

/**
 * Adds and removes members of a group (`replace`: exactly these). Members are people of the
 * organization (`field` is named when one is not). Returns the user ids added and removed.
 */
export async function changeGroupMembers(
  trx: Trx,
  principal: Principal,
  groupId: string,
  change: { add?: readonly string[]; remove?: readonly string[]; replace?: readonly string[] },
  now: number,
  field = 'members',
  exclude?: ExcludedIds,
): Promise<{ added: string[]; removed: string[] }> {
  const group = await groupsQuery(trx, principal.orgId, { ids: [groupId] })
    .select(['id'])
    .executeTakeFirst();
  if (!group) throw notFound('Group');
  const named = [...new Set([...(change.add ?? []), ...(change.replace ?? [])])];
  if (named.length > 0) {
    const found = new Set(
      (await usersQuery(trx, principal.orgId, { ids: named, exclude }).select('id').execute()).map((r) => r.id),
    );
    const missing = named.filter((id) => !found.has(id));
    if (missing.length > 0) throw invalidField(field, `names no user of this organization: ${missing.join(', ')}`);
  }
  const current = new Set(
    (
      await trx
        .selectFrom('user_groups')
        .select('user_id')
        .where('org_id', '=', principal.orgId)
        .where('group_id', '=', groupId)
        .execute()
    ).map((r) => r.user_id),
  );
  let added: string[];
  let removed: string[];
  if (change.replace !== undefined) {
    const want = new Set(change.replace);
    added = [...want].filter((id) => !current.has(id));
    // Service accounts are not SCIM's to see or remove.
    const people = new Set(
      (
        await usersQuery(trx, principal.orgId, { ids: [...current] })
          .select('id')
          .execute()
      ).map((r) => r.id),
    );
    removed = [...current].filter((id) => !want.has(id) && people.has(id));
  } else {
    added = [...new Set(change.add ?? [])].filter((id) => !current.has(id));
    removed = [...new Set(change.remove ?? [])].filter((id) => current.has(id));
  }
  if (added.length === 0 && removed.length === 0) return { added, removed };
  await assertGroupWithin(trx, principal, groupId);
  for (const id of removed) await assertMayProvision(trx, principal, id);
  if (added.length > 0)
    await trx
      .insertInto('user_groups')
      .values(added.map((user_id) => ({ org_id: principal.orgId, user_id, group_id: groupId })))
      .onConflict((oc) => oc.columns(['user_id', 'group_id']).doNothing())
      .execute();
  if (removed.length > 0)
    await trx
      .deleteFrom('user_groups')
      .where('org_id', '=', principal.orgId)
      .where('group_id', '=', groupId)
      .where('user_id', 'in', removed)
      .execute();
  const touched = [...added, ...removed];
  await trx
    .updateTable('users')
    .set({ updated_at: now })
    .where('org_id', '=', principal.orgId)
    .where('id', 'in', touched)
    .execute();
  await trx
    .updateTable('groups')
    .set({ updated_at: now })
    .where('org_id', '=', principal.orgId)
    .where('id', '=', groupId)
    .execute();
  await audit(trx, {
    orgId: principal.orgId,
    at: now,
    actorId: principal.userId,
    action: 'group.members_changed',
    targetType: 'group',
    targetId: groupId,
    objects: touched.map((id) => ({ type: 'user', id })),
    data: { added, removed, provisioned: true },
  });
  for (const id of touched) await publishUserEvent(trx, now, principal.orgId, principal.userId, 'user.updated', id);
  return { added, removed };
}

/** Deletes a group with its memberships and its grants in security templates (as DELETE /v1/user-group does). */
export async function deleteProvisionedGroup(trx: Trx, principal: Principal, id: string, now: number): Promise<void> {
  const row = await groupsQuery(trx, principal.orgId, { ids: [id] })
    .select(['name'])
    .executeTakeFirst();
  if (!row) throw notFound('Group');
  await removeGroup(trx, principal, { id, name: row.name }, now, { provisioned: true });
}
