import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine, json } from '../../../../test/helpers/context.ts';
import { createTestOrg, createTestUser } from '../../../../test/helpers/factories.ts';
import { securitySuite } from '../../../../test/helpers/security.ts';

forEachEngine('users', (ctx) => {
  it('GET /v1/user returns the current user in the reference shape', async () => {
    const org = await createTestOrg(ctx());
    const res = await ctx().inject({ method: 'GET', url: '/v1/user', headers: org.admin.headers });
    assert.equal(res.statusCode, 200);
    const user = json(res);
    assert.equal(user.userId, org.admin.userId);
    assert.equal(user.userName, org.admin.username);
    assert.equal(user.customerId, org.customerId);
    assert.match(user.customerId, /^\d{13}$/);
    assert.equal(user.roleId, org.roles.administrator);
    assert.equal(user.status, 'enabled');
    assert.deepEqual([...user.groups].sort(), [org.groups.administrators, org.groups.everyone].sort());
    assert.match(user.emailId, /@example\.test$/);
    assert.equal(typeof user.createdEpoch, 'number');
    assert.equal(user.password_hash, undefined);
    assert.equal(user.passwordHash, undefined);
  });

  it('GET /v1/user is answered from memory, yet shows a change of the profile at once', async () => {
    const org = await createTestOrg(ctx());
    const first = await ctx().inject({ method: 'GET', url: '/v1/user', headers: org.admin.headers });
    const again = await ctx().inject({ method: 'GET', url: '/v1/user', headers: org.admin.headers });
    assert.equal(again.statusCode, 200);
    assert.equal(again.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(again.body, first.body);
    const patched = await ctx().inject({
      method: 'PATCH',
      url: `/v1/user/${org.admin.userId}`,
      headers: org.admin.headers,
      payload: { firstName: 'Renamed' },
    });
    assert.equal(patched.statusCode, 200, patched.body);
    const after = json(await ctx().inject({ method: 'GET', url: '/v1/user', headers: org.admin.headers }));
    assert.equal(after.firstName, 'Renamed');
    assert.equal(after.userId, org.admin.userId);
  });

  it('POST /v1/user creates a user who can then be read', async () => {
    const org = await createTestOrg(ctx());
    const body = {
      firstName: 'Ada',
      lastName: 'Lovelace',
      friendlyName: 'Ada',
      email: 'ada@example.test',
      username: `ada-${Date.now()}`,
      password: 'correct horse battery',
      accountType: 'local',
      userRoleId: org.roles.editor,
      groups: [org.groups.everyone],
      customAttributes: { country: 'UK', company: 'Analytical', phone: 12345, contact: 'Babbage' },
    };
    const res = await ctx().inject({ method: 'POST', url: '/v1/user', headers: org.admin.headers, payload: body });
    assert.equal(res.statusCode, 200, res.body);
    const created = json(res);
    assert.equal(created.status, 'success');
    assert.equal(created.roleId, org.roles.editor);
    const read = json(
      await ctx().inject({ method: 'GET', url: `/v1/user/${created.userId}`, headers: org.admin.headers }),
    );
    assert.equal(read.firstName, 'Ada');
    assert.equal(read.phone, '12345');
    assert.equal(read.country, 'UK');
    assert.deepEqual(read.groups, [org.groups.everyone]);
    const row = await ctx()
      .deps.db.selectFrom('users')
      .select('password_hash')
      .where('id', '=', created.userId)
      .executeTakeFirstOrThrow();
    assert.match(row.password_hash!, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  });

  it('POST /v1/user rejects bad input naming the field', async () => {
    const org = await createTestOrg(ctx());
    const base = {
      firstName: 'A',
      lastName: 'B',
      friendlyName: 'C',
      email: 'abc@example.test',
      username: `u-${Date.now()}`,
      password: 'long enough pw',
      accountType: 'local',
      userRoleId: org.roles.viewer,
      groups: [org.groups.everyone],
    };
    const cases: [Record<string, unknown>, string][] = [
      [{ ...base, email: 'nope' }, 'body.email'],
      [{ ...base, firstName: '' }, 'body.firstName'],
      [{ ...base, groups: [] }, 'body.groups'],
      [{ ...base, userRoleId: 'x' }, 'body.userRoleId'],
      [{ ...base, userRoleId: '00000000-0000-4000-8000-000000000000' }, 'body.userRoleId'],
      [{ ...base, groups: ['00000000-0000-4000-8000-000000000000'] }, 'body.groups'],
      [{ ...base, password: 'password123' }, 'body.password'],
      [{ ...base, accountType: 'ldap' }, 'body.accountType'],
      [(({ username: _u, ...rest }) => rest)(base), 'body.username'],
    ];
    for (const [payload, field] of cases) {
      const res = await ctx().inject({ method: 'POST', url: '/v1/user', headers: org.admin.headers, payload });
      assert.equal(res.statusCode, 400, `${field}: ${res.body}`);
      const body = json(res);
      assert.equal(body.code, 'validation_failed');
      assert.ok(
        body.details.some((d: { field: string }) => d.field === field),
        `${field} not named in ${res.body}`,
      );
    }
  });

  it('POST /v1/user refuses a taken username with 409', async () => {
    const org = await createTestOrg(ctx());
    const other = await createTestOrg(ctx());
    const res = await ctx().inject({
      method: 'POST',
      url: '/v1/user',
      headers: org.admin.headers,
      payload: {
        firstName: 'A',
        lastName: 'B',
        friendlyName: 'C',
        email: 'abc@example.test',
        username: other.admin.username.toUpperCase(),
        password: 'long enough pw',
        accountType: 'local',
        userRoleId: org.roles.viewer,
        groups: [org.groups.everyone],
      },
    });
    assert.equal(res.statusCode, 409, res.body);
  });

  it('POST /v1/user refuses to grant a role more powerful than the caller', async () => {
    const org = await createTestOrg(ctx());
    const manager = await createTestUser(ctx(), org, {
      privileges: ['user_management', 'security_template_management'],
    });
    const res = await ctx().inject({
      method: 'POST',
      url: '/v1/user',
      headers: manager.headers,
      payload: {
        firstName: 'A',
        lastName: 'B',
        friendlyName: 'C',
        email: 'abc@example.test',
        username: `u-${Date.now()}`,
        password: 'long enough pw',
        accountType: 'local',
        userRoleId: org.roles.administrator,
        groups: [org.groups.everyone],
      },
    });
    assert.equal(res.statusCode, 403, res.body);
  });

  it('GET /v1/user/{id}: self or User Management; others get 404', async () => {
    const org = await createTestOrg(ctx());
    const a = await createTestUser(ctx(), org);
    const b = await createTestUser(ctx(), org);
    assert.equal(
      (await ctx().inject({ method: 'GET', url: `/v1/user/${a.userId}`, headers: a.headers })).statusCode,
      200,
    );
    assert.equal(
      (await ctx().inject({ method: 'GET', url: `/v1/user/${b.userId}`, headers: a.headers })).statusCode,
      404,
    );
    assert.equal(
      (await ctx().inject({ method: 'GET', url: `/v1/user/${b.userId}`, headers: org.admin.headers })).statusCode,
      200,
    );
    assert.equal(
      (
        await ctx().inject({
          method: 'GET',
          url: '/v1/user/00000000-0000-4000-8000-000000000000',
          headers: org.admin.headers,
        })
      ).statusCode,
      404,
    );
    const bad = await ctx().inject({ method: 'GET', url: '/v1/user/not-a-uuid', headers: org.admin.headers });
    assert.equal(bad.statusCode, 400);
    assert.equal(json(bad).details[0].field, 'path.id');
  });

  it('PATCH /v1/user/{id} updates profile fields; role, groups and status need User Management', async () => {
    const org = await createTestOrg(ctx());
    const user = await createTestUser(ctx(), org);
    const self = await ctx().inject({
      method: 'PATCH',
      url: `/v1/user/${user.userId}`,
      headers: user.headers,
      payload: { firstName: 'New', phone: 555 },
    });
    assert.equal(self.statusCode, 200, self.body);
    assert.equal(json(self).firstName, 'New');
    assert.equal(json(self).phone, '555');
    const escalate = await ctx().inject({
      method: 'PATCH',
      url: `/v1/user/${user.userId}`,
      headers: user.headers,
      payload: { userRoleId: org.roles.administrator },
    });
    assert.equal(escalate.statusCode, 403);
    const byAdmin = await ctx().inject({
      method: 'PATCH',
      url: `/v1/user/${user.userId}`,
      headers: org.admin.headers,
      payload: { userRoleName: 'editor', groups: [org.groups.administrators] },
    });
    assert.equal(byAdmin.statusCode, 200, byAdmin.body);
    assert.equal(json(byAdmin).roleId, org.roles.editor);
    assert.deepEqual(json(byAdmin).groups, [org.groups.administrators]);
    const empty = await ctx().inject({
      method: 'PATCH',
      url: `/v1/user/${user.userId}`,
      headers: org.admin.headers,
      payload: {},
    });
    assert.equal(empty.statusCode, 400);
    const disabled = await ctx().inject({
      method: 'PATCH',
      url: `/v1/user/${user.userId}`,
      headers: org.admin.headers,
      payload: { status: 'disabled' },
    });
    assert.equal(json(disabled).status, 'disabled');
    // A disabled user's credentials stop working.
    assert.equal((await ctx().inject({ method: 'GET', url: '/v1/user', headers: user.headers })).statusCode, 401);
    const selfDisable = await ctx().inject({
      method: 'PATCH',
      url: `/v1/user/${org.admin.userId}`,
      headers: org.admin.headers,
      payload: { status: 'disabled' },
    });
    assert.equal(selfDisable.statusCode, 409);
  });

  it('add-to-group and remove-from-group, by id or by name, with 409 on no-ops', async () => {
    const org = await createTestOrg(ctx());
    const user = await createTestUser(ctx(), org);
    const add = await ctx().inject({
      method: 'PATCH',
      url: `/v1/user/${user.userId}/add-to-group`,
      headers: org.admin.headers,
      payload: { userGroupName: 'Administrators' },
    });
    assert.equal(add.statusCode, 200, add.body);
    assert.deepEqual(json(add), { status: 'success', message: 'User Profile update was successful' });
    const again = await ctx().inject({
      method: 'PATCH',
      url: `/v1/user/${user.userId}/add-to-group`,
      headers: org.admin.headers,
      payload: { userGroupId: org.groups.administrators },
    });
    assert.equal(again.statusCode, 409);
    assert.equal(json(again).message, 'User is already part of this group.');
    const remove = await ctx().inject({
      method: 'PATCH',
      url: `/v1/user/${user.userId}/remove-from-group`,
      headers: org.admin.headers,
      payload: { userGroupId: org.groups.administrators },
    });
    assert.equal(remove.statusCode, 200);
    const removeAgain = await ctx().inject({
      method: 'PATCH',
      url: `/v1/user/${user.userId}/remove-from-group`,
      headers: org.admin.headers,
      payload: { userGroupId: org.groups.administrators },
    });
    assert.equal(removeAgain.statusCode, 409);
    const neither = await ctx().inject({
      method: 'PATCH',
      url: `/v1/user/${user.userId}/add-to-group`,
      headers: org.admin.headers,
      payload: {},
    });
    assert.equal(neither.statusCode, 400);
    const unknown = await ctx().inject({
      method: 'PATCH',
      url: `/v1/user/${user.userId}/add-to-group`,
      headers: org.admin.headers,
      payload: { userGroupName: 'nope' },
    });
    assert.equal(unknown.statusCode, 400);
    assert.equal(json(unknown).details[0].field, 'body.userGroupName');
  });

  securitySuite(ctx, '/v1/user', { method: 'GET', identityScope: true, prepare: () => ({ url: '/v1/user' }) });
  securitySuite(ctx, '/v1/user/{id}', {
    method: 'GET',
    resource: true,
    prepare: (_c, org) => ({ url: `/v1/user/${org.admin.userId}` }),
  });
  securitySuite(ctx, '/v1/user (create)', {
    method: 'POST',
    privileges: ['user_management', 'security_template_management'],
    prepare: (_c, org) => ({
      url: '/v1/user',
      body: {
        firstName: 'A',
        lastName: 'B',
        friendlyName: 'C',
        email: 'abc@example.test',
        username: `u-${Math.random().toString(36).slice(2)}`,
        password: 'long enough pw',
        accountType: 'local',
        userRoleId: org.roles.viewer,
        groups: [org.groups.everyone],
      },
    }),
    credentials: true,
    ceiling: {
      privileges: ['user_management', 'security_template_management'],
      prepare: (_c, org) => ({
        url: '/v1/user',
        body: {
          firstName: 'A',
          lastName: 'B',
          friendlyName: 'C',
          email: 'abc@example.test',
          username: `u-${Math.random().toString(36).slice(2)}`,
          password: 'long enough pw',
          accountType: 'local',
          userRoleId: org.roles.viewer,
          groups: [org.groups.everyone, org.groups.administrators],
        },
      }),
    },
  });
  const um = ['user_management'] as const;
  securitySuite(ctx, '/v1/user/{id} (update)', {
    method: 'PATCH',
    resource: true,
    privileges: [...um],
    credentials: true,
    prepare: async (c, org) => ({
      url: `/v1/user/${(await createTestUser(c, org)).userId}`,
      body: { groups: [org.groups.everyone] },
    }),
    ceiling: {
      privileges: [...um],
      prepare: (_c, org) => ({ url: `/v1/user/${org.admin.userId}`, body: { status: 'disabled' } }),
    },
  });
  securitySuite(ctx, '/v1/user/{id} (update, own groups)', {
    method: 'PATCH',
    resource: true,
    privileges: [...um],
    prepare: async (c, org) => ({ url: `/v1/user/${(await createTestUser(c, org)).userId}`, body: { firstName: 'X' } }),
    ceiling: {
      privileges: [...um],
      prepare: (_c, org, caller) => ({
        url: `/v1/user/${caller.userId}`,
        body: { groups: [org.groups.everyone, org.groups.administrators] },
      }),
    },
  });
  securitySuite(ctx, '/v1/user/{id}/add-to-group', {
    method: 'PATCH',
    resource: true,
    privileges: [...um],
    credentials: true,
    prepare: async (c, org) => ({
      url: `/v1/user/${(await createTestUser(c, org)).userId}/add-to-group`,
      body: { userGroupId: org.groups.administrators },
    }),
    ceiling: {
      privileges: [...um],
      prepare: (_c, org, caller) => ({
        url: `/v1/user/${caller.userId}/add-to-group`,
        body: { userGroupId: org.groups.administrators },
      }),
    },
  });
  securitySuite(ctx, '/v1/user/{id}/remove-from-group', {
    method: 'PATCH',
    resource: true,
    privileges: [...um],
    credentials: true,
    prepare: async (c, org) => ({
      url: `/v1/user/${(await createTestUser(c, org)).userId}/remove-from-group`,
      body: { userGroupId: org.groups.everyone },
    }),
    ceiling: {
      privileges: [...um],
      prepare: (_c, org) => ({
        url: `/v1/user/${org.admin.userId}/remove-from-group`,
        body: { userGroupId: org.groups.administrators },
      }),
    },
  });
});
