import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine, json, type TestContext } from '../../../../test/helpers/context.ts';
import { loginHeaders } from '../../../../test/helpers/auth.ts';
import { createKey } from '../../../../test/helpers/api-keys.ts';
import { createTestOrg, createTestUser, type TestOrg } from '../../../../test/helpers/factories.ts';
import { PERMISSIONS } from '../../../core/authz/catalog.ts';

// Issue 8, item 2: "nobody acts beyond what they hold", on every user, membership, role,
// group and template change; and item 3: only a person's own sign-in creates or changes people.

/** A holder of User Management (and Security Template Management) who is in Everyone only. */
async function userManager(ctx: TestContext, org: TestOrg) {
  const user = await createTestUser(ctx, org, {
    privileges: ['user_management', 'security_template_management', 'role_management'],
  });
  return { ...user, headers: await loginHeaders(ctx, user) };
}

forEachEngine('privilege ceiling', (ctx) => {
  it('a User Management holder cannot disable, demote, re-address or ungroup an administrator', async () => {
    const org = await createTestOrg(ctx());
    const um = await userManager(ctx(), org);
    const url = `/v1/user/${org.admin.userId}`;
    for (const payload of [
      { status: 'disabled' },
      { userRoleId: org.roles.viewer },
      { email: 'evil@example.test' },
      { groups: [org.groups.everyone] },
    ]) {
      const res = await ctx().inject({ method: 'PATCH', url, headers: um.headers, payload });
      assert.equal(res.statusCode, 403, `${JSON.stringify(payload)}: ${res.body}`);
    }
    const remove = await ctx().inject({
      method: 'PATCH',
      url: `${url}/remove-from-group`,
      headers: um.headers,
      payload: { userGroupId: org.groups.administrators },
    });
    assert.equal(remove.statusCode, 403, remove.body);
    const admin = json(await ctx().inject({ method: 'GET', url, headers: org.admin.headers }));
    assert.equal(admin.status, 'enabled');
    assert.equal(admin.emailId, `${org.admin.username}@example.test`);
    assert.ok(admin.groups.includes(org.groups.administrators));
  });

  it('a User Management holder cannot add themselves (or anyone) to Administrators: the group brings permissions they lack', async () => {
    const org = await createTestOrg(ctx());
    const um = await userManager(ctx(), org);
    const self = await ctx().inject({
      method: 'PATCH',
      url: `/v1/user/${um.userId}/add-to-group`,
      headers: um.headers,
      payload: { userGroupId: org.groups.administrators },
    });
    assert.equal(self.statusCode, 403, self.body);
    const viaPatch = await ctx().inject({
      method: 'PATCH',
      url: `/v1/user/${um.userId}`,
      headers: um.headers,
      payload: { groups: [org.groups.everyone, org.groups.administrators] },
    });
    assert.equal(viaPatch.statusCode, 403, viaPatch.body);
    const other = await createTestUser(ctx(), org);
    const res = await ctx().inject({
      method: 'PATCH',
      url: `/v1/user/${other.userId}/add-to-group`,
      headers: um.headers,
      payload: { userGroupId: org.groups.administrators },
    });
    assert.equal(res.statusCode, 403, res.body);
    // Within what they hold, they may act: another Everyone-only user into a group with nothing.
    const group = json(
      await ctx().inject({
        method: 'POST',
        url: '/v1/security/groups',
        headers: um.headers,
        payload: { groupName: 'Plain' },
      }),
    );
    const ok = await ctx().inject({
      method: 'PATCH',
      url: `/v1/user/${other.userId}/add-to-group`,
      headers: um.headers,
      payload: { userGroupId: group.groupId },
    });
    assert.equal(ok.statusCode, 200, ok.body);
    // An administrator staffs a group whose template they are not in (compared by kind).
    const press = await ctx().inject({
      method: 'POST',
      url: '/v1/security/template',
      headers: org.admin.headers,
      payload: {
        templateName: 'Press',
        securityDenormalized: [{ groupId: group.groupId, permissions: [PERMISSIONS.delete.id] }],
      },
    });
    assert.equal(press.statusCode, 201, press.body);
    const third = await createTestUser(ctx(), org);
    assert.equal(
      (
        await ctx().inject({
          method: 'PATCH',
          url: `/v1/user/${third.userId}/add-to-group`,
          headers: org.admin.headers,
          payload: { userGroupId: group.groupId },
        })
      ).statusCode,
      200,
    );
    // …but the User Management holder, who can Delete nowhere, cannot.
    const fourth = await createTestUser(ctx(), org);
    assert.equal(
      (
        await ctx().inject({
          method: 'PATCH',
          url: `/v1/user/${fourth.userId}/add-to-group`,
          headers: um.headers,
          payload: { userGroupId: group.groupId },
        })
      ).statusCode,
      403,
    );
  });

  it('roles: nobody deletes, changes or assigns a role holding privileges they lack', async () => {
    const org = await createTestOrg(ctx());
    const um = await userManager(ctx(), org);
    const strong = json(
      await ctx().inject({
        method: 'POST',
        url: '/v1/roles',
        headers: org.admin.headers,
        payload: { name: 'Strong', privileges: ['purge', 'user_management'] },
      }),
    );
    assert.equal(
      (await ctx().inject({ method: 'DELETE', url: `/v1/roles/${strong.id}`, headers: um.headers })).statusCode,
      403,
    );
    assert.equal(
      (
        await ctx().inject({
          method: 'PATCH',
          url: `/v1/roles/${strong.id}`,
          headers: um.headers,
          payload: { privileges: ['user_management'] },
        })
      ).statusCode,
      403,
    );
    const other = await createTestUser(ctx(), org);
    assert.equal(
      (
        await ctx().inject({
          method: 'PATCH',
          url: `/v1/user/${other.userId}`,
          headers: um.headers,
          payload: { userRoleId: strong.id },
        })
      ).statusCode,
      403,
    );
    assert.equal(
      (await ctx().inject({ method: 'DELETE', url: `/v1/roles/${strong.id}`, headers: org.admin.headers })).statusCode,
      204,
    );
  });

  it('groups and templates: nobody renames, deletes or rewrites grants beyond what they hold', async () => {
    const org = await createTestOrg(ctx());
    const um = await userManager(ctx(), org);
    assert.equal(
      (
        await ctx().inject({
          method: 'DELETE',
          url: `/v1/security/groups/${org.groups.administrators}`,
          headers: um.headers,
        })
      ).statusCode,
      403,
    );
    assert.equal(
      (
        await ctx().inject({
          method: 'PATCH',
          url: `/v1/security/groups/${org.groups.administrators}`,
          headers: um.headers,
          payload: { groupName: 'Nobody' },
        })
      ).statusCode,
      403,
    );
    // Granting their own group (Everyone) more on the Default template: refused.
    const escalate = await ctx().inject({
      method: 'PATCH',
      url: `/v1/security/template/${org.defaultTemplateId}`,
      headers: um.headers,
      payload: {
        securityDenormalized: [
          {
            groupId: org.groups.everyone,
            permissions: [PERMISSIONS.view.id, PERMISSIONS.download.id, PERMISSIONS.delete.id],
          },
          { groupId: org.groups.administrators, permissions: Object.values(PERMISSIONS).map((p) => p.id) },
        ],
      },
    });
    assert.equal(escalate.statusCode, 403, escalate.body);
    // Withdrawing the administrators' rights: refused too.
    const withdraw = await ctx().inject({
      method: 'PATCH',
      url: `/v1/security/template/${org.defaultTemplateId}`,
      headers: um.headers,
      payload: {
        securityDenormalized: [
          { groupId: org.groups.everyone, permissions: [PERMISSIONS.view.id, PERMISSIONS.download.id] },
        ],
      },
    });
    assert.equal(withdraw.statusCode, 403, withdraw.body);
    assert.equal(
      (
        await ctx().inject({
          method: 'DELETE',
          url: `/v1/security/template/${org.defaultTemplateId}`,
          headers: um.headers,
        })
      ).statusCode,
      403,
    );
    // The administrator, who holds everything, may.
    const ok = await ctx().inject({
      method: 'PATCH',
      url: `/v1/security/template/${org.defaultTemplateId}`,
      headers: org.admin.headers,
      payload: {
        securityDenormalized: [
          { groupId: org.groups.everyone, permissions: [PERMISSIONS.view.id] },
          { groupId: org.groups.administrators, permissions: Object.values(PERMISSIONS).map((p) => p.id) },
        ],
      },
    });
    assert.equal(ok.statusCode, 200, ok.body);
  });

  it('the last enabled holder of a privilege cannot be disabled or demoted, nor the privilege taken from their role', async () => {
    const org = await createTestOrg(ctx());
    const second = await createTestUser(ctx(), org, {
      roleId: org.roles.administrator,
      groupIds: [org.groups.administrators, org.groups.everyone],
    });
    // Two administrators: one may disable the other…
    const first = await ctx().inject({
      method: 'PATCH',
      url: `/v1/user/${second.userId}`,
      headers: org.admin.headers,
      payload: { status: 'disabled' },
    });
    assert.equal(first.statusCode, 200, first.body);
    // …but then the Administrator role is the only one holding most privileges: it keeps them.
    const strip = await ctx().inject({
      method: 'PATCH',
      url: `/v1/roles/${org.roles.administrator}`,
      headers: org.admin.headers,
      payload: { privileges: ['user_management', 'role_management'] },
    });
    assert.equal(strip.statusCode, 409, strip.body);
    assert.match(json(strip).message, /no enabled user holding/);
    const enable = await ctx().inject({
      method: 'PATCH',
      url: `/v1/user/${second.userId}`,
      headers: org.admin.headers,
      payload: { status: 'enabled' },
    });
    assert.equal(enable.statusCode, 200);
    const demoteSecond = await ctx().inject({
      method: 'PATCH',
      url: `/v1/user/${second.userId}`,
      headers: org.admin.headers,
      payload: { userRoleId: org.roles.viewer },
    });
    assert.equal(demoteSecond.statusCode, 200, demoteSecond.body);
    const demoteSelf = await ctx().inject({
      method: 'PATCH',
      url: `/v1/user/${org.admin.userId}`,
      headers: org.admin.headers,
      payload: { userRoleId: org.roles.editor },
    });
    assert.equal(demoteSelf.statusCode, 409, demoteSelf.body);
  });

  it('two administrators demoting each other at once: one wins, someone keeps every privilege', async () => {
    const org = await createTestOrg(ctx());
    const second = await createTestUser(ctx(), org, {
      roleId: org.roles.administrator,
      groupIds: [org.groups.administrators, org.groups.everyone],
    });
    const [a, b] = await Promise.all([
      ctx().inject({
        method: 'PATCH',
        url: `/v1/user/${second.userId}`,
        headers: org.admin.headers,
        payload: { userRoleId: org.roles.viewer },
      }),
      ctx().inject({
        method: 'PATCH',
        url: `/v1/user/${org.admin.userId}`,
        headers: second.headers,
        payload: { userRoleId: org.roles.viewer },
      }),
    ]);
    // The loser answers 409 when it signed in as an administrator before the winner committed (the
    // change would leave nobody holding every privilege), or 404 when its sign-in came after: it is
    // then a viewer, who cannot see another user. Either way exactly one change lands.
    const codes = [a.statusCode, b.statusCode].sort((x, y) => x - y);
    assert.ok(codes[0] === 200 && (codes[1] === 404 || codes[1] === 409), `${a.body} ${b.body}`);
    const [winner, demoted] = a.statusCode === 200 ? [org.admin, second] : [second, org.admin];
    const seen = await ctx().inject({ method: 'GET', url: `/v1/user/${winner.userId}`, headers: winner.headers });
    assert.equal(json(seen).roleId, org.roles.administrator, seen.body);
    const lost = await ctx().inject({ method: 'GET', url: `/v1/user/${demoted.userId}`, headers: winner.headers });
    assert.equal(json(lost).roleId, org.roles.viewer, lost.body);
  });
});

