import type { Principal } from '../../core/authz/principal.ts';
import { isPrivilege, type Privilege } from '../../core/authz/catalog.ts';
import type { DbOrTrx } from '../../core/db/connect.ts';
import { fromJson } from '../../core/db/json.ts';
import { PostgresAdapter, sql } from 'kysely';

export function parsePrivileges(json: string): Set<Privilege> {
  return new Set(fromJson<string[]>(json, []).filter(isPrivilege));
}

/**
 * The principal of an enabled user, or null when the user is missing or disabled.
 * Credential resolvers (tokens, API keys, tests) all build principals through here.
 */
export async function loadUserPrincipal(db: DbOrTrx, userId: string, extra: Partial<Pick<Principal, 'sessionId' | 'impersonatorId'>> = {}): Promise<Principal | null> {
  // One round trip: this runs on every authenticated request. The group ids come back as one
  // JSON array (json_group_array / json_agg both give '[…]'), so the dialects differ only in name.
  const row = await db
    .selectFrom('users')
    .innerJoin('roles', 'roles.id', 'users.role_id')
    .select(['users.id', 'users.org_id', 'users.username', 'users.status', 'users.role_id', 'roles.privileges'])
    .select(groupIdsJson(db).as('group_ids'))
    .where('users.id', '=', userId)
    .executeTakeFirst();
  return principalFromRow(row, extra);
}

/** The columns a user principal is built from (see userPrincipalColumns). */
export interface UserPrincipalRow {
  id: string;
  org_id: string;
  username: string;
  status: string;
  role_id: string;
  privileges: string;
  group_ids: string;
}

/** A principal from a row selected with userPrincipalColumns, or null when the user is missing or disabled. */
export function principalFromRow(row: UserPrincipalRow | undefined, extra: Partial<Pick<Principal, 'sessionId' | 'impersonatorId'>> = {}): Principal | null {
  if (!row || row.status !== 'enabled') return null;
  return {
    kind: 'user',
    orgId: row.org_id,
    userId: row.id,
    username: row.username,
    roleId: row.role_id,
    privileges: parsePrivileges(row.privileges),
    groupIds: fromJson<(string | null)[]>(row.group_ids, []).filter((g): g is string => g !== null).sort(),
    ...extra,
  };
}

/**
 * The group-id aggregate of a query over `users` joined with `roles` (as in loadUserPrincipal), so
 * other hot paths (the token check) can fetch a principal in the same round trip as their own row.
 */
export function groupIdsJson(db: DbOrTrx) {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  return postgres
    ? sql<string>`(select coalesce(json_agg(ug.group_id)::text, '[]') from user_groups ug where ug.user_id = users.id and ug.org_id = users.org_id)`
    : sql<string>`(select json_group_array(ug.group_id) from user_groups ug where ug.user_id = users.id and ug.org_id = users.org_id)`;
}
