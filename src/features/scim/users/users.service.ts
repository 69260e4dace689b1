import type { Deps } from '../../../deps.ts';
import { requirePrivileges } from '../../../core/authz/authorize.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import { isUniqueViolation } from '../../../core/db/connect.ts';
import { notFound } from '../../../core/http/errors.ts';
import {
  createProvisionedUser,
  provisionedUser,
  provisionedUsers,
  updateProvisionedUser,
  usernameTaken,
  type ExcludedIds,
  type ProvisionedUser,
} from '../../identity/index.ts';
import { expandOperations, iso, listResponse, location, pageOf } from '../protocol/messages.ts';
import { invalidPath, invalidValue, mutability, uniqueness } from '../protocol/errors.ts';
import { parseFilter, single } from '../protocol/filter.ts';
import { deletedIds, externalIds, idsByExternalId, recordResource } from '../scim.repo.ts';
import { USER_SCHEMA, type ListQuery, type PatchOp, type ScimUser, type ScimUserBody } from '../scim.schemas.ts';
import { primaryEmail, toBoolean, toEmail, toExternalId, toText, toUserName } from '../protocol/values.ts';

/** What SCIM reads and writes of a person. */
interface UserState {
  userName: string;
  givenName: string;
  familyName: string;
  email: string;
  active: boolean;
  externalId: string | null;
}

function render(deps: Deps, user: ProvisionedUser, externalId: string | undefined): ScimUser {
  const formatted = `${user.firstName} ${user.lastName}`.trim();
  return {
    schemas: [USER_SCHEMA],
    id: user.id,
    ...(externalId !== undefined ? { externalId } : {}),
    userName: user.username,
    name: { givenName: user.firstName, familyName: user.lastName, formatted },
    displayName: formatted || user.username,
    emails: user.email ? [{ value: user.email, type: 'work', primary: true }] : [],
    active: user.active,
    groups: user.groups.map((g) => ({ value: g.id, display: g.name })),
    meta: {
      resourceType: 'User',
      created: iso(user.createdAt),
      lastModified: iso(user.updatedAt),
      location: location(deps, 'Users', user.id),
    },
  };
}

const excluded = (deps: Deps, orgId: string): ExcludedIds => deletedIds(deps.db, orgId, 'User');

async function load(deps: Deps, principal: Principal, id: string): Promise<ScimUser> {
  const user = await provisionedUser(deps.db, principal.orgId, id, excluded(deps, principal.orgId));
  if (!user) throw notFound('User');
  return render(deps, user, (await externalIds(deps.db, principal.orgId, 'User', [id])).get(id));
}

/** A whole resource (POST, PUT) as state; `active` defaults to the current value (true for a new user). */
function stateOf(body: ScimUserBody, currentActive: boolean): UserState {
  return {
    userName: toUserName(body.userName),
    givenName: toText(body.name?.givenName ?? '', 'name.givenName', 100),
    familyName: toText(body.name?.familyName ?? '', 'name.familyName', 100),
    email: body.emails === undefined ? '' : primaryEmail(body.emails),
    active: body.active === undefined ? currentActive : toBoolean(body.active, 'active'),
    externalId: body.externalId === undefined ? null : toExternalId(body.externalId),
  };
}

export async function listUsers(deps: Deps, principal: Principal, query: ListQuery) {
  requirePrivileges(principal, 'user_management');
  const page = pageOf(query);
  const orgId = principal.orgId;
  const where: { ids?: string[]; username?: string; email?: string } = {};
  let none = false;
  if (query.filter !== undefined) {
    const clauses = parseFilter(query.filter, ['userName', 'externalId', 'emails.value', 'emails', 'id'], USER_SCHEMA);
    const emails = [...(clauses.get('emails.value') ?? []), ...(clauses.get('emails') ?? [])];
    if (emails.length > 0) clauses.set('emails.value', emails);
    const userName = single(clauses, 'userName', false);
    const email = single(clauses, 'emails.value', false);
    const externalId = single(clauses, 'externalId', true);
    const id = single(clauses, 'id', true);
    if (userName === null || email === null || externalId === null || id === null) none = true;
    if (userName) where.username = userName;
    if (email) where.email = email;
    if (typeof id === 'string') where.ids = [id];
    if (typeof externalId === 'string') {
      const ids = await idsByExternalId(deps.db, orgId, 'User', externalId);
      where.ids = where.ids ? where.ids.filter((i) => ids.includes(i)) : ids;
    }
  }
  if (none) return listResponse(0, page.startIndex, []);
  const { total, users } = await provisionedUsers(deps.db, orgId, { ...where, exclude: excluded(deps, orgId) }, page);
  const external = await externalIds(
    deps.db,
    orgId,
    'User',
    users.map((u) => u.id),
  );
  return listResponse(
    total,
    page.startIndex,
    users.map((u) => render(deps, u, external.get(u.id))),
  );
}

export async function getUser(deps: Deps, principal: Principal, id: string): Promise<ScimUser> {
  requirePrivileges(principal, 'user_management');
  return load(deps, principal, id);
}

const taken = (userName: string) => uniqueness(`userName "${userName}" is already taken`);

