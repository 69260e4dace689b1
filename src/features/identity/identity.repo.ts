import { PostgresAdapter, sql } from 'kysely';
import type { DbOrTrx } from '../../core/db/connect.ts';
import { prepared } from '../../core/db/prepared.ts';
import type { GroupsTable, RolesTable, SecurityTemplatesTable, UsersTable } from '../../core/db/schema.ts';

/** Lookups shared by the identity services. Every query is scoped to one organization. */
export function findUser(db: DbOrTrx, orgId: string, id: string): Promise<UsersTable | undefined> {
  return db.selectFrom('users').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
}

// Compiled once (core/db/prepared.ts): GET /v1/user runs it whenever the profile cache misses.
export const userProfileQuery = prepared<{ orgId: string; id: string }>()((db, p) =>
  db
    .selectFrom('users')
    .innerJoin('organizations', 'organizations.id', 'users.org_id')
    .selectAll('users')
    .select('organizations.customer_id')
    .select(groupIdsJson(db).as('group_ids'))
    .where('users.org_id', '=', p.orgId)
    .where('users.id', '=', p.id),
);

/** A user with its organization's customer id and its group ids (a JSON array), in one query. */
export async function findUserProfile(db: DbOrTrx, orgId: string, id: string) {
  return (await userProfileQuery.execute(db, { orgId, id }))[0];
}

export type UserProfileRow = NonNullable<Awaited<ReturnType<typeof findUserProfile>>>;

export function findUserByUsername(db: DbOrTrx, username: string): Promise<UsersTable | undefined> {
  return db.selectFrom('users').selectAll().where('username_key', '=', username.toLowerCase()).executeTakeFirst();
}

export function findRole(db: DbOrTrx, orgId: string, id: string): Promise<RolesTable | undefined> {
  return db.selectFrom('roles').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
}

export function findRoleByName(db: DbOrTrx, orgId: string, name: string): Promise<RolesTable | undefined> {
  return db
    .selectFrom('roles')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('name_key', '=', name.toLowerCase())
    .executeTakeFirst();
}

export function findGroup(db: DbOrTrx, orgId: string, id: string): Promise<GroupsTable | undefined> {
  return db.selectFrom('groups').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
}

export function findGroupByName(db: DbOrTrx, orgId: string, name: string): Promise<GroupsTable | undefined> {
  return db
    .selectFrom('groups')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('name_key', '=', name.toLowerCase())
    .executeTakeFirst();
}

export async function existingGroupIds(db: DbOrTrx, orgId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .selectFrom('groups')
    .select('id')
    .where('org_id', '=', orgId)
    .where('id', 'in', [...ids])
    .execute();
  return new Set(rows.map((r) => r.id));
}

export function findTemplate(db: DbOrTrx, orgId: string, id: string): Promise<SecurityTemplatesTable | undefined> {
  return db
    .selectFrom('security_templates')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function replaceUserGroups(
  db: DbOrTrx,
  orgId: string,
  userId: string,
  groupIds: readonly string[],
): Promise<void> {
  await db.deleteFrom('user_groups').where('org_id', '=', orgId).where('user_id', '=', userId).execute();
  if (groupIds.length > 0) {
    // A concurrent replacement may have inserted the same rows already: that is the same outcome.
    await db
      .insertInto('user_groups')
      .values(groupIds.map((group_id) => ({ org_id: orgId, user_id: userId, group_id })))
      .onConflict((oc) => oc.columns(['user_id', 'group_id']).doNothing())
      .execute();
  }
}

/**
 * The group-id aggregate of a query over `users` (loadUserPrincipal, findUserProfile), so
 * other hot paths (the token check) can fetch a principal in the same round trip as their own row.
 */
export function groupIdsJson(db: DbOrTrx) {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  return postgres
    ? sql<string>`(select coalesce(json_agg(ug.group_id)::text, '[]') from user_groups ug where ug.user_id = users.id and ug.org_id = users.org_id)`
    : sql<string>`(select json_group_array(ug.group_id) from user_groups ug where ug.user_id = users.id and ug.org_id = users.org_id)`;
}

/** A user's role privileges and group ids as they are now (whatever the user's status). */
export async function userGrantBasis(
  db: DbOrTrx,
  orgId: string,
  userId: string,
): Promise<{ privileges: string; groupIds: string[] } | undefined> {
  const row = await db
    .selectFrom('users')
    .innerJoin('roles', 'roles.id', 'users.role_id')
    .select('roles.privileges')
    .select(groupIdsJson(db).as('group_ids'))
    .where('users.org_id', '=', orgId)
    .where('users.id', '=', userId)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    privileges: row.privileges,
    groupIds: (JSON.parse(row.group_ids) as (string | null)[]).filter((g): g is string => g !== null),
  };
}

/**
 * Ends a user's sessions (every token and refresh family), except `keep` (the caller's current
 * session when they change their own password). Written here, not through the auth feature,
 * because identity changes (disable, password) must end sessions in their own transaction.
 */
export async function endUserSessions(
  db: DbOrTrx,
  orgId: string,
  userId: string,
  now: number,
  reason: string,
  keep?: string,
): Promise<number> {
  const result = await db
    .updateTable('auth_sessions')
    .set({ revoked_at: now, revoked_reason: reason })
    .where('org_id', '=', orgId)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .$if(keep !== undefined, (q) => q.where('id', '!=', keep!))
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Ends every impersonation session `impersonatorId` holds (they were disabled); same reason as endUserSessions for writing here. */
export async function endImpersonationsBy(
  db: DbOrTrx,
  orgId: string,
  impersonatorId: string,
  now: number,
): Promise<void> {
  await db
    .updateTable('auth_sessions')
    .set({ revoked_at: now, revoked_reason: 'impersonator_disabled' })
    .where('org_id', '=', orgId)
    .where('impersonator_id', '=', impersonatorId)
    .where('revoked_at', 'is', null)
    .execute();
}
