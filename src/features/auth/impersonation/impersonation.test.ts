import assert from 'node:assert/strict';
import { it } from 'node:test';
import { decodeJwt } from 'jose';
import { forEachEngine, json } from '../../../../test/helpers/context.ts';
import { login, loginHeaders } from '../../../../test/helpers/auth.ts';
import { createTestOrg, createTestUser } from '../../../../test/helpers/factories.ts';
import { securitySuite } from '../../../../test/helpers/security.ts';

forEachEngine('auth impersonation', (ctx) => {
  it('an administrator obtains non-refreshable tokens acting as a user, with an act claim and an audit entry', async () => {
    const org = await createTestOrg(ctx());
    const target = await createTestUser(ctx(), org, { privileges: ['download'] });
    const res = await ctx().inject({
      method: 'POST',
      url: '/v1/auth/impersonate',
      headers: { authorization: (await login(ctx(), org.admin)).session.authorization },
      payload: { username: target.username, reason: 'ticket 42' },
    });
    assert.equal(res.statusCode, 200, res.body);
    const body = json(res);
    assert.deepEqual(Object.keys(body).sort(), [
      'clientId',
      'endpointUrl',
      'password',
      'session',
      'userPoolId',
      'username',
    ]);
    assert.equal(body.username, target.username);
    assert.equal(body.password, '');
    assert.equal(body.session.refreshToken, '');
    assert.equal(typeof body.session.expireEpoch, 'number');
    for (const token of [body.session.accessToken, body.session.authorization]) {
      const claims = decodeJwt(token);
      assert.equal(claims.sub, target.userId);
      assert.deepEqual(claims.act, { sub: org.admin.userId });
    }
    const me = await ctx().inject({
      method: 'GET',
      url: '/v1/user',
      headers: { accesstoken: body.session.accessToken },
    });
    assert.equal(json(me).userId, target.userId);
    const sessions = json(
      await ctx().inject({
        method: 'GET',
        url: '/v1/auth/sessions',
        headers: { accesstoken: body.session.accessToken },
      }),
    );
    const current = sessions.sessions.find((s: { current: boolean }) => s.current);
    assert.equal(current.kind, 'impersonation');
    assert.equal(current.impersonatorId, org.admin.userId);
    const entry = await ctx()
      .deps.db.selectFrom('audit_log')
      .selectAll()
      .where('org_id', '=', org.orgId)
      .where('action', '=', 'auth.impersonate')
      .executeTakeFirstOrThrow();
    assert.equal(entry.actor_id, org.admin.userId);
    assert.equal(entry.target_id, target.userId);
    assert.equal(JSON.parse(entry.data).reason, 'ticket 42');
    assert.equal(JSON.parse(entry.data).impersonatorId, org.admin.userId);
  });

  it('impersonated tokens cannot be refreshed and end with their lifetime', async () => {
    const org = await createTestOrg(ctx());
    const target = await createTestUser(ctx(), org);
    const res = await ctx().inject({
      method: 'POST',
      url: '/v1/auth/impersonate',
      headers: await loginHeaders(ctx(), org.admin),
      payload: { username: target.username },
    });
    const body = json(res);
    const sid = String(decodeJwt(body.session.accessToken).sid);
    const stored = await ctx()
      .deps.db.selectFrom('auth_refresh_tokens')
      .select('token_hash')
      .where('session_id', '=', sid)
      .execute();
    assert.equal(stored.length, 0, 'no refresh token exists for the session');
    const own = await login(ctx(), target);
    const mixed = await ctx().inject({
      method: 'POST',
      url: '/v1/auth/token',
      payload: { accessToken: body.session.accessToken, refreshToken: own.session.refreshToken },
    });
    assert.equal(mixed.statusCode, 401);
    const whole = await ctx().inject({ method: 'POST', url: '/v1/auth/token', payload: body });
    assert.notEqual(whole.statusCode, 200);
    ctx().clock.advance(3600_000);
    assert.equal(
      (await ctx().inject({ method: 'GET', url: '/v1/user', headers: { accesstoken: body.session.accessToken } }))
        .statusCode,
      401,
    );
  });

  it('impersonation ends when the impersonator is disabled, and can be signed out like any session', async () => {
    const org = await createTestOrg(ctx());
    const helpdesk = await createTestUser(ctx(), org, { privileges: ['impersonate'] });
    const target = await createTestUser(ctx(), org);
    const headers = await loginHeaders(ctx(), helpdesk);
    const imp = async () =>
      json(
        await ctx().inject({
          method: 'POST',
          url: '/v1/auth/impersonate',
          headers,
          payload: { username: target.username },
        }),
      );
    const first = await imp();
    const out = await ctx().inject({
      method: 'DELETE',
      url: '/v1/auth/token',
      headers: { accesstoken: first.session.accessToken },
    });
    assert.equal(out.statusCode, 200);
    assert.equal(
      (await ctx().inject({ method: 'GET', url: '/v1/user', headers: { accesstoken: first.session.accessToken } }))
        .statusCode,
      401,
    );
    const second = await imp();
    assert.equal(
      (await ctx().inject({ method: 'GET', url: '/v1/user', headers: { accesstoken: second.session.accessToken } }))
        .statusCode,
      200,
    );
    await ctx().deps.db.updateTable('users').set({ status: 'disabled' }).where('id', '=', helpdesk.userId).execute();
    assert.equal(
      (await ctx().inject({ method: 'GET', url: '/v1/user', headers: { accesstoken: second.session.accessToken } }))
        .statusCode,
      401,
    );
  });

  it('refuses users of another organization, more privileged users, self and chained impersonation', async () => {
    const org = await createTestOrg(ctx());
    const other = await createTestOrg(ctx());
    const helpdesk = await createTestUser(ctx(), org, { privileges: ['impersonate', 'download'] });
    const plain = await createTestUser(ctx(), org, { privileges: ['download'] });
    const headers = await loginHeaders(ctx(), helpdesk);
    const post = (h: Record<string, string>, username: string) =>
      ctx().inject({ method: 'POST', url: '/v1/auth/impersonate', headers: h, payload: { username } });
    assert.equal((await post(headers, other.admin.username)).statusCode, 404);
    assert.equal((await post(headers, 'nobody-at-all')).statusCode, 404);
    assert.equal(
      (await post(headers, org.admin.username)).statusCode,
      403,
      'the admin holds privileges the helpdesk lacks',
    );
    assert.equal((await post(headers, helpdesk.username)).statusCode, 403);
    const ok = await post(headers, plain.username);
    assert.equal(ok.statusCode, 200, ok.body);
    // The impersonated user does not hold Impersonate; an impersonation session never chains.
    const admin2 = await createTestUser(ctx(), org, { privileges: ['impersonate', 'download'] });
    const asAdmin2 = json(await post(await loginHeaders(ctx(), org.admin), admin2.username));
    assert.equal((await post({ accesstoken: asAdmin2.session.accessToken }, plain.username)).statusCode, 403);
    const missing = await ctx().inject({ method: 'POST', url: '/v1/auth/impersonate', headers, payload: {} });
    assert.equal(missing.statusCode, 400);
    assert.equal(json(missing).details[0].field, 'body.username');
  });

  securitySuite(ctx, '/v1/auth/impersonate', {
    method: 'POST',
    privileges: ['impersonate'],
    prepare: async (c, org) => ({
      url: '/v1/auth/impersonate',
      body: { username: (await createTestUser(c, org)).username },
    }),
    credentials: true,
    ceiling: {
      privileges: ['impersonate'],
      prepare: (_c, org) => ({ url: '/v1/auth/impersonate', body: { username: org.admin.username } }),
    },
  });
});