export async function createUser(deps: Deps, principal: Principal, body: ScimUserBody): Promise<ScimUser> {
  requirePrivileges(principal, 'user_management');
  const state = stateOf(body, true);
  const now = deps.clock.now();
  let id: string;
  try {
    id = await deps.db.transaction().execute(async (trx) => {
      // Usernames are unique across the server, whichever organization holds one.
      if (await usernameTaken(trx, state.userName)) throw taken(state.userName);
      const created = await createProvisionedUser(
        trx,
        principal,
        {
          username: state.userName,
          email: state.email,
          firstName: state.givenName,
          lastName: state.familyName,
          active: state.active,
        },
        now,
      );
      if (state.externalId !== null)
        await recordResource(trx, principal.orgId, 'User', created, now, { externalId: state.externalId });
      return created;
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw taken(state.userName);
    throw error;
  }
  return load(deps, principal, id);
}

/** Writes a user's new state (PUT, PATCH): identity's row, and the external id. */
async function write(deps: Deps, principal: Principal, id: string, before: UserState, after: UserState) {
  const now = deps.clock.now();
  try {
    await deps.db.transaction().execute(async (trx) => {
      if (after.userName.toLowerCase() !== before.userName.toLowerCase() && (await usernameTaken(trx, after.userName)))
        throw taken(after.userName);
      await updateProvisionedUser(
        trx,
        principal,
        id,
        {
          username: after.userName,
          email: after.email,
          firstName: after.givenName,
          lastName: after.familyName,
          active: after.active,
        },
        now,
      );
      if (after.externalId !== before.externalId)
        await recordResource(trx, principal.orgId, 'User', id, now, { externalId: after.externalId });
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw taken(after.userName);
    throw error;
  }
  return load(deps, principal, id);
}

function stateOfUser(user: ScimUser): UserState {
  return {
    userName: user.userName,
    givenName: user.name.givenName,
    familyName: user.name.familyName,
    email: user.emails[0]?.value ?? '',
    active: user.active,
    externalId: user.externalId ?? null,
  };
}

export async function replaceUser(deps: Deps, principal: Principal, id: string, body: ScimUserBody) {
  requirePrivileges(principal, 'user_management');
  const before = stateOfUser(await load(deps, principal, id));
  return write(deps, principal, id, before, stateOf(body, before.active));
}

const EMAIL_VALUE = /^emails(\[[^\]]*\])?\.value$/i;

/** One operation on a user's state. Attributes Tessera does not keep (title, addresses, extensions, …) are ignored. */
function applyToUser(state: UserState, op: 'add' | 'replace' | 'remove', path: string, value: unknown): void {
  const key = path.toLowerCase();
  const isEmail = key === 'emails' || EMAIL_VALUE.test(path) || /^emails\[[^\]]*\]$/i.test(path);
  if (op === 'remove') {
    if (key === 'username') throw mutability('userName cannot be removed');
    if (key === 'active') throw mutability('active cannot be removed; replace it with false');
    if (key === 'externalid') state.externalId = null;
    else if (key === 'name') Object.assign(state, { givenName: '', familyName: '' });
    else if (key === 'name.givenname') state.givenName = '';
    else if (key === 'name.familyname') state.familyName = '';
    else if (isEmail) state.email = '';
    return;
  }
  if (value === undefined) throw invalidValue(`${path}: ${op} needs a value`);
  if (key === 'username') state.userName = toUserName(value);
  else if (key === 'active') state.active = toBoolean(value, 'active');
  else if (key === 'externalid') state.externalId = toExternalId(value);
  else if (key === 'name.givenname') state.givenName = toText(value, 'name.givenName', 100, { nullable: true });
  else if (key === 'name.familyname') state.familyName = toText(value, 'name.familyName', 100, { nullable: true });
  else if (key === 'name') {
    if (value === null || typeof value !== 'object' || Array.isArray(value))
      throw invalidValue('name must be an object of givenName and familyName');
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (k.toLowerCase() === 'givenname') state.givenName = toText(v, 'name.givenName', 100, { nullable: true });
      if (k.toLowerCase() === 'familyname') state.familyName = toText(v, 'name.familyName', 100, { nullable: true });
    }
  } else if (key === 'emails' || /^emails\[[^\]]*\]$/i.test(path)) state.email = primaryEmail(value);
  else if (EMAIL_VALUE.test(path)) state.email = toEmail(value, path);
  else if (key === 'id' || key.startsWith('meta') || key === 'schemas') throw invalidPath(`${path} is read-only`);
}

export async function patchUser(deps: Deps, principal: Principal, id: string, body: PatchOp) {
  requirePrivileges(principal, 'user_management');
  const before = stateOfUser(await load(deps, principal, id));
  const after = { ...before };
  for (const { op, path, value } of expandOperations(body.Operations, USER_SCHEMA)) applyToUser(after, op, path, value);
  return write(deps, principal, id, before, after);
}

/**
 * Deprovisioning: identity keeps every user (their assets and audit rows name them), so the user is
 * disabled — every session and token ends at once — taken out of every group, and SCIM answers
 * 404 for them from then on. Their userName stays taken.
 */
export async function deleteUser(deps: Deps, principal: Principal, id: string): Promise<void> {
  requirePrivileges(principal, 'user_management');
  await load(deps, principal, id);
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    await updateProvisionedUser(trx, principal, id, { active: false, leaveGroups: true }, now);
    await recordResource(trx, principal.orgId, 'User', id, now, { deleted: true });
  });
}
