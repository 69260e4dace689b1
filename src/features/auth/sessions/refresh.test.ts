import assert from 'node:assert/strict';
import { it } from 'node:test';
import { decodeJwt } from 'jose';
import { forEachEngine, json, type TestContext } from '../../../../test/helpers/context.ts';
import { login, type LoginResult } from '../../../../test/helpers/auth.ts';
import { createTestOrg, type TestOrg } from '../../../../test/helpers/factories.ts';
import { findTokenSubject } from './sessions.repo.ts';
import { insertSessionRows } from './tokens.service.ts';

const DAY = 24 * 3600_000;

async function refresh(ctx: TestContext, payload: unknown) {
  return ctx.inject({ method: 'POST', url: '/v1/auth/token', payload: payload as object });
}

function sessionIdOf(result: LoginResult): string {
  return String(decodeJwt(result.session.accessToken).sid);
}

const me = (ctx: TestContext, accessToken: string) =>
  ctx.inject({ method: 'GET', url: '/v1/user', headers: { accesstoken: accessToken } });

forEachEngine('auth refresh (first party: POST /v1/auth/token)', (ctx) => {
  it('replays the real client: the same refresh token at 0 s, 11 s and after the access token expired, 200 each time', async () => {
    const org = await createTestOrg(ctx());
    const cached = await login(ctx(), org.admin);
    const body = { accessToken: cached.session.accessToken, refreshToken: cached.session.refreshToken };
    for (const wait of [0, 11_000, 3_600_000 + 60_000, 30 * 60_000]) {
      ctx().clock.advance(wait);
      if (wait > 3_600_000) {
        // The cached access token (sent along, as the real client does) has expired by now.
        const stale = await me(ctx(), cached.session.accessToken);
        assert.equal(stale.statusCode, 401);
        assert.match(json(stale).message, /expired/);
      }
      const res = await refresh(ctx(), body);
      assert.equal(res.statusCode, 200, `after ${wait} ms: ${res.body}`);
      const next = json<LoginResult>(res);
      assert.equal(next.session.refreshToken, cached.session.refreshToken, 'the same refresh token is returned');
      assert.equal(sessionIdOf(next), sessionIdOf(cached), 'same session');
      assert.equal(next.session.expireEpoch, Math.floor(ctx().clock.now() / 1000) * 1000 + 3_600_000);
      assert.equal((await me(ctx(), next.session.accessToken)).statusCode, 200);
    }
  });

  it('refreshes with {refreshToken}, {accessToken, refreshToken}, {session: {...}} and the whole previous response', async () => {
    const org = await createTestOrg(ctx());
    const first = await login(ctx(), org.admin);
    const shapes = [
      (r: LoginResult) => ({ refreshToken: r.session.refreshToken }),
      (r: LoginResult) => ({ accessToken: r.session.accessToken, refreshToken: r.session.refreshToken }),
      (r: LoginResult) => ({ session: { accessToken: r.session.accessToken, refreshToken: r.session.refreshToken } }),
      (r: LoginResult) => ({ session: { refreshToken: r.session.refreshToken } }),
      (r: LoginResult) => r,
    ];
    let current = first;
    for (const shape of shapes) {
      ctx().clock.advance(60_000);
      const res = await refresh(ctx(), shape(current));
      assert.equal(res.statusCode, 200, res.body);
      const next = json<LoginResult>(res);
      assert.equal(next.session.refreshToken, first.session.refreshToken);
      assert.notEqual(next.session.accessToken, current.session.accessToken);
      assert.equal(next.password, '');
      assert.equal(next.username, org.admin.username);
      assert.equal(sessionIdOf(next), sessionIdOf(first));
      current = next;
    }
  });

  it('the refresh token lasts 30 days from sign-in, however often it is used', async () => {
    const org = await createTestOrg(ctx());
    const first = await login(ctx(), org.admin);
    for (let day = 0; day < 29; day++) {
      ctx().clock.advance(DAY);
      const res = await refresh(ctx(), first);
      assert.equal(res.statusCode, 200, `day ${day + 1}: ${res.body}`);
    }
    ctx().clock.advance(DAY - 1000);
    const last = await refresh(ctx(), first);
    assert.equal(last.statusCode, 200, last.body);
    assert.ok(json(last).session.expireEpoch <= ctx().clock.now() + 1000, 'the last access token ends with the family');
    ctx().clock.advance(1000);
    assert.equal((await refresh(ctx(), first)).statusCode, 401);
    const fresh = await ctx().inject({
      method: 'POST',
      url: '/v1/auth/token',
      payload: { username: org.admin.username, password: org.admin.password },
    });
    assert.equal(fresh.statusCode, 200, 'a new login works');
  });

  it('ends with DELETE /v1/auth/token, with "sign out everywhere", and for a disabled user', async () => {
    const org = await createTestOrg(ctx());
    const a = await login(ctx(), org.admin);
    assert.equal(
      (await ctx().inject({ method: 'DELETE', url: '/v1/auth/token', headers: { accesstoken: a.session.accessToken } }))
        .statusCode,
      200,
    );
    assert.equal((await refresh(ctx(), a)).statusCode, 401);
    assert.equal((await refresh(ctx(), { refreshToken: a.session.refreshToken })).statusCode, 401);
    const b = await login(ctx(), org.admin);
    assert.equal(
      (
        await ctx().inject({
          method: 'DELETE',
          url: '/v1/auth/sessions',
          headers: { accesstoken: b.session.accessToken },
        })
      ).statusCode,
      200,
    );
    assert.equal((await refresh(ctx(), { refreshToken: b.session.refreshToken })).statusCode, 401);
    const c = await login(ctx(), org.admin);
    await ctx().deps.db.updateTable('users').set({ status: 'disabled' }).where('id', '=', org.admin.userId).execute();
    assert.equal((await refresh(ctx(), { refreshToken: c.session.refreshToken })).statusCode, 401);
    await ctx().deps.db.updateTable('users').set({ status: 'enabled' }).where('id', '=', org.admin.userId).execute();
    assert.equal(
      (await refresh(ctx(), { refreshToken: c.session.refreshToken })).statusCode,
      401,
      'stays ended after re-enabling',
    );
  });

  it('200 concurrent refreshes of one token all succeed with the same token', async () => {
    const org = await createTestOrg(ctx());
    const first = await login(ctx(), org.admin);
    const responses = await Promise.all(Array.from({ length: 200 }, () => refresh(ctx(), first)));
    assert.deepEqual(
      [...new Set(responses.map((r) => r.statusCode))],
      [200],
      responses.find((r) => r.statusCode !== 200)?.body,
    );
    assert.deepEqual([...new Set(responses.map((r) => json(r).session.refreshToken))], [first.session.refreshToken]);
    const rows = await ctx()
      .deps.db.selectFrom('auth_refresh_tokens')
      .selectAll()
      .where('session_id', '=', sessionIdOf(first))
      .execute();
    assert.equal(rows.length, 1);
  });

  it('refuses unknown refresh tokens, and access tokens of another session', async () => {
    const org = await createTestOrg(ctx());
    const one = await login(ctx(), org.admin);
    const two = await login(ctx(), org.admin);
    assert.equal(
      (await refresh(ctx(), { accessToken: one.session.accessToken, refreshToken: 'rt_unknown' })).statusCode,
      401,
    );
    assert.equal((await refresh(ctx(), { refreshToken: 'rt_unknown' })).statusCode, 401);
    assert.equal(
      (await refresh(ctx(), { accessToken: 'garbage', refreshToken: one.session.refreshToken })).statusCode,
      401,
    );
    assert.equal(
      (await refresh(ctx(), { accessToken: two.session.accessToken, refreshToken: one.session.refreshToken }))
        .statusCode,
      401,
    );
    assert.equal((await refresh(ctx(), one)).statusCode, 200, 'the refused attempts did not harm the token');
  });

  it("an OAuth client's refresh token is not accepted here", async () => {
    const org = await createTestOrg(ctx());
    const { refreshToken } = await oauthSession(ctx(), org);
    assert.equal((await refresh(ctx(), { refreshToken })).statusCode, 401);
  });
});

