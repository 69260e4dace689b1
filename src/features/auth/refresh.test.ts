import assert from 'node:assert/strict';
import { it } from 'node:test';
import { decodeJwt } from 'jose';
import { forEachEngine, json, type TestContext } from '../../../test/helpers/context.ts';
import { login, type LoginResult } from '../../../test/helpers/auth.ts';
import { createTestOrg } from '../../../test/helpers/factories.ts';

const DAY = 24 * 3600_000;

async function refresh(ctx: TestContext, payload: unknown) {
  return ctx.inject({ method: 'POST', url: '/v1/auth/token', payload: payload as object });
}

function sessionIdOf(result: LoginResult): string {
  return String(decodeJwt(result.session.accessToken).sid);
}

forEachEngine('auth refresh', (ctx) => {
  it('refreshes with {accessToken, refreshToken}, {session: {...}} and the whole previous response', async () => {
    const org = await createTestOrg(ctx());
    let current = await login(ctx(), org.admin);
    const shapes = [
      (r: LoginResult) => ({ accessToken: r.session.accessToken, refreshToken: r.session.refreshToken }),
      (r: LoginResult) => ({ session: { accessToken: r.session.accessToken, refreshToken: r.session.refreshToken } }),
      (r: LoginResult) => r,
    ];
    for (const shape of shapes) {
      ctx().clock.advance(60_000);
      const res = await refresh(ctx(), shape(current));
      assert.equal(res.statusCode, 200, res.body);
      const next = json<LoginResult>(res);
      assert.notEqual(next.session.refreshToken, current.session.refreshToken, 'rotated');
      assert.notEqual(next.session.accessToken, current.session.accessToken);
      assert.equal(next.password, '');
      assert.equal(next.username, org.admin.username);
      assert.equal(next.session.expireEpoch, Math.floor(ctx().clock.now() / 1000) * 1000 + 3_600_000);
      assert.equal(sessionIdOf(next), sessionIdOf(current), 'same session');
      assert.equal((await ctx().inject({ method: 'GET', url: '/v1/user', headers: { accesstoken: next.session.accessToken } })).statusCode, 200);
      current = next;
    }
  });

  it('refreshes after the access token has expired', async () => {
    const org = await createTestOrg(ctx());
    const first = await login(ctx(), org.admin);
    ctx().clock.advance(5 * 3600_000);
    assert.equal((await ctx().inject({ method: 'GET', url: '/v1/user', headers: { accesstoken: first.session.accessToken } })).statusCode, 401);
    const res = await refresh(ctx(), first);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((await ctx().inject({ method: 'GET', url: '/v1/user', headers: { accesstoken: json(res).session.accessToken } })).statusCode, 200);
  });

  it('the refresh family ends 30 days after the original login, however often it is refreshed', async () => {
    const org = await createTestOrg(ctx());
    let current = await login(ctx(), org.admin);
    for (let day = 0; day < 29; day++) {
      ctx().clock.advance(DAY);
      const res = await refresh(ctx(), current);
      assert.equal(res.statusCode, 200, `day ${day + 1}: ${res.body}`);
      current = json(res);
    }
    ctx().clock.advance(DAY - 1000);
    const last = await refresh(ctx(), current);
    assert.equal(last.statusCode, 200, last.body);
    assert.ok(json(last).session.expireEpoch <= ctx().clock.now() + 1000, 'the last access token ends with the family');
    ctx().clock.advance(1000);
    assert.equal((await refresh(ctx(), json(last))).statusCode, 401);
    const fresh = await ctx().inject({ method: 'POST', url: '/v1/auth/token', payload: { username: org.admin.username, password: org.admin.password } });
    assert.equal(fresh.statusCode, 200, 'a new login works');
  });

  it('a retry of the just-rotated token inside the grace window gets the same successor', async () => {
    const org = await createTestOrg(ctx());
    const first = await login(ctx(), org.admin);
    const a = json<LoginResult>(await refresh(ctx(), first));
    ctx().clock.advance(9_000);
    const b = await refresh(ctx(), first);
    assert.equal(b.statusCode, 200, b.body);
    assert.equal(json(b).session.refreshToken, a.session.refreshToken);
    const next = await refresh(ctx(), a);
    assert.equal(next.statusCode, 200, 'the successor still works');
  });

  it('reuse of a rotated token after the grace window revokes the whole family', async () => {
    const org = await createTestOrg(ctx());
    const first = await login(ctx(), org.admin);
    const second = json<LoginResult>(await refresh(ctx(), first));
    ctx().clock.advance(11_000);
    const replay = await refresh(ctx(), first);
    assert.equal(replay.statusCode, 401);
    assert.equal((await refresh(ctx(), second)).statusCode, 401, 'the legitimate successor is dead too');
    assert.equal((await ctx().inject({ method: 'GET', url: '/v1/user', headers: { accesstoken: second.session.accessToken } })).statusCode, 401);
    const row = await ctx().deps.db.selectFrom('auth_sessions').select('revoked_reason').where('id', '=', sessionIdOf(first)).executeTakeFirstOrThrow();
    assert.equal(row.revoked_reason, 'refresh_token_reuse');
  });

  it('replaying a grandparent token is reuse even inside the window', async () => {
    const org = await createTestOrg(ctx());
    const first = await login(ctx(), org.admin);
    const second = json<LoginResult>(await refresh(ctx(), first));
    const third = json<LoginResult>(await refresh(ctx(), second));
    assert.equal((await refresh(ctx(), first)).statusCode, 401);
    assert.equal((await refresh(ctx(), third)).statusCode, 401);
  });

  it('200 concurrent refreshes of one token yield exactly one successor', async () => {
    const org = await createTestOrg(ctx());
    const first = await login(ctx(), org.admin);
    const responses = await Promise.all(Array.from({ length: 200 }, () => refresh(ctx(), first)));
    const statuses = new Set(responses.map((r) => r.statusCode));
    assert.deepEqual([...statuses], [200], responses.find((r) => r.statusCode !== 200)?.body);
    const successors = new Set(responses.map((r) => json(r).session.refreshToken));
    assert.equal(successors.size, 1);
    const rows = await ctx().deps.db.selectFrom('auth_refresh_tokens').selectAll().where('session_id', '=', sessionIdOf(first)).orderBy('generation').execute();
    assert.equal(rows.length, 2);
    assert.equal(rows[1]!.used_at, null);
    assert.equal(rows[0]!.successor_hash, rows[1]!.token_hash);
    const next = await refresh(ctx(), json(responses[0]!));
    assert.equal(next.statusCode, 200);
  });

  it('refuses unknown refresh tokens, and access tokens of another session', async () => {
    const org = await createTestOrg(ctx());
    const one = await login(ctx(), org.admin);
    const two = await login(ctx(), org.admin);
    assert.equal((await refresh(ctx(), { accessToken: one.session.accessToken, refreshToken: 'rt_unknown' })).statusCode, 401);
    assert.equal((await refresh(ctx(), { accessToken: 'garbage', refreshToken: one.session.refreshToken })).statusCode, 401);
    assert.equal((await refresh(ctx(), { accessToken: two.session.accessToken, refreshToken: one.session.refreshToken })).statusCode, 401);
    assert.equal((await refresh(ctx(), one)).statusCode, 200, 'the refused attempts did not consume the token');
  });
});

forEachEngine('auth refresh without grace', (ctx) => {
  it('with TESSERA_REFRESH_GRACE_SECONDS=0 any replay revokes the family', async () => {
    const org = await createTestOrg(ctx());
    const first = await login(ctx(), org.admin);
    const second = await refresh(ctx(), first);
    assert.equal(second.statusCode, 200);
    assert.equal((await refresh(ctx(), first)).statusCode, 401);
    assert.equal((await refresh(ctx(), json(second))).statusCode, 401);
  });
}, { env: { TESSERA_REFRESH_GRACE_SECONDS: '0' } });
