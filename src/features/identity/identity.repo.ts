import type { DbOrTrx } from '../../core/db/connect.ts';
import type { GroupsTable, RolesTable, SecurityTemplatesTable, UsersTable } from '../../core/db/schema.ts';

/** Lookups shared by the identity services. Every query is scoped to one organization. */
export function findUser(db: DbOrTrx, orgId: string, id: string): Promise<UsersTable | undefined> {
  return db.selectFrom('users').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
}

export function findUserByUsername(db: DbOrTrx, username: string): Promise<UsersTable | undefined> {
  return db.selectFrom('users').selectAll().where('username_key', '=', username.toLowerCase()).executeTakeFirst();
}

export async function groupIdsOfUser(db: DbOrTrx, orgId: string, userId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('user_groups')
    .select('group_id')
    .where('org_id', '=', orgId)
    .where('user_id', '=', userId)
    .orderBy('group_id')
    .execute();
  return rows.map((r) => r.group_id);
}

export async function groupIdsByUser(db: DbOrTrx, orgId: string, userIds: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>(userIds.map((id) => [id, []]));
  if (userIds.length === 0) return out;
  const rows = await db
    .selectFrom('user_groups')
    .select(['user_id', 'group_id'])
    .where('org_id', '=', orgId)
    .where('user_id', 'in', userIds)
    .orderBy('group_id')
    .execute();
  for (const row of rows) out.get(row.user_id)?.push(row.group_id);
  return out;
}

export function findRole(db: DbOrTrx, orgId: string, id: string): Promise<RolesTable | undefined> {
  return db.selectFrom('roles').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
}

export function findRoleByName(db: DbOrTrx, orgId: string, name: string): Promise<RolesTable | undefined> {
  return db.selectFrom('roles').selectAll().where('org_id', '=', orgId).where('name_key', '=', name.toLowerCase()).executeTakeFirst();
}

export function findGroup(db: DbOrTrx, orgId: string, id: string): Promise<GroupsTable | undefined> {
  return db.selectFrom('groups').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
}

export function findGroupByName(db: DbOrTrx, orgId: string, name: string): Promise<GroupsTable | undefined> {
  return db.selectFrom('groups').selectAll().where('org_id', '=', orgId).where('name_key', '=', name.toLowerCase()).executeTakeFirst();
}

export async function existingGroupIds(db: DbOrTrx, orgId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('groups').select('id').where('org_id', '=', orgId).where('id', 'in', [...ids]).execute();
  return new Set(rows.map((r) => r.id));
}

export function findTemplate(db: DbOrTrx, orgId: string, id: string): Promise<SecurityTemplatesTable | undefined> {
  return db.selectFrom('security_templates').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
}

export async function replaceUserGroups(db: DbOrTrx, orgId: string, userId: string, groupIds: readonly string[]): Promise<void> {
  await db.deleteFrom('user_groups').where('org_id', '=', orgId).where('user_id', '=', userId).execute();
  if (groupIds.length > 0) {
    await db.insertInto('user_groups').values(groupIds.map((group_id) => ({ org_id: orgId, user_id: userId, group_id }))).execute();
  }
}
