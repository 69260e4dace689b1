import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { PERMISSIONS, type Permission, type Privilege } from '../../src/core/authz/catalog.ts';
import type { TestContext } from './context.ts';
import { createTestUser, type TestOrg, type TestUser } from './factories.ts';

const unique = () => randomBytes(4).toString('hex');

/** A new group of `org` (through the API, as an administrator would). */
export async function createGroup(ctx: TestContext, org: TestOrg, name = `group-${unique()}`): Promise<string> {
  const res = await ctx.inject({
    method: 'POST',
    url: '/v1/security/groups',
    headers: org.admin.headers,
    payload: { groupName: name },
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json().groupId as string;
}

/** A new security template granting each listed group exactly the listed permissions. */
export async function createTemplate(
  ctx: TestContext,
  org: TestOrg,
  grants: [groupId: string, permissions: Permission[]][],
  name = `template-${unique()}`,
): Promise<string> {
  const res = await ctx.inject({
    method: 'POST',
    url: '/v1/security/template',
    headers: org.admin.headers,
    payload: {
      templateName: name,
      securityDenormalized: grants.map(([groupId, permissions]) => ({
        groupId,
        permissions: permissions.map((p) => PERMISSIONS[p].id),
      })),
    },
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json().templateId as string;
}

export interface Holder {
  user: TestUser;
  groupId: string;
  /** A template granting the holder's group (and nobody else) exactly `permissions`. */
  templateId: string;
}

/**
 * A user in a group of their own (not in Everyone), with a role holding exactly `privileges` and a
 * template granting their group exactly `permissions`: put that template on a thing to give them those rights.
 */
export async function holder(
  ctx: TestContext,
  org: TestOrg,
  privileges: Privilege[],
  permissions: Permission[],
): Promise<Holder> {
  const groupId = await createGroup(ctx, org);
  const templateId = await createTemplate(ctx, org, [
    [groupId, permissions],
    [org.groups.administrators, Object.keys(PERMISSIONS) as Permission[]],
  ]);
  const user = await createTestUser(ctx, org, { privileges, groupIds: [groupId] });
  return { user, groupId, templateId };
}
