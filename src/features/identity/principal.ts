import type { Principal } from '../../core/authz/principal.ts';
import { isPrivilege, type Privilege } from '../../core/authz/catalog.ts';
import type { DbOrTrx } from '../../core/db/connect.ts';
import { fromJson } from '../../core/db/json.ts';
import { groupIdsJson } from './identity.repo.ts';

export function parsePrivileges(json: string): Set<Privilege> {
  return new Set(fromJson<string[]>(json, []).filter(isPrivilege));
}

/**
 * The principal of an enabled user, or null when the user is missing or disabled.
 * Credential resolvers (tokens, API keys, tests) all build principals through here.
 */
export async function loadUserPrincipal(db: DbOrTrx, userId: string, extra: Partial<Pick<Principal, 'sessionId' | 'impersonatorId' | 'via' | 'scopes' | 'clientId'>> = {}): Promise<Principal | null> {
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
export function principalFromRow(row: UserPrincipalRow | undefined, extra: Partial<Pick<Principal, 'sessionId' | 'impersonatorId' | 'via' | 'scopes' | 'clientId'>> = {}): Principal | null {
  if (!row || row.status !== 'enabled') return null;
  return {
    kind: 'user',
    via: 'password',
    orgId: row.org_id,
    userId: row.id,
    username: row.username,
    roleId: row.role_id,
    privileges: parsePrivileges(row.privileges),
    groupIds: fromJson<(string | null)[]>(row.group_ids, []).filter((g): g is string => g !== null).sort(),
    ...extra,
  };
}
