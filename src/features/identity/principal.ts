import type { Principal } from '../../core/authz/principal.ts';
import { isPrivilege, type Privilege } from '../../core/authz/catalog.ts';
import type { DbOrTrx } from '../../core/db/connect.ts';
import { fromJson } from '../../core/db/json.ts';
import { groupIdsJson } from './identity.repo.ts';
import { prepared } from '../../core/db/prepared.ts';

export function parsePrivileges(json: string): Set<Privilege> {
  return new Set(fromJson<string[]>(json, []).filter(isPrivilege));
}

/**
 * The principal of an enabled user, or null when the user is missing or disabled.
 * Credential resolvers (tokens, API keys, tests) all build principals through here.
 */
export async function loadUserPrincipal(
  db: DbOrTrx,
  userId: string,
  extra: Partial<Pick<Principal, 'sessionId' | 'impersonatorId' | 'via' | 'scopes' | 'clientId'>> = {},
): Promise<Principal | null> {
  const row = (await userPrincipalQuery.execute(db, { userId }))[0];
  return principalFromRow(row, extra);
}

// One round trip, compiled once (core/db/prepared.ts). The group ids come back as one JSON array
// (json_group_array / json_agg both give '[…]'), so the dialects differ only in name.
export const userPrincipalQuery = prepared<{ userId: string }>()((db, p) =>
  db
    .selectFrom('users')
    .innerJoin('roles', 'roles.id', 'users.role_id')
    .select(['users.id', 'users.org_id', 'users.username', 'users.status', 'users.role_id', 'roles.privileges'])
    .select(groupIdsJson(db).as('group_ids'))
    .where('users.id', '=', p.userId),
);

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
export function principalFromRow(
  row: UserPrincipalRow | undefined,
  extra: Partial<Pick<Principal, 'sessionId' | 'impersonatorId' | 'via' | 'scopes' | 'clientId'>> = {},
): Principal | null {
  if (!row || row.status !== 'enabled') return null;
  return {
    kind: 'user',
    via: 'password',
    orgId: row.org_id,
    userId: row.id,
    username: row.username,
    roleId: row.role_id,
    privileges: parsePrivileges(row.privileges),
    groupIds: fromJson<(string | null)[]>(row.group_ids, [])
      .filter((g): g is string => g !== null)
      .sort(),
    ...extra,
  };
}
