import { sql, type Expression } from 'kysely';
import type { DbOrTrx } from '../../core/db/connect.ts';

/**
 * What other features read of organizations, users, groups and roles (identity owns those tables,
 * decision 0009): small lookups by id, and the scalar subqueries that let a hot query of another
 * feature fetch an identity column in its own round trip. Every lookup is scoped to one organization
 * unless its name says otherwise.
 */

/** The organization's customer id (the reference's `customerId`), or '' for an unknown organization. */
export async function customerIdOf(db: DbOrTrx, orgId: string): Promise<string> {
  const row = await db.selectFrom('organizations').select('customer_id').where('id', '=', orgId).executeTakeFirst();
  return row?.customer_id ?? '';
}

/** The customer id of the organization `orgId` names, as a scalar subquery of another feature's query (the asset read path: one round trip). */
export function customerIdColumn(db: DbOrTrx, orgId: Expression<string>) {
  // Every asset's organization exists (a foreign key), so the value is never null.
  return sql<string>`(${db.selectFrom('organizations as o').select('o.customer_id').where('o.id', '=', orgId)})`;
}

/** The customer ids of these organizations (unknown ones are left out). */
export async function customerIdsOf(db: DbOrTrx, orgIds: readonly string[]): Promise<Map<string, string>> {
  if (orgIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('organizations')
    .select(['id', 'customer_id'])
    .where('id', 'in', [...new Set(orgIds)])
    .execute();
  return new Map(rows.map((r) => [r.id, r.customer_id]));
}

/** Every organization's id (start-up seeding). */
export async function organizationIds(db: DbOrTrx): Promise<string[]> {
  return (await db.selectFrom('organizations').select('id').orderBy('id').execute()).map((r) => r.id);
}

/** The enabled user of the organization with this e-mail address (case-insensitive), if any. */
export async function enabledUserIdByEmail(db: DbOrTrx, orgId: string, email: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('users')
    .select('id')
    .where('org_id', '=', orgId)
    .where('status', '=', 'enabled')
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
    .orderBy('id')
    .executeTakeFirst();
  return row?.id;
}

export interface UserNames {
  id: string;
  username: string;
  email: string;
  firstName: string;
  lastName: string;
  friendlyName: string;
}

/** Names of the organization's users among `ids` (people and service accounts alike), by id. */
export async function userNames(
  db: DbOrTrx,
  orgId: string,
  ids: readonly string[],
  options: { peopleOnly?: boolean } = {},
): Promise<Map<string, UserNames>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = await db
    .selectFrom('users')
    .select(['id', 'username', 'email', 'first_name', 'last_name', 'friendly_name'])
    .where('org_id', '=', orgId)
    .where('id', 'in', unique)
    .$if(options.peopleOnly === true, (q) => q.where('account_type', '!=', 'service'))
    .execute();
  return new Map(
    rows.map((r) => [
      r.id,
      {
        id: r.id,
        username: r.username,
        email: r.email,
        firstName: r.first_name,
        lastName: r.last_name,
        friendlyName: r.friendly_name,
      },
    ]),
  );
}

/** Names of the organization's security templates among `ids`, by id (ids as stored: lower case). */
export async function securityTemplateNames(
  db: DbOrTrx,
  orgId: string,
  ids: readonly string[],
): Promise<Map<string, string>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = await db
    .selectFrom('security_templates')
    .select(['id', 'name'])
    .where('org_id', '=', orgId)
    .where('id', 'in', unique)
    .execute();
  return new Map(rows.map((r) => [r.id, r.name]));
}

/** The organization's Default security template (by name), else its oldest one; undefined when it has none. */
export async function defaultSecurityTemplateId(db: DbOrTrx, orgId: string): Promise<string | undefined> {
  const named = await db
    .selectFrom('security_templates')
    .select('id')
    .where('org_id', '=', orgId)
    .where('name_key', '=', 'default')
    .executeTakeFirst();
  const fallback =
    named ??
    (await db
      .selectFrom('security_templates')
      .select('id')
      .where('org_id', '=', orgId)
      .orderBy('created_at')
      .orderBy('id')
      .executeTakeFirst());
  return fallback?.id;
}

/** Names of the organization's groups among `ids`, by id. */
export async function groupNames(db: DbOrTrx, orgId: string, ids: readonly string[]): Promise<Map<string, string>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = await db
    .selectFrom('groups')
    .select(['id', 'name'])
    .where('org_id', '=', orgId)
    .where('id', 'in', unique)
    .execute();
  return new Map(rows.map((r) => [r.id, r.name]));
}

