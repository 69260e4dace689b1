import assert from 'node:assert/strict';
import { it } from 'node:test';
import { decodeJwt } from 'jose';
import { forEachEngine, json, type TestContext } from '../../../../test/helpers/context.ts';
import { login } from '../../../../test/helpers/auth.ts';
import { createTestOrg, createTestUser, type TestOrg } from '../../../../test/helpers/factories.ts';
import { securitySuite } from '../../../../test/helpers/security.ts';

// Issue 27, item 1: an administrator sees and ends another person's sessions.

const me = (ctx: TestContext, accessToken: string) =>
  ctx.inject({ method: 'GET', url: '/v1/user', headers: { accesstoken: accessToken } });
const sid = (s: { session: { accessToken: string } }) => String(decodeJwt(s.session.accessToken).sid);

forEachEngine("a user's sessions, for administrators", (ctx) => {
  it('lists the active sessions of a user of the organization', async () => {
    const org = await createTestOrg(ctx());
    const user = await createTestUser(ctx(), org);
    const a = await login(ctx(), user);
    const b = await login(ctx(), user);
    await login(ctx(), org.admin);
    const res = await ctx().inject({
      method: 'GET',
      url: `/v1/user/${user.userId}/sessions`,
      headers: org.admin.headers,
    });
    assert.equal(res.statusCode, 200, res.body);
    const { sessions } = json(res);
    assert.deepEqual(sessions.map((s: { id: string }) => s.id).sort(), [sid(a), sid(b)].sort());
    assert.ok(sessions.every((s: { current: boolean; ip: string }) => !s.current && s.ip === '127.0.0.1'));
  });

  it('ends one session (its token is refused at once, the other keeps working), then all', async () => {
    const org = await createTestOrg(ctx());
    const user = await createTestUser(ctx(), org);
    const a = await login(ctx(), user);
    const b = await login(ctx(), user);
    assert.equal((await me(ctx(), a.session.accessToken)).statusCode, 200);
    const one = await ctx().inject({
      method: 'DELETE',
      url: `/v1/user/${user.userId}/sessions/${sid(a)}`,
      headers: org.admin.headers,
    });
    assert.equal(one.statusCode, 204, one.body);
    assert.equal((await me(ctx(), a.session.accessToken)).statusCode, 401);
    assert.equal((await me(ctx(), b.session.accessToken)).statusCode, 200);
    const again = await ctx().inject({
      method: 'DELETE',
      url: `/v1/user/${user.userId}/sessions/${sid(a)}`,
      headers: org.admin.headers,
    });
    assert.equal(again.statusCode, 404);
    const all = await ctx().inject({
      method: 'DELETE',
      url: `/v1/user/${user.userId}/sessions`,
      headers: org.admin.headers,
    });
    assert.equal(all.statusCode, 200, all.body);
    assert.deepEqual(json(all), { revoked: 1 });
    assert.equal((await me(ctx(), b.session.accessToken)).statusCode, 401);
    const audit = await ctx()
      .deps.db.selectFrom('audit_log')
      .select('action')
      .where('org_id', '=', org.orgId)
      .where('action', 'like', 'auth.session.admin%')
      .execute();
    assert.deepEqual(audit.map((r) => r.action).sort(), ['auth.session.admin_revoke', 'auth.session.admin_revoke_all']);
  });

  it("a session of another user, or another organization's user, is not found", async () => {
    const org = await createTestOrg(ctx());
    const user = await createTestUser(ctx(), org);
    const other = await createTestUser(ctx(), org);
    const theirs = await login(ctx(), other);
    const res = await ctx().inject({
      method: 'DELETE',
      url: `/v1/user/${user.userId}/sessions/${sid(theirs)}`,
      headers: org.admin.headers,
    });
    assert.equal(res.statusCode, 404);
    assert.equal((await me(ctx(), theirs.session.accessToken)).statusCode, 200);
    const elsewhere = await createTestOrg(ctx());
    const stranger = await createTestUser(ctx(), elsewhere);
    for (const method of ['GET', 'DELETE'] as const) {
      const r = await ctx().inject({ method, url: `/v1/user/${stranger.userId}/sessions`, headers: org.admin.headers });
      assert.equal(r.statusCode, 404);
    }
  });

  const withSessions = async (c: TestContext, org: TestOrg) => {
    const user = await createTestUser(c, org);
    return { user, session: await login(c, user) };
  };
  securitySuite(ctx, '/v1/user/{id}/sessions', {
    method: 'GET',
    resource: true,
    privileges: ['user_management'],
    prepare: async (c, org) => ({ url: `/v1/user/${(await withSessions(c, org)).user.userId}/sessions` }),
  });
  securitySuite(ctx, '/v1/user/{id}/sessions/{sessionId}', {
    method: 'DELETE',
    resource: true,
    privileges: ['user_management'],
    prepare: async (c, org) => {
      const { user, session } = await withSessions(c, org);
      return { url: `/v1/user/${user.userId}/sessions/${sid(session)}` };
    },
    ceiling: {
      privileges: ['user_management'],
      prepare: async (c, org) => ({
        url: `/v1/user/${org.admin.userId}/sessions/${sid(await login(c, org.admin))}`,
      }),
    },
  });
  securitySuite(ctx, '/v1/user/{id}/sessions', {
    method: 'DELETE',
    resource: true,
    privileges: ['user_management'],
    prepare: async (c, org) => ({ url: `/v1/user/${(await withSessions(c, org)).user.userId}/sessions` }),
    ceiling: {
      privileges: ['user_management'],
      prepare: (_c, org) => ({ url: `/v1/user/${org.admin.userId}/sessions` }),
    },
  });
});
