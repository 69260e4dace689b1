import type { Deps } from '../../../deps.ts';
import { requirePrivileges } from '../../../core/authz/authorize.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import { isUniqueViolation, type Trx } from '../../../core/db/connect.ts';
import { notFound } from '../../../core/http/errors.ts';
import {
  changeGroupMembers,
  createProvisionedGroup,
  deleteProvisionedGroup,
  provisionedGroup,
  provisionedGroups,
  renameProvisionedGroup,
  type ProvisionedGroup,
} from '../../identity/index.ts';
import { expandOperations, iso, listResponse, location, pageOf, type Op } from '../protocol/messages.ts';
import { invalidPath, invalidValue, mutability, uniqueness } from '../protocol/errors.ts';
import { parseFilter, single } from '../protocol/filter.ts';
import { deletedIds, externalIds, forgetResource, idsByExternalId, recordResource } from '../scim.repo.ts';
import { GROUP_SCHEMA, type ListQuery, type PatchOp, type ScimGroup, type ScimGroupBody } from '../scim.schemas.ts';
import { toExternalId, toText } from '../protocol/values.ts';

function render(deps: Deps, group: ProvisionedGroup, externalId: string | undefined): ScimGroup {
  return {
    schemas: [GROUP_SCHEMA],
    id: group.id,
    ...(externalId !== undefined ? { externalId } : {}),
    displayName: group.name,
    members: group.members.map((m) => ({ value: m.id, display: m.username })),
    meta: {
      resourceType: 'Group',
      created: iso(group.createdAt),
      lastModified: iso(group.updatedAt),
      location: location(deps, 'Groups', group.id),
    },
  };
}

// Users the provider deleted are not listed as members (they left every group when deleted).
const deletedUsers = (deps: Deps, orgId: string) => deletedIds(deps.db, orgId, 'User');

async function load(deps: Deps, principal: Principal, id: string): Promise<ScimGroup> {
  const group = await provisionedGroup(deps.db, principal.orgId, id, deletedUsers(deps, principal.orgId));
  if (!group) throw notFound('Group');
  return render(deps, group, (await externalIds(deps.db, principal.orgId, 'Group', [id])).get(id));
}

const taken = (name: string) => uniqueness(`A group named "${name}" already exists`);

function displayNameOf(value: unknown): string {
  const name = toText(value, 'displayName', 100).trim();
  if (name === '') throw invalidValue('displayName must not be empty');
  return name;
}

function memberIds(value: unknown, field = 'members'): string[] {
  const list = Array.isArray(value) ? value : [value];
  return list.map((m, i) => {
    const id = m !== null && typeof m === 'object' ? (m as Record<string, unknown>).value : undefined;
    if (typeof id !== 'string' || id === '') throw invalidValue(`${field}[${i}].value must be a user id`);
    return id;
  });
}

export async function listGroups(deps: Deps, principal: Principal, query: ListQuery) {
  requirePrivileges(principal, 'user_management');
  const page = pageOf(query);
  const orgId = principal.orgId;
  const where: { ids?: string[]; name?: string } = {};
  if (query.filter !== undefined) {
    const clauses = parseFilter(query.filter, ['displayName', 'externalId', 'id'], GROUP_SCHEMA);
    const name = single(clauses, 'displayName', false);
    const externalId = single(clauses, 'externalId', true);
    const id = single(clauses, 'id', true);
    if (name === null || externalId === null || id === null) return listResponse(0, page.startIndex, []);
    if (name) where.name = name;
    if (typeof id === 'string') where.ids = [id];
    if (typeof externalId === 'string') {
      const ids = await idsByExternalId(deps.db, orgId, 'Group', externalId);
      where.ids = where.ids ? where.ids.filter((i) => ids.includes(i)) : ids;
    }
  }
  const { total, groups } = await provisionedGroups(deps.db, orgId, where, page, deletedUsers(deps, orgId));
  const external = await externalIds(
    deps.db,
    orgId,
    'Group',
    groups.map((g) => g.id),
  );
  return listResponse(
    total,
    page.startIndex,
    groups.map((g) => render(deps, g, external.get(g.id))),
  );
}

export async function getGroup(deps: Deps, principal: Principal, id: string): Promise<ScimGroup> {
  requirePrivileges(principal, 'user_management');
  return load(deps, principal, id);
}

async function inTransaction<T>(deps: Deps, name: string, work: (trx: Trx) => Promise<T>): Promise<T> {
  try {
    return await deps.db.transaction().execute(work);
  } catch (error) {
    if (isUniqueViolation(error)) throw taken(name);
    throw error;
  }
}

async function assertNameFree(trx: Trx, principal: Principal, name: string, id?: string): Promise<void> {
  const { groups } = await provisionedGroups(trx, principal.orgId, { name }, { offset: 0, limit: 1 });
  if (groups[0] && groups[0].id !== id) throw taken(name);
}