/** An API key's service account: a user that cannot sign in, holding the key's role. Call inside the key's transaction. */
export async function createServiceAccount(
  db: DbOrTrx,
  input: { id: string; orgId: string; username: string; lastName: string; roleId: string; now: number },
): Promise<void> {
  const { id, orgId, username, lastName, roleId, now } = input;
  await db
    .insertInto('users')
    .values({
      id,
      org_id: orgId,
      username,
      username_key: username,
      email: '',
      first_name: 'API key',
      last_name: lastName,
      friendly_name: lastName,
      status: 'enabled',
      account_type: 'service',
      role_id: roleId,
      password_hash: null,
      phone: null,
      company: null,
      country: null,
      contact: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
}

/** Disables one user of the organization (an API key's service account when the key is revoked). */
export async function disableUser(db: DbOrTrx, orgId: string, userId: string, now: number): Promise<void> {
  await db
    .updateTable('users')
    .set({ status: 'disabled', updated_at: now })
    .where('org_id', '=', orgId)
    .where('id', '=', userId)
    .execute();
}

/**
 * Scalar subqueries for another feature's query (the API-key check, which runs on every miss of the
 * principal cache, fetches its key, role, service account and creator in one round trip). `roleId`,
 * `userId` and `orgId` are columns of the outer query (`sql.ref('k.role_id')`).
 */
export function rolePrivilegesOf(db: DbOrTrx, roleId: Expression<string>, orgId: Expression<string>) {
  return db
    .selectFrom('roles as kr')
    .select('kr.privileges')
    .where('kr.id', '=', roleId)
    .where('kr.org_id', '=', orgId);
}

/** The username of an enabled user (null when disabled or missing): see rolePrivilegesOf. */
export function enabledUsernameOf(db: DbOrTrx, userId: Expression<string>) {
  return db
    .selectFrom('users as su')
    .select('su.username')
    .where('su.id', '=', userId)
    .where('su.status', '=', 'enabled');
}

/** The role privileges of an enabled user of the organization (null when disabled or missing): see rolePrivilegesOf. */
export function enabledUserPrivilegesOf(db: DbOrTrx, userId: Expression<string>, orgId: Expression<string>) {
  return db
    .selectFrom('users as cu')
    .innerJoin('roles as cr', 'cr.id', 'cu.role_id')
    .select('cr.privileges')
    .where('cu.id', '=', userId)
    .where('cu.org_id', '=', orgId)
    .where('cu.status', '=', 'enabled');
}

/** What a token response needs to know about a user (any organization) and their organization. */
export function findTokenSubject(db: DbOrTrx, userId: string) {
  return db
    .selectFrom('users')
    .innerJoin('organizations', 'organizations.id', 'users.org_id')
    .select(['users.id', 'users.org_id', 'users.username', 'users.email', 'users.status', 'organizations.customer_id'])
    .where('users.id', '=', userId)
    .executeTakeFirst();
}

/** Whether an organization of that name exists (names compare case-insensitively). */
export async function organizationNameTaken(db: DbOrTrx, name: string): Promise<boolean> {
  const taken = await db
    .selectFrom('organizations')
    .select('id')
    .where(sql<string>`lower(name)`, '=', name.toLowerCase())
    .executeTakeFirst();
  return taken !== undefined;
}

/** The ids of the organizations whose id is `ref`, or whose name is `ref` case-insensitively (the command-line tools' `--org`). */
export async function organizationsByIdOrName(db: DbOrTrx, ref: string): Promise<string[]> {
  const rows = await db
    .selectFrom('organizations')
    .select('id')
    .where((eb) => eb.or([eb('id', '=', ref), eb(sql<string>`lower(name)`, '=', ref.toLowerCase())]))
    .execute();
  return rows.map((r) => r.id);
}

export interface NewLocalUser {
  id: string;
  orgId: string;
  username: string;
  email: string;
  firstName: string;
  lastName: string;
  roleId: string;
  /** Null for a federated user (single sign-on), who has no password. */
  passwordHash: string | null;
  now: number;
  accountType?: 'local' | 'federated';
}

/** Inserts a local (password) user and puts them in the organization's Everyone group; call in a transaction. */
export async function createLocalUser(db: DbOrTrx, user: NewLocalUser): Promise<void> {
  const everyone = await db
    .selectFrom('groups')
    .select('id')
    .where('org_id', '=', user.orgId)
    .where('name_key', '=', 'everyone')
    .executeTakeFirst();
  await db
    .insertInto('users')
    .values({
      id: user.id,
      org_id: user.orgId,
      username: user.username,
      username_key: user.username.toLowerCase(),
      email: user.email,
      first_name: user.firstName,
      last_name: user.lastName,
      friendly_name: user.username,
      status: 'enabled',
      account_type: user.accountType ?? 'local',
      role_id: user.roleId,
      password_hash: user.passwordHash,
      phone: null,
      company: null,
      country: null,
      contact: null,
      created_at: user.now,
      updated_at: user.now,
    })
    .execute();
  if (everyone)
    await db
      .insertInto('user_groups')
      .values({ org_id: user.orgId, user_id: user.id, group_id: everyone.id })
      .execute();
}

/** Sets a user's password hash (the caller ends their sessions in the same transaction). */
export async function setPasswordHash(db: DbOrTrx, userId: string, passwordHash: string, now: number): Promise<void> {
  await db
    .updateTable('users')
    .set({ password_hash: passwordHash, updated_at: now })
    .where('id', '=', userId)
    .execute();
}

/** Names of the groups a user belongs to (the `groups` claim of the id tokens Tessera issues). */
export async function groupNamesOfUser(db: DbOrTrx, orgId: string, userId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('user_groups')
    .innerJoin('groups', 'groups.id', 'user_groups.group_id')
    .select('groups.name')
    .where('user_groups.org_id', '=', orgId)
    .where('user_groups.user_id', '=', userId)
    .orderBy('groups.name')
    .execute();
  return rows.map((r) => r.name);
}

/** Ids of the organization's groups among `ids` (the rest name no group of it). */
export async function existingGroupIds(db: DbOrTrx, orgId: string, ids: readonly string[]): Promise<Set<string>> {
  return new Set((await groupNames(db, orgId, ids)).keys());
}

/** A user signed in through an identity provider (single sign-on); no password. Call inside the sign-in's transaction. */
export async function createFederatedUser(
  db: DbOrTrx,
  user: {
    id: string;
    orgId: string;
    username: string;
    email: string;
    firstName: string;
    lastName: string;
    roleId: string;
    now: number;
  },
): Promise<void> {
  await createLocalUser(db, { ...user, passwordHash: null, accountType: 'federated' });
}

/** Whether a username is taken in any organization (usernames are unique across the server). */
export async function usernameTaken(db: DbOrTrx, username: string): Promise<boolean> {
  const row = await db
    .selectFrom('users')
    .select('id')
    .where('username_key', '=', username.toLowerCase())
    .executeTakeFirst();
  return row !== undefined;
}

/** The state of a user as single sign-on needs it (undefined when not in the organization). */
export async function ssoUserState(
  db: DbOrTrx,
  orgId: string,
  userId: string,
): Promise<{ id: string; status: string; accountType: string } | undefined> {
  const row = await db
    .selectFrom('users')
    .select(['id', 'status', 'account_type'])
    .where('org_id', '=', orgId)
    .where('id', '=', userId)
    .executeTakeFirst();
  return row && { id: row.id, status: row.status, accountType: row.account_type };
}

/**
 * Group mapping at a sign-in through an identity provider: of the `managed` groups (those a
 * provider's mapping names), the user ends up in exactly `wanted`; other groups are left alone.
 * Returns the group ids added and removed.
 */
export async function syncManagedGroups(
  db: DbOrTrx,
  orgId: string,
  userId: string,
  managed: readonly string[],
  wanted: readonly string[],
  now: number,
): Promise<{ added: string[]; removed: string[] }> {
  if (managed.length === 0) return { added: [], removed: [] };
  const current = new Set(
    (
      await db
        .selectFrom('user_groups')
        .select('group_id')
        .where('org_id', '=', orgId)
        .where('user_id', '=', userId)
        .where('group_id', 'in', [...managed])
        .execute()
    ).map((r) => r.group_id),
  );
  const want = new Set(wanted);
  const added = [...want].filter((g) => !current.has(g));
  const removed = [...current].filter((g) => !want.has(g));
  if (added.length > 0)
    await db
      .insertInto('user_groups')
      .values(added.map((group_id) => ({ org_id: orgId, user_id: userId, group_id })))
      .onConflict((oc) => oc.columns(['user_id', 'group_id']).doNothing())
      .execute();
  if (removed.length > 0)
    await db
      .deleteFrom('user_groups')
      .where('org_id', '=', orgId)
      .where('user_id', '=', userId)
      .where('group_id', 'in', removed)
      .execute();
  if (added.length > 0 || removed.length > 0)
    await db.updateTable('users').set({ updated_at: now }).where('id', '=', userId).execute();
  return { added, removed };
}
