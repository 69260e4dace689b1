import assert from 'node:assert/strict';
import { it } from 'node:test';
import { createLocalJWKSet, decodeJwt, jwtVerify } from 'jose';
import { forEachEngine, json } from '../../../../test/helpers/context.ts';
import { login } from '../../../../test/helpers/auth.ts';
import { createTestOrg, createTestUser } from '../../../../test/helpers/factories.ts';

forEachEngine('auth tokens', (ctx) => {
  it('POST /v1/auth/token answers the spec session object with signed JWTs', async () => {
    const org = await createTestOrg(ctx());
    const res = await ctx().inject({
      method: 'POST',
      url: '/v1/auth/token',
      payload: { username: org.admin.username, password: org.admin.password, clientId: 'ignored' },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['cache-control'], 'no-store');
    const body = json(res);
    assert.deepEqual(Object.keys(body).sort(), [
      'clientId',
      'endpointUrl',
      'password',
      'session',
      'userPoolId',
      'username',
    ]);
    assert.deepEqual(Object.keys(body.session).sort(), ['accessToken', 'authorization', 'expireEpoch', 'refreshToken']);
    assert.equal(body.endpointUrl, `${ctx().config.publicUrl}/v1`);
    assert.equal(body.username, org.admin.username);
    assert.equal(body.password, '');
    assert.match(body.clientId, /^[0-9a-f]{26}$/);
    assert.equal(body.userPoolId, `tessera_${org.customerId}`);
    assert.match(body.session.refreshToken, /^rt_[A-Za-z0-9_-]{43}$/);
    const now = ctx().clock.now();
    assert.ok(Math.abs(body.session.expireEpoch - (now + 3_600_000)) < 2000, 'expireEpoch is in ms, one hour ahead');

    const jwks = json(await ctx().inject({ method: 'GET', url: '/.well-known/jwks.json' }));
    const keySet = createLocalJWKSet(jwks);
    const options = { issuer: ctx().config.publicUrl, currentDate: new Date(now) };
    const id = (await jwtVerify(body.session.authorization, keySet, { ...options, audience: body.clientId })).payload;
    assert.equal(id.sub, org.admin.userId);
    assert.equal(id.username, org.admin.username);
    assert.match(String(id.email), /@example\.test$/);
    assert.equal(id.token_use, 'id');
    assert.equal(id.exp! - id.iat!, 3600);
    assert.equal(id.exp! * 1000, body.session.expireEpoch);
    const access = (await jwtVerify(body.session.accessToken, keySet, options)).payload;
    assert.equal(access.token_use, 'access');
    assert.equal(access.sub, org.admin.userId);
    assert.equal(typeof access.jti, 'string');
    assert.equal(access.sid, id.sid);
    const row = await ctx()
      .deps.db.selectFrom('auth_sessions')
      .selectAll()
      .where('id', '=', String(access.sid))
      .executeTakeFirstOrThrow();
    assert.equal(row.expires_at, now + 30 * 24 * 3600_000);
    const stored = await ctx()
      .deps.db.selectFrom('auth_refresh_tokens')
      .select('token_hash')
      .where('session_id', '=', row.id)
      .execute();
    assert.equal(stored.length, 1);
    assert.notEqual(stored[0]!.token_hash, body.session.refreshToken, 'only a hash is stored');
  });

  it('the tokens authenticate as AccessToken, Authorization and Authorization: Bearer', async () => {
    const org = await createTestOrg(ctx());
    const { session } = await login(ctx(), org.admin);
    const variants: Record<string, string>[] = [
      { accesstoken: session.accessToken },
      { authorization: session.authorization },
      { authorization: `Bearer ${session.authorization}` },
      { authorization: `bearer ${session.accessToken}` },
    ];
    for (const headers of variants) {
      const res = await ctx().inject({ method: 'GET', url: '/v1/user', headers });
      assert.equal(res.statusCode, 200, `${Object.keys(headers)[0]}: ${res.body}`);
      assert.equal(json(res).userId, org.admin.userId);
    }
    const basic = await ctx().inject({
      method: 'GET',
      url: '/v1/user',
      headers: { authorization: 'Basic dXNlcjpwYXNz' },
    });
    assert.equal(basic.statusCode, 401);
  });

  it('missing or invalid fields are 400 naming the field', async () => {
    const cases: [unknown, string][] = [
      [{}, 'body.username'],
      [{ username: 'someone' }, 'body.password'],
      [{ password: 'whatever-123' }, 'body.username'],
      [{ username: 'someone', password: '' }, 'body.password'],
      [{ username: 'x', password: 'p'.repeat(5000) }, 'body.password'],
      [{ username: { a: 1 }, password: 'x' }, 'body.username'],
      [{ accessToken: 'a.b.c' }, 'body.refreshToken'],
      [{ session: { accessToken: 'a.b.c' } }, 'body.session.refreshToken'],
    ];
    for (const [payload, field] of cases) {
      const res = await ctx().inject({ method: 'POST', url: '/v1/auth/token', payload: payload as object });
      assert.equal(res.statusCode, 400, `${field}: ${res.body}`);
      assert.ok(
        json(res).details.some((d: { field: string }) => d.field === field),
        `${field} not named in ${res.body}`,
      );
    }
  });

  it('wrong password, unknown user and disabled user get the same 401', async () => {
    const org = await createTestOrg(ctx());
    const disabled = await createTestUser(ctx(), org, { status: 'disabled' });
    const attempts = [
      { username: org.admin.username, password: 'wrong-password-1' },
      { username: 'no-such-user-anywhere', password: 'wrong-password-1' },
      { username: disabled.username, password: disabled.password },
    ];
    const bodies = [];
    for (const payload of attempts) {
      const res = await ctx().inject({ method: 'POST', url: '/v1/auth/token', payload });
      assert.equal(res.statusCode, 401, res.body);
      const { message, code } = json(res);
      bodies.push({ message, code });
    }
    assert.deepEqual(bodies[0], bodies[1]);
    assert.deepEqual(bodies[1], bodies[2]);
    assert.equal(bodies[0]!.message, 'Incorrect username or password');
  });

  it('username is case-insensitive', async () => {
    const org = await createTestOrg(ctx());
    const res = await ctx().inject({
      method: 'POST',
      url: '/v1/auth/token',
      payload: { username: org.admin.username.toUpperCase(), password: org.admin.password },
    });
    assert.equal(res.statusCode, 200, res.body);
  });

  it('DELETE /v1/auth/token expires the access token, the id token and the refresh family', async () => {
    const org = await createTestOrg(ctx());
    const first = await login(ctx(), org.admin);
    const res = await ctx().inject({
      method: 'DELETE',
      url: '/v1/auth/token',
      headers: { accesstoken: first.session.accessToken },
      payload: first,
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(json(res), {
      endpointUrl: first.endpointUrl,
      clientId: first.clientId,
      userPoolId: first.userPoolId,
      username: first.username,
      session: { authorization: '', accessToken: '', refreshToken: first.session.refreshToken },
    });
    const variants: Record<string, string>[] = [
      { accesstoken: first.session.accessToken },
      { authorization: first.session.authorization },
    ];
    for (const headers of variants) {
      assert.equal((await ctx().inject({ method: 'GET', url: '/v1/user', headers })).statusCode, 401);
    }
    const refresh = await ctx().inject({ method: 'POST', url: '/v1/auth/token', payload: first });
    assert.equal(refresh.statusCode, 401);
    const again = await ctx().inject({
      method: 'DELETE',
      url: '/v1/auth/token',
      headers: { accesstoken: first.session.accessToken },
      payload: first,
    });
    assert.equal(again.statusCode, 401);
  });

  it('DELETE /v1/auth/token needs the AccessToken header', async () => {
    const org = await createTestOrg(ctx());
    const first = await login(ctx(), org.admin);
    assert.equal((await ctx().inject({ method: 'DELETE', url: '/v1/auth/token', payload: first })).statusCode, 401);
    assert.equal(
      (
        await ctx().inject({
          method: 'DELETE',
          url: '/v1/auth/token',
          headers: { accesstoken: 'garbage' },
          payload: first,
        })
      ).statusCode,
      401,
    );
    assert.equal(
      (await ctx().inject({ method: 'GET', url: '/v1/user', headers: { accesstoken: first.session.accessToken } }))
        .statusCode,
      200,
    );
  });

  it('an access token stops working after one hour', async () => {
    const org = await createTestOrg(ctx());
    const { session } = await login(ctx(), org.admin);
    ctx().clock.advance(3_600_000 - 1000);
    assert.equal(
      (await ctx().inject({ method: 'GET', url: '/v1/user', headers: { accesstoken: session.accessToken } }))
        .statusCode,
      200,
    );
    ctx().clock.advance(1000);
    const res = await ctx().inject({ method: 'GET', url: '/v1/user', headers: { accesstoken: session.accessToken } });
    assert.equal(res.statusCode, 401);
    assert.match(json(res).message, /expired/);
  });

  it('revocation is visible at once to a second instance on the same database', async () => {
    const org = await createTestOrg(ctx());
    const second = await ctx().secondInstance();
    const first = await login(ctx(), org.admin);
    const headers = { accesstoken: first.session.accessToken };
    assert.equal((await second.app.inject({ method: 'GET', url: '/v1/user', headers })).statusCode, 200);
    assert.equal(
      (await ctx().inject({ method: 'DELETE', url: '/v1/auth/token', headers, payload: first })).statusCode,
      200,
    );
    assert.equal((await second.app.inject({ method: 'GET', url: '/v1/user', headers })).statusCode, 401);
    // And the other way round: tokens minted by the second instance are verified by the first.
    const res = await second.app.inject({
      method: 'POST',
      url: '/v1/auth/token',
      payload: { username: org.admin.username, password: org.admin.password },
    });
    assert.equal(res.statusCode, 200);
    const token = json(res).session.accessToken;
    assert.equal(
      (await ctx().inject({ method: 'GET', url: '/v1/user', headers: { accesstoken: token } })).statusCode,
      200,
    );
    assert.equal(
      (await second.app.inject({ method: 'DELETE', url: '/v1/auth/token', headers: { accesstoken: token } }))
        .statusCode,
      200,
    );
    assert.equal(
      (await ctx().inject({ method: 'GET', url: '/v1/user', headers: { accesstoken: token } })).statusCode,
      401,
    );
  });

  it('a disabled user cannot use tokens or refresh', async () => {
    const org = await createTestOrg(ctx());
    const user = await createTestUser(ctx(), org);
    const first = await login(ctx(), user);
    await ctx().deps.db.updateTable('users').set({ status: 'disabled' }).where('id', '=', user.userId).execute();
    assert.equal(
      (await ctx().inject({ method: 'GET', url: '/v1/user', headers: { accesstoken: first.session.accessToken } }))
        .statusCode,
      401,
    );
    assert.equal((await ctx().inject({ method: 'POST', url: '/v1/auth/token', payload: first })).statusCode, 401);
  });

  it('a token signed by another key is refused', async () => {
    const org = await createTestOrg(ctx());
    const { session } = await login(ctx(), org.admin);
    const [h, p] = session.accessToken.split('.');
    const forged = `${h}.${p}.${Buffer.alloc(64).toString('base64url')}`;
    assert.equal(
      (await ctx().inject({ method: 'GET', url: '/v1/user', headers: { accesstoken: forged } })).statusCode,
      401,
    );
    const claims = decodeJwt(session.accessToken);
    const other = Buffer.from(JSON.stringify({ ...claims, sub: '00000000-0000-4000-8000-000000000000' })).toString(
      'base64url',
    );
    assert.equal(
      (
        await ctx().inject({
          method: 'GET',
          url: '/v1/user',
          headers: { accesstoken: `${h}.${other}.${session.accessToken.split('.')[2]}` },
        })
      ).statusCode,
      401,
    );
  });
});

forEachEngine('auth OpenAPI', (ctx) => {
  it('the OpenAPI document lists the auth, OAuth and discovery routes', async () => {
    const res = await ctx().inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(res.statusCode, 200);
    const paths = Object.keys(json(res).paths);
    for (const path of [
      '/v1/auth/token',
      '/v1/auth/impersonate',
      '/v1/auth/sessions',
      '/v1/auth/sessions/{id}',
      '/v1/oauth2/authorize',
      '/v1/oauth2/token',
      '/v1/oauth2/revoke',
      '/v1/oauth2/clients',
      '/.well-known/jwks.json',
      '/.well-known/openid-configuration',
    ]) {
      assert.ok(paths.includes(path), `${path} missing`);
    }
  });
});
