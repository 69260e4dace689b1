import type { Deps } from '../../../deps.ts';
import { audit } from '../../../core/audit.ts';
import { privilegesWithin, requireAnyPrivilege, requirePrivileges } from '../../../core/authz/authorize.ts';
import { ALL_PRIVILEGES, PRIVILEGES, isPrivilege, type Privilege } from '../../../core/authz/catalog.ts';
import { assertPrivilegesStillHeld, lockOrganization, privilegesHeldByPeople } from '../../../core/authz/ceiling.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import { isUniqueViolation } from '../../../core/db/connect.ts';
import { toJson } from '../../../core/db/json.ts';
import type { RolesTable } from '../../../core/db/schema.ts';
import { conflict, forbidden, invalidField, notFound } from '../../../core/http/errors.ts';
import { newId } from '../../../core/ids.ts';
import type { Role } from '../identity.schemas.ts';
import { findRole } from '../identity.repo.ts';
import { parsePrivileges } from '../principal.ts';

function toRole(row: RolesTable): Role {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    privileges: [...parsePrivileges(row.privileges)],
    createdEpoch: row.created_at,
    lastUpdatedEpoch: row.updated_at,
  };
}

const BY_NAME = new Map<string, Privilege>(ALL_PRIVILEGES.map((p) => [PRIVILEGES[p].name.toLowerCase(), p]));

/** Accepts privilege keys (`user_management`) or names (`User Management`). */
function parsePrivilegeList(values: readonly string[], principal: Principal): Privilege[] {
  const out = new Set<Privilege>();
  for (const value of values) {
    const key = isPrivilege(value) ? value : BY_NAME.get(value.toLowerCase());
    if (!key) throw invalidField('body.privileges', `"${value}" is not a privilege; see GET /v1/roles/privileges`);
    out.add(key);
  }
  if (!privilegesWithin(out, principal.privileges)) throw forbidden('A role cannot grant privileges you do not hold');
  return [...out];
}

const requireRoleAdmin = (principal: Principal) => requireAnyPrivilege(principal, 'role_management', 'user_management');
const duplicate = () => conflict('A role with this name already exists', 'body.name');

export async function listRoles(deps: Deps, principal: Principal): Promise<Role[]> {
  requireRoleAdmin(principal);
  const rows = await deps.db
    .selectFrom('roles')
    .selectAll()
    .where('org_id', '=', principal.orgId)
    .orderBy('name_key')
    .execute();
  return rows.map(toRole);
}

export async function getRole(deps: Deps, principal: Principal, id: string): Promise<Role> {
  requireRoleAdmin(principal);
  const row = await findRole(deps.db, principal.orgId, id);
  if (!row) throw notFound('Role');
  return toRole(row);
}

export function listPrivileges(principal: Principal, filter?: 'enabled' | 'disabled') {
  requirePrivileges(principal, 'security_template_management', 'role_management');
  const privileges = ALL_PRIVILEGES.map((id) => ({
    id,
    name: PRIVILEGES[id].name,
    description: PRIVILEGES[id].description,
    enabled: principal.privileges.has(id),
  }));
  return { privileges: filter ? privileges.filter((p) => p.enabled === (filter === 'enabled')) : privileges };
}

export async function createRole(
  deps: Deps,
  principal: Principal,
  input: { name: string; description?: string; privileges: string[] },
  ip: string,
): Promise<Role> {
  requireRoleAdmin(principal);
  const now = deps.clock.now();
  const row: RolesTable = {
    id: newId(now),
    org_id: principal.orgId,
    name: input.name,
    name_key: input.name.toLowerCase(),
    description: input.description ?? '',
    privileges: toJson(parsePrivilegeList(input.privileges, principal)),
    created_at: now,
    updated_at: now,
  };
  try {
    await deps.db.transaction().execute(async (trx) => {
      await trx.insertInto('roles').values(row).execute();
      await audit(trx, {
        orgId: principal.orgId,
        at: now,
        actorId: principal.userId,
        action: 'role.created',
        targetType: 'role',
        targetId: row.id,
        ip,
      });
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw duplicate();
    throw error;
  }
  return toRole(row);
}

export async function updateRole(
  deps: Deps,
  principal: Principal,
  id: string,
  input: { name?: string; description?: string; privileges?: string[] },
  ip: string,
): Promise<Role> {
  requireRoleAdmin(principal);
  const now = deps.clock.now();
  try {
    return await deps.db.transaction().execute(async (trx) => {
      if (input.privileges !== undefined) await lockOrganization(trx, principal.orgId);
      const row = await findRole(trx, principal.orgId, id);
      if (!row) throw notFound('Role');
      if (!privilegesWithin(parsePrivileges(row.privileges), principal.privileges))
        throw forbidden('You cannot change a role with privileges you do not hold');
      const heldBefore =
        input.privileges !== undefined ? await privilegesHeldByPeople(trx, principal.orgId) : undefined;
      const patch: Partial<RolesTable> = { updated_at: now };
      if (input.name !== undefined) Object.assign(patch, { name: input.name, name_key: input.name.toLowerCase() });
      if (input.description !== undefined) patch.description = input.description;
      if (input.privileges !== undefined) patch.privileges = toJson(parsePrivilegeList(input.privileges, principal));
      await trx.updateTable('roles').set(patch).where('org_id', '=', principal.orgId).where('id', '=', id).execute();
      if (heldBefore) await assertPrivilegesStillHeld(trx, principal.orgId, heldBefore);
      await audit(trx, {
        orgId: principal.orgId,
        at: now,
        actorId: principal.userId,
        action: 'role.updated',
        targetType: 'role',
        targetId: id,
        ip,
      });
      return toRole({ ...row, ...patch });
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw duplicate();
    throw error;
  }
}

/** A role still held by a user (or an API key's service account) cannot be deleted. */
export async function deleteRole(deps: Deps, principal: Principal, id: string, ip: string): Promise<void> {
  requireRoleAdmin(principal);
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    const row = await findRole(trx, principal.orgId, id);
    if (!row) throw notFound('Role');
    if (!privilegesWithin(parsePrivileges(row.privileges), principal.privileges))
      throw forbidden('You cannot delete a role with privileges you do not hold');
    const holder = await trx
      .selectFrom('users')
      .select('id')
      .where('org_id', '=', principal.orgId)
      .where('role_id', '=', id)
      .limit(1)
      .executeTakeFirst();
    if (holder) throw conflict('The role is still assigned to users; reassign them first');
    await trx.deleteFrom('roles').where('org_id', '=', principal.orgId).where('id', '=', id).execute();
    await audit(trx, {
      orgId: principal.orgId,
      at: now,
      actorId: principal.userId,
      action: 'role.deleted',
      targetType: 'role',
      targetId: id,
      ip,
      data: { name: row.name },
    });
  });
}