async function registerPublicClient(ctx: TestContext, org: TestOrg): Promise<string> {
  const res = await ctx.inject({
    method: 'POST',
    url: '/v1/oauth2/clients',
    headers: org.admin.headers,
    payload: { name: 'Rotating', redirectUris: ['http://127.0.0.1:9/cb'], confidential: false },
  });
  assert.equal(res.statusCode, 201, res.body);
  return json(res).clientId;
}

/** An OAuth session of the org's administrator, opened as the code exchange opens it. */
async function oauthSession(
  ctx: TestContext,
  org: TestOrg,
  clientId?: string,
): Promise<{ clientId: string; refreshToken: string; sessionId: string }> {
  const id = clientId ?? (await registerPublicClient(ctx, org));
  const subject = (await findTokenSubject(ctx.deps.db, org.admin.userId))!;
  const { session, refreshToken } = await ctx.deps.db.transaction().execute((trx) =>
    insertSessionRows(ctx.deps, trx, subject, {
      kind: 'oauth',
      clientId: id,
      scope: 'openid',
      meta: { ip: '127.0.0.1' },
      refreshable: true,
    }),
  );
  return { clientId: id, refreshToken, sessionId: session.id };
}

function oauthRefresh(ctx: TestContext, clientId: string, refreshToken: string) {
  return ctx.inject({
    method: 'POST',
    url: '/v1/oauth2/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: clientId,
    }).toString(),
  });
}

