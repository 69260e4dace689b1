import type { Deps } from '../../../deps.ts';
import { audit } from '../../../core/audit.ts';
import { requirePrivileges } from '../../../core/authz/authorize.ts';
import { assertWithin, byKind, grantsOfGroups, holdingsOfPrincipal } from '../../../core/authz/ceiling.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import type { DbOrTrx, Trx } from '../../../core/db/connect.ts';
import { isUniqueViolation } from '../../../core/db/connect.ts';
import type { GroupsTable } from '../../../core/db/schema.ts';
import { conflict, notFound } from '../../../core/http/errors.ts';
import { newId } from '../../../core/ids.ts';
import type { Group } from '../identity.schemas.ts';
import { findGroup } from '../identity.repo.ts';

function toGroup(row: GroupsTable): Group {
  return {
    groupId: row.id,
    groupName: row.name,
    description: row.description,
    createdEpoch: row.created_at,
    lastUpdatedEpoch: row.updated_at,
  };
}

/**
 * Renaming, staffing, emptying or deleting a group changes what its members hold: the caller must hold
 * everything it brings. Shared with SCIM provisioning (provisioning.ts).
 */
export async function assertGroupWithin(db: DbOrTrx, principal: Principal, groupId: string): Promise<void> {
  const brings = await grantsOfGroups(db, principal.orgId, [groupId]);
  assertWithin(
    byKind({ privileges: new Set(), grants: brings }),
    byKind(await holdingsOfPrincipal(db, principal)),
    'The group brings',
  );
}

const duplicate = () => conflict('A group with this name already exists', 'body.groupName');

export async function listGroups(deps: Deps, principal: Principal): Promise<Group[]> {
  requirePrivileges(principal, 'user_management');
  const rows = await deps.db
    .selectFrom('groups')
    .selectAll()
    .where('org_id', '=', principal.orgId)
    .orderBy('name_key')
    .execute();
  return rows.map(toGroup);
}

export async function getGroup(deps: Deps, principal: Principal, id: string): Promise<Group> {
  requirePrivileges(principal, 'user_management');
  const row = await findGroup(deps.db, principal.orgId, id);
  if (!row) throw notFound('Group');
  return toGroup(row);
}

export async function createGroup(
  deps: Deps,
  principal: Principal,
  input: { groupName: string; description?: string },
  ip: string,
): Promise<Group> {
  requirePrivileges(principal, 'user_management');
  const now = deps.clock.now();
  try {
    const row = await deps.db
      .transaction()
      .execute((trx) =>
        addGroup(trx, principal, { name: input.groupName, description: input.description ?? '' }, now, { ip }),
      );
    return toGroup(row);
  } catch (error) {
    if (isUniqueViolation(error)) throw duplicate();
    throw error;
  }
}

/**
 * Inserts a new, empty group and audits it (`group.created`); a taken name is a unique violation.
 * Call it inside a transaction: POST /v1/user-group (createGroup, with the request's IP) and SCIM
 * (provisioning.ts, `provisioned: true`) both create through here.
 */
export async function addGroup(
  trx: Trx,
  principal: Principal,
  input: { name: string; description: string },
  now: number,
  how: { ip?: string; provisioned?: true },
): Promise<GroupsTable> {
  const row: GroupsTable = {
    id: newId(now),
    org_id: principal.orgId,
    name: input.name,
    name_key: input.name.toLowerCase(),
    description: input.description,
    created_at: now,
    updated_at: now,
  };
  await trx.insertInto('groups').values(row).execute();
  await audit(trx, {
    orgId: principal.orgId,
    at: now,
    actorId: principal.userId,
    action: 'group.created',
    targetType: 'group',
    targetId: row.id,
    ip: how.ip,
    data: how.provisioned ? { provisioned: true } : undefined,
  });
  return row;
}

export async function updateGroup(
  deps: Deps,
  principal: Principal,
  id: string,
  input: { groupName?: string; description?: string },
  ip: string,
): Promise<Group> {
  requirePrivileges(principal, 'user_management');
  const now = deps.clock.now();
  try {
    return await deps.db.transaction().execute(async (trx) => {
      const row = await findGroup(trx, principal.orgId, id);
      if (!row) throw notFound('Group');
      await assertGroupWithin(trx, principal, id);
      const patch: Partial<GroupsTable> = { updated_at: now };
      if (input.groupName !== undefined)
        Object.assign(patch, { name: input.groupName, name_key: input.groupName.toLowerCase() });
      if (input.description !== undefined) patch.description = input.description;
      await trx.updateTable('groups').set(patch).where('org_id', '=', principal.orgId).where('id', '=', id).execute();
      await audit(trx, {
        orgId: principal.orgId,
        at: now,
        actorId: principal.userId,
        action: 'group.updated',
        targetType: 'group',
        targetId: id,
        ip,
      });
      return toGroup({ ...row, ...patch });
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw duplicate();
    throw error;
  }
}

/** Deleting a group removes its memberships and its grants in security templates. */
export async function deleteGroup(deps: Deps, principal: Principal, id: string, ip: string): Promise<void> {
  requirePrivileges(principal, 'user_management');
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    const row = await findGroup(trx, principal.orgId, id);
    if (!row) throw notFound('Group');
    await removeGroup(trx, principal, { id, name: row.name }, now, { ip });
  });
}

/**
 * Removes a group that exists, with its memberships and its grants in security templates, once the
 * caller holds everything it brings, and audits it (`group.deleted`). Call it inside a transaction:
 * DELETE /v1/user-group (deleteGroup, with the request's IP) and SCIM (provisioning.ts,
 * `provisioned: true`) both delete through here.
 */
export async function removeGroup(
  trx: Trx,
  principal: Principal,
  group: { id: string; name: string },
  now: number,
  how: { ip?: string; provisioned?: true },
): Promise<void> {
  const { id } = group;
  await assertGroupWithin(trx, principal, id);
  await trx.deleteFrom('user_groups').where('org_id', '=', principal.orgId).where('group_id', '=', id).execute();
  await trx
    .deleteFrom('security_template_grants')
    .where('org_id', '=', principal.orgId)
    .where('group_id', '=', id)
    .execute();
  await trx
    .deleteFrom('security_template_permissions')
    .where('org_id', '=', principal.orgId)
    .where('group_id', '=', id)
    .execute();
  await trx.deleteFrom('groups').where('org_id', '=', principal.orgId).where('id', '=', id).execute();
  await audit(trx, {
    orgId: principal.orgId,
    at: now,
    actorId: principal.userId,
    action: 'group.deleted',
    targetType: 'group',
    targetId: id,
    ip: how.ip,
    data: { name: group.name, ...(how.provisioned ? { provisioned: true } : {}) },
  });
}
