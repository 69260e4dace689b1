import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine, json, type TestContext } from '../../../../test/helpers/context.ts';
import { impersonationHeaders, login } from '../../../../test/helpers/auth.ts';
import { createKey } from '../../../../test/helpers/api-keys.ts';
import { createTestOrg, createTestUser } from '../../../../test/helpers/factories.ts';
import { securitySuite } from '../../../../test/helpers/security.ts';

// Issue 8, item 6: disabling ends every session; password change (own) and reset (administrator).

const me = (ctx: TestContext, accessToken: string) =>
  ctx.inject({ method: 'GET', url: '/v1/user', headers: { accesstoken: accessToken } });
const refresh = (ctx: TestContext, s: { session: { accessToken: string; refreshToken: string } }) =>
  ctx.inject({
    method: 'POST',
    url: '/v1/auth/token',
    payload: { accessToken: s.session.accessToken, refreshToken: s.session.refreshToken },
  });

forEachEngine('passwords and disabling', (ctx) => {
  it('disabling a user ends every session; re-enabling does not revive the old tokens', async () => {
    const org = await createTestOrg(ctx());
    const user = await createTestUser(ctx(), org);
    const a = await login(ctx(), user);
    const b = await login(ctx(), user);
    assert.equal((await me(ctx(), a.session.accessToken)).statusCode, 200);
    const off = await ctx().inject({
      method: 'PATCH',
      url: `/v1/user/${user.userId}`,
      headers: org.admin.headers,
      payload: { status: 'disabled' },
    });
    assert.equal(off.statusCode, 200, off.body);
    const on = await ctx().inject({
      method: 'PATCH',
      url: `/v1/user/${user.userId}`,
      headers: org.admin.headers,
      payload: { status: 'enabled' },
    });
    assert.equal(on.statusCode, 200, on.body);
    for (const s of [a, b]) {
      assert.equal((await me(ctx(), s.session.accessToken)).statusCode, 401);
      assert.equal((await refresh(ctx(), s)).statusCode, 401);
    }
    // A fresh sign-in works again.
    assert.equal((await me(ctx(), (await login(ctx(), user)).session.accessToken)).statusCode, 200);
  });

  it('disabling an administrator ends the impersonation sessions they opened', async () => {
    const org = await createTestOrg(ctx());
    const support = await createTestUser(ctx(), org, { privileges: ['impersonate', 'download'] });
    const target = await createTestUser(ctx(), org, { privileges: ['download'] });
    const headers = await impersonationHeaders(ctx(), support, target.username);
    await ctx().inject({
      method: 'PATCH',
      url: `/v1/user/${support.userId}`,
      headers: org.admin.headers,
      payload: { status: 'disabled' },
    });
    await ctx().inject({
      method: 'PATCH',
      url: `/v1/user/${support.userId}`,
      headers: org.admin.headers,
      payload: { status: 'enabled' },
    });
    assert.equal((await ctx().inject({ method: 'GET', url: '/v1/user', headers })).statusCode, 401);
  });

  it('changing your own password needs the current one and ends your other sessions', async () => {
    const org = await createTestOrg(ctx());
    const user = await createTestUser(ctx(), org);
    const current = await login(ctx(), user);
    const other = await login(ctx(), user);
    const headers = { accesstoken: current.session.accessToken };
    const wrong = await ctx().inject({
      method: 'PUT',
      url: '/v1/user/password',
      headers,
      payload: { currentPassword: 'not it at all', newPassword: 'A-new-passw0rd-here' },
    });
    assert.equal(wrong.statusCode, 400);
    assert.equal(json(wrong).details[0].field, 'body.currentPassword');
    const weak = await ctx().inject({
      method: 'PUT',
      url: '/v1/user/password',
      headers,
      payload: { currentPassword: user.password, newPassword: 'password' },
    });
    assert.equal(weak.statusCode, 400);
    assert.equal(json(weak).details[0].field, 'body.newPassword');
    const res = await ctx().inject({
      method: 'PUT',
      url: '/v1/user/password',
      headers,
      payload: { currentPassword: user.password, newPassword: 'A-new-passw0rd-here' },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(json(res).revokedSessions, 1);
    assert.equal((await me(ctx(), current.session.accessToken)).statusCode, 200, 'the session making the change stays');
    assert.equal((await me(ctx(), other.session.accessToken)).statusCode, 401);
    assert.equal((await refresh(ctx(), other)).statusCode, 401);
    const old = await ctx().inject({
      method: 'POST',
      url: '/v1/auth/token',
      payload: { username: user.username, password: user.password },
    });
    assert.equal(old.statusCode, 401);
    await login(ctx(), { username: user.username, password: 'A-new-passw0rd-here' });
  });

  it('no borrowed credential changes a password: API keys and impersonation tokens get 403', async () => {
    const org = await createTestOrg(ctx());
    const target = await createTestUser(ctx(), org);
    const key = await createKey(ctx(), org, { roleId: org.roles.administrator });
    const imp = await impersonationHeaders(ctx(), org.admin, target.username);
    const own = await ctx().inject({
      method: 'PUT',
      url: '/v1/user/password',
      headers: imp,
      payload: { currentPassword: target.password, newPassword: 'A-new-passw0rd-here' },
    });
    assert.equal(own.statusCode, 403, own.body);
    const reset = await ctx().inject({
      method: 'PUT',
      url: `/v1/user/${target.userId}/password`,
      headers: { 'x-api-key': key.key },
      payload: { newPassword: 'A-new-passw0rd-here' },
    });
    assert.equal(reset.statusCode, 403, reset.body);
    assert.match(json(reset).message, /own sign-in/);
  });

  it("an administrator's reset ends all the user's sessions; nobody resets someone holding more", async () => {
    const org = await createTestOrg(ctx());
    const user = await createTestUser(ctx(), org);
    const s = await login(ctx(), user);
    const res = await ctx().inject({
      method: 'PUT',
      url: `/v1/user/${user.userId}/password`,
      headers: org.admin.headers,
      payload: { newPassword: 'Reset-by-admin-123' },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(json(res).revokedSessions, 1);
    assert.equal((await me(ctx(), s.session.accessToken)).statusCode, 401);
    await login(ctx(), { username: user.username, password: 'Reset-by-admin-123' });
    const um = await createTestUser(ctx(), org, { privileges: ['user_management'] });
    const up = await ctx().inject({
      method: 'PUT',
      url: `/v1/user/${org.admin.userId}/password`,
      headers: um.headers,
      payload: { newPassword: 'Taken-over-123456' },
    });
    assert.equal(up.statusCode, 403, up.body);
    const self = await ctx().inject({
      method: 'PUT',
      url: `/v1/user/${org.admin.userId}/password`,
      headers: org.admin.headers,
      payload: { newPassword: 'Taken-over-123456' },
    });
    assert.equal(self.statusCode, 409);
  });

  securitySuite(ctx, '/v1/user/password', {
    method: 'PUT',
    credentials: true,
    prepare: async (_c, org) => {
      // Own sign-in of the administrator changes the administrator's password: give it back the same shape each time.
      const password = org.admin.password;
      return { url: '/v1/user/password', body: { currentPassword: password, newPassword: `${password}-2` } };
    },
  });
  securitySuite(ctx, '/v1/user/{id}/password', {
    method: 'PUT',
    resource: true,
    privileges: ['user_management'],
    credentials: true,
    prepare: async (c, org) => ({
      url: `/v1/user/${(await createTestUser(c, org)).userId}/password`,
      body: { newPassword: 'Reset-by-admin-123' },
    }),
    ceiling: {
      privileges: ['user_management'],
      prepare: (_c, org) => ({
        url: `/v1/user/${org.admin.userId}/password`,
        body: { newPassword: 'Taken-over-123456' },
      }),
    },
  });
});