forEachEngine('own sign-in for credentials', (ctx) => {
  it('an API key cannot create a user with a password, nor change another user', async () => {
    const org = await createTestOrg(ctx());
    const key = await createKey(ctx(), org, { roleId: org.roles.administrator });
    const create = await ctx().inject({
      method: 'POST',
      url: '/v1/user',
      headers: { 'x-api-key': key.key },
      payload: {
        username: 'mallory',
        email: 'm@example.test',
        firstName: 'M',
        lastName: 'M',
        friendlyName: 'M',
        userRoleId: org.roles.administrator,
        accountType: 'local',
        password: 'Very-Long-Passw0rd!',
        groups: [org.groups.everyone],
      },
    });
    assert.equal(create.statusCode, 403, create.body);
    assert.match(json(create).message, /own sign-in/);
    const other = await createTestUser(ctx(), org);
    const change = await ctx().inject({
      method: 'PATCH',
      url: `/v1/user/${other.userId}`,
      headers: { 'x-api-key': key.key },
      payload: { userRoleId: org.roles.administrator },
    });
    assert.equal(change.statusCode, 403, change.body);
    const added = await ctx().inject({
      method: 'PATCH',
      url: `/v1/user/${other.userId}/add-to-group`,
      headers: { 'x-api-key': key.key },
      payload: { userGroupId: org.groups.administrators },
    });
    assert.equal(added.statusCode, 403, added.body);
    const client = await ctx().inject({
      method: 'POST',
      url: '/v1/oauth2/clients',
      headers: { 'x-api-key': key.key },
      payload: { name: 'x', redirectUris: ['https://a.example/cb'] },
    });
    assert.equal(client.statusCode, 403, client.body);
    const users = await ctx()
      .deps.db.selectFrom('users')
      .select('id')
      .where('org_id', '=', org.orgId)
      .where('username_key', '=', 'mallory')
      .execute();
    assert.equal(users.length, 0);
  });
});
