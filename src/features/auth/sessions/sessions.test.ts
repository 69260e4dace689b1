import assert from 'node:assert/strict';
import { it } from 'node:test';
import { decodeJwt } from 'jose';
import { forEachEngine, json } from '../../../../test/helpers/context.ts';
import { login } from '../../../../test/helpers/auth.ts';
import { createTestOrg, createTestUser } from '../../../../test/helpers/factories.ts';
import { securitySuite } from '../../../../test/helpers/security.ts';

forEachEngine('auth sessions', (ctx) => {
  it('lists only the caller’s active sessions, marking the current one', async () => {
    const org = await createTestOrg(ctx());
    const user = await createTestUser(ctx(), org);
    const a = await login(ctx(), user);
    const b = await login(ctx(), user);
    await login(ctx(), org.admin);
    const res = await ctx().inject({
      method: 'GET',
      url: '/v1/auth/sessions',
      headers: { accesstoken: b.session.accessToken, 'user-agent': 'test-agent' },
    });
    assert.equal(res.statusCode, 200, res.body);
    const { sessions } = json(res);
    assert.deepEqual(
      sessions.map((s: { id: string }) => s.id).sort(),
      [decodeJwt(a.session.accessToken).sid, decodeJwt(b.session.accessToken).sid].sort(),
    );
    const current = sessions.filter((s: { current: boolean }) => s.current);
    assert.equal(current.length, 1);
    assert.equal(current[0].id, decodeJwt(b.session.accessToken).sid);
    assert.equal(current[0].kind, 'password');
    assert.equal(current[0].ip, '127.0.0.1');
    assert.equal(typeof current[0].expireEpoch, 'number');
  });

  it('revokes one session: its tokens and refresh family stop working, others keep working', async () => {
    const org = await createTestOrg(ctx());
    const user = await createTestUser(ctx(), org);
    const a = await login(ctx(), user);
    const b = await login(ctx(), user);
    const aId = String(decodeJwt(a.session.accessToken).sid);
    const res = await ctx().inject({
      method: 'DELETE',
      url: `/v1/auth/sessions/${aId}`,
      headers: { accesstoken: b.session.accessToken },
    });
    assert.equal(res.statusCode, 204, res.body);
    assert.equal(
      (await ctx().inject({ method: 'GET', url: '/v1/user', headers: { accesstoken: a.session.accessToken } }))
        .statusCode,
      401,
    );
    assert.equal((await ctx().inject({ method: 'POST', url: '/v1/auth/token', payload: a })).statusCode, 401);
    assert.equal(
      (await ctx().inject({ method: 'GET', url: '/v1/user', headers: { accesstoken: b.session.accessToken } }))
        .statusCode,
      200,
    );
    const again = await ctx().inject({
      method: 'DELETE',
      url: `/v1/auth/sessions/${aId}`,
      headers: { accesstoken: b.session.accessToken },
    });
    assert.equal(again.statusCode, 404);
    const adminSession = String(decodeJwt((await login(ctx(), org.admin)).session.accessToken).sid);
    assert.equal(
      (
        await ctx().inject({
          method: 'DELETE',
          url: `/v1/auth/sessions/${adminSession}`,
          headers: { accesstoken: b.session.accessToken },
        })
      ).statusCode,
      404,
    );
  });

  it('revokes all of the caller’s sessions, visible on a second instance', async () => {
    const org = await createTestOrg(ctx());
    const user = await createTestUser(ctx(), org);
    const second = await ctx().secondInstance();
    const a = await login(ctx(), user);
    const b = await login(ctx(), user);
    const admin = await login(ctx(), org.admin);
    const res = await ctx().inject({
      method: 'DELETE',
      url: '/v1/auth/sessions',
      headers: { accesstoken: a.session.accessToken },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(json(res), { revoked: 2 });
    for (const s of [a, b]) {
      assert.equal(
        (await second.app.inject({ method: 'GET', url: '/v1/user', headers: { accesstoken: s.session.accessToken } }))
          .statusCode,
        401,
      );
    }
    assert.equal(
      (await second.app.inject({ method: 'GET', url: '/v1/user', headers: { accesstoken: admin.session.accessToken } }))
        .statusCode,
      200,
    );
  });

  securitySuite(ctx, '/v1/auth/sessions', { method: 'GET', prepare: () => ({ url: '/v1/auth/sessions' }) });
  securitySuite(ctx, '/v1/auth/sessions', { method: 'DELETE', prepare: () => ({ url: '/v1/auth/sessions' }) });
  securitySuite(ctx, '/v1/auth/sessions/{id}', {
    method: 'DELETE',
    resource: true,
    prepare: async (c, org) => ({
      url: `/v1/auth/sessions/${decodeJwt((await login(c, org.admin)).session.accessToken).sid}`,
    }),
  });
});