forEachEngine('auth refresh (OAuth clients rotate: POST /v1/oauth2/token)', (ctx) => {
  it('each refresh rotates the token', async () => {
    const org = await createTestOrg(ctx());
    const { clientId, refreshToken } = await oauthSession(ctx(), org);
    const res = await oauthRefresh(ctx(), clientId, refreshToken);
    assert.equal(res.statusCode, 200, res.body);
    assert.notEqual(json(res).refresh_token, refreshToken);
  });

  it('a retry of the just-rotated token inside the grace window gets the same successor', async () => {
    const org = await createTestOrg(ctx());
    const { clientId, refreshToken } = await oauthSession(ctx(), org);
    const a = json(await oauthRefresh(ctx(), clientId, refreshToken));
    ctx().clock.advance(9_000);
    const b = await oauthRefresh(ctx(), clientId, refreshToken);
    assert.equal(b.statusCode, 200, b.body);
    assert.equal(json(b).refresh_token, a.refresh_token);
    assert.equal((await oauthRefresh(ctx(), clientId, a.refresh_token)).statusCode, 200, 'the successor still works');
  });

  it('reuse of a rotated token after the grace window revokes the whole family', async () => {
    const org = await createTestOrg(ctx());
    const { clientId, refreshToken, sessionId } = await oauthSession(ctx(), org);
    const second = json(await oauthRefresh(ctx(), clientId, refreshToken));
    ctx().clock.advance(11_000);
    assert.equal((await oauthRefresh(ctx(), clientId, refreshToken)).statusCode, 400);
    assert.equal(
      (await oauthRefresh(ctx(), clientId, second.refresh_token)).statusCode,
      400,
      'the legitimate successor is dead too',
    );
    const row = await ctx()
      .deps.db.selectFrom('auth_sessions')
      .select('revoked_reason')
      .where('id', '=', sessionId)
      .executeTakeFirstOrThrow();
    assert.equal(row.revoked_reason, 'refresh_token_reuse');
  });

  it('replaying a grandparent token is reuse even inside the window', async () => {
    const org = await createTestOrg(ctx());
    const { clientId, refreshToken } = await oauthSession(ctx(), org);
    const second = json(await oauthRefresh(ctx(), clientId, refreshToken));
    const third = json(await oauthRefresh(ctx(), clientId, second.refresh_token));
    assert.equal((await oauthRefresh(ctx(), clientId, refreshToken)).statusCode, 400);
    assert.equal((await oauthRefresh(ctx(), clientId, third.refresh_token)).statusCode, 400);
  });

  it('100 concurrent refreshes of one token yield exactly one successor', async () => {
    const org = await createTestOrg(ctx());
    const { clientId, refreshToken, sessionId } = await oauthSession(ctx(), org);
    const responses = await Promise.all(Array.from({ length: 100 }, () => oauthRefresh(ctx(), clientId, refreshToken)));
    assert.deepEqual(
      [...new Set(responses.map((r) => r.statusCode))],
      [200],
      responses.find((r) => r.statusCode !== 200)?.body,
    );
    assert.equal(new Set(responses.map((r) => json(r).refresh_token)).size, 1);
    const rows = await ctx()
      .deps.db.selectFrom('auth_refresh_tokens')
      .selectAll()
      .where('session_id', '=', sessionId)
      .orderBy('generation')
      .execute();
    assert.equal(rows.length, 2);
    assert.equal(rows[1]!.used_at, null);
    assert.equal(rows[0]!.successor_hash, rows[1]!.token_hash);
  });
});

forEachEngine(
  'auth refresh without grace',
  (ctx) => {
    it('with TESSERA_REFRESH_GRACE_SECONDS=0 any OAuth replay revokes the family', async () => {
      const org = await createTestOrg(ctx());
      const { clientId, refreshToken } = await oauthSession(ctx(), org);
      const second = await oauthRefresh(ctx(), clientId, refreshToken);
      assert.equal(second.statusCode, 200);
      assert.equal((await oauthRefresh(ctx(), clientId, refreshToken)).statusCode, 400);
      assert.equal((await oauthRefresh(ctx(), clientId, json(second).refresh_token)).statusCode, 400);
    });
  },
  { env: { TESSERA_REFRESH_GRACE_SECONDS: '0' } },
);