export async function createGroup(deps: Deps, principal: Principal, body: ScimGroupBody): Promise<ScimGroup> {
  requirePrivileges(principal, 'user_management');
  const name = displayNameOf(body.displayName);
  const externalId = body.externalId === undefined ? null : toExternalId(body.externalId);
  const members = body.members === undefined ? [] : memberIds(body.members);
  const now = deps.clock.now();
  const id = await inTransaction(deps, name, async (trx) => {
    await assertNameFree(trx, principal, name);
    const created = await createProvisionedGroup(trx, principal, name, now);
    if (members.length > 0)
      await changeGroupMembers(
        trx,
        principal,
        created,
        { add: members },
        now,
        'members',
        deletedUsers(deps, principal.orgId),
      );
    if (externalId !== null) await recordResource(trx, principal.orgId, 'Group', created, now, { externalId });
    return created;
  });
  return load(deps, principal, id);
}

interface GroupState {
  displayName: string;
  externalId: string | null;
  members: Set<string>;
}

async function write(deps: Deps, principal: Principal, id: string, before: GroupState, after: GroupState) {
  const now = deps.clock.now();
  await inTransaction(deps, after.displayName, async (trx) => {
    if (after.displayName !== before.displayName) {
      await assertNameFree(trx, principal, after.displayName, id);
      await renameProvisionedGroup(trx, principal, id, after.displayName, now);
    }
    await changeGroupMembers(
      trx,
      principal,
      id,
      { replace: [...after.members] },
      now,
      'members',
      deletedUsers(deps, principal.orgId),
    );
    if (after.externalId !== before.externalId)
      await recordResource(trx, principal.orgId, 'Group', id, now, { externalId: after.externalId });
  });
  return load(deps, principal, id);
}

function stateOfGroup(group: ScimGroup): GroupState {
  return {
    displayName: group.displayName,
    externalId: group.externalId ?? null,
    members: new Set(group.members.map((m) => m.value)),
  };
}

export async function replaceGroup(deps: Deps, principal: Principal, id: string, body: ScimGroupBody) {
  requirePrivileges(principal, 'user_management');
  const before = stateOfGroup(await load(deps, principal, id));
  return write(deps, principal, id, before, {
    displayName: displayNameOf(body.displayName),
    externalId: body.externalId === undefined ? null : toExternalId(body.externalId),
    members: new Set(body.members === undefined ? [] : memberIds(body.members)),
  });
}

const MEMBER_FILTER = /^members\[\s*value\s+eq\s+("(?:[^"\\]|\\.)*")\s*\]$/i;

function applyToGroup(state: GroupState, op: Op, path: string, value: unknown): void {
  const key = path.toLowerCase();
  const filtered = MEMBER_FILTER.exec(path);
  if (filtered) {
    if (op !== 'remove')
      throw invalidPath(`${path}: only remove takes a member filter; add members with path "members"`);
    state.members.delete(JSON.parse(filtered[1]!) as string);
    return;
  }
  if (key.startsWith('members['))
    throw invalidPath(`${path}: the only member filter supported is members[value eq "id"]`);
  if (key === 'members') {
    if (op === 'remove') {
      if (value === undefined || value === null) state.members.clear();
      else for (const id of memberIds(value)) state.members.delete(id);
    } else {
      if (value === undefined) throw invalidValue(`members: ${op} needs a value`);
      const ids = memberIds(value);
      if (op === 'replace') state.members.clear();
      for (const id of ids) state.members.add(id);
    }
    return;
  }
  if (key === 'displayname') {
    if (op === 'remove') throw mutability('displayName cannot be removed');
    state.displayName = displayNameOf(value);
  } else if (key === 'externalid') state.externalId = op === 'remove' ? null : toExternalId(value);
  else if (key === 'id' || key.startsWith('meta') || key === 'schemas') {
    // Okta's value-object form repeats the group's own id: harmless when it is the same.
    if (key === 'id' && op !== 'remove') return;
    throw invalidPath(`${path} is read-only`);
  }
}

export async function patchGroup(deps: Deps, principal: Principal, id: string, body: PatchOp) {
  requirePrivileges(principal, 'user_management');
  const before = stateOfGroup(await load(deps, principal, id));
  const after: GroupState = { ...before, members: new Set(before.members) };
  for (const { op, path, value } of expandOperations(body.Operations, GROUP_SCHEMA))
    applyToGroup(after, op, path, value);
  return write(deps, principal, id, before, after);
}

export async function deleteGroup(deps: Deps, principal: Principal, id: string): Promise<void> {
  requirePrivileges(principal, 'user_management');
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    await deleteProvisionedGroup(trx, principal, id, now);
    await forgetResource(trx, principal.orgId, 'Group', id);
  });
}
