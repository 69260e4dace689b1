import { randomBytes } from 'node:crypto';
import type { Privilege } from '../../src/core/authz/catalog.ts';
import { toJson } from '../../src/core/db/json.ts';
import { newId } from '../../src/core/ids.ts';
import { createOrganization, hashPassword, type CreatedOrganization } from '../../src/features/identity/index.ts';
import { seedOrganizationMetadata } from '../../src/features/metadata/index.ts';
import type { TestContext } from './context.ts';
import { headersFor } from './credentials.ts';

export interface TestUser {
  userId: string;
  username: string;
  password: string;
  headers: Record<string, string>;
}

export interface TestOrg extends CreatedOrganization {
  admin: TestUser;
}

const unique = () => randomBytes(5).toString('hex');

/** A new organization with its defaults and an administrator holding every privilege. */
export async function createTestOrg(ctx: TestContext, options: { password?: string } = {}): Promise<TestOrg> {
  const username = `admin-${unique()}`;
  const password = options.password ?? `Pw-${unique()}-${unique()}`;
  const passwordHash = await hashPassword(password);
  const org = await ctx.deps.db.transaction().execute((trx) =>
    createOrganization(
      trx,
      ctx.deps.clock.now(),
      {
        name: `Org ${unique()}`,
        admin: { username, email: `${username}@example.test`, passwordHash },
      },
      seedOrganizationMetadata,
    ),
  );
  return { ...org, admin: { userId: org.adminUserId, username, password, headers: headersFor(org.adminUserId) } };
}

export interface UserOptions {
  /** Privileges of a role made for this user; defaults to none. Ignored when roleId is given. */
  privileges?: Privilege[];
  roleId?: string;
  groupIds?: string[];
  password?: string;
  status?: 'enabled' | 'disabled';
}

/** A user of `org`, with a role of its own holding exactly `privileges` unless roleId is given. */
export async function createTestUser(ctx: TestContext, org: TestOrg, options: UserOptions = {}): Promise<TestUser> {
  const now = ctx.deps.clock.now();
  const db = ctx.deps.db;
  let roleId = options.roleId;
  if (!roleId) {
    roleId = newId(now);
    const name = `role-${unique()}`;
    await db
      .insertInto('roles')
      .values({
        id: roleId,
        org_id: org.orgId,
        name,
        name_key: name,
        description: '',
        privileges: toJson(options.privileges ?? []),
        created_at: now,
        updated_at: now,
      })
      .execute();
  }
  const userId = newId(now);
  const username = `user-${unique()}`;
  const password = options.password ?? `Pw-${unique()}-${unique()}`;
  await db
    .insertInto('users')
    .values({
      id: userId,
      org_id: org.orgId,
      username,
      username_key: username,
      email: `${username}@example.test`,
      first_name: 'Test',
      last_name: 'User',
      friendly_name: username,
      status: options.status ?? 'enabled',
      account_type: 'local',
      role_id: roleId,
      password_hash: await hashPassword(password),
      phone: null,
      company: null,
      country: null,
      contact: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  const groups = options.groupIds ?? [org.groups.everyone];
  if (groups.length > 0)
    await db
      .insertInto('user_groups')
      .values(groups.map((group_id) => ({ org_id: org.orgId, user_id: userId, group_id })))
      .execute();
  return { userId, username, password, headers: headersFor(userId) };
}
