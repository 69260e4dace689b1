import type { Principal } from '../../core/authz/principal.ts';
import { isPrivilege, type Privilege } from '../../core/authz/catalog.ts';
import type { DbOrTrx } from '../../core/db/connect.ts';
import { fromJson } from '../../core/db/json.ts';
import { groupIdsOfUser } from './identity.repo.ts';

export function parsePrivileges(json: string): Set<Privilege> {
  return new Set(fromJson<string[]>(json, []).filter(isPrivilege));
}

/**
 * The principal of an enabled user, or null when the user is missing or disabled.
 * Credential resolvers (tokens, API keys, tests) all build principals through here.
 */
export async function loadUserPrincipal(db: DbOrTrx, userId: string, extra: Partial<Pick<Principal, 'sessionId' | 'impersonatorId'>> = {}): Promise<Principal | null> {
  const row = await db
    .selectFrom('users')
    .innerJoin('roles', 'roles.id', 'users.role_id')
    .select(['users.id', 'users.org_id', 'users.username', 'users.status', 'users.role_id', 'roles.privileges'])
    .where('users.id', '=', userId)
    .executeTakeFirst();
  if (!row || row.status !== 'enabled') return null;
  return {
    kind: 'user',
    orgId: row.org_id,
    userId: row.id,
    username: row.username,
    roleId: row.role_id,
    privileges: parsePrivileges(row.privileges),
    groupIds: await groupIdsOfUser(db, row.org_id, row.id),
    ...extra,
  };
}
