import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine, json, type TestContext } from '../../../../test/helpers/context.ts';
import { createTestOrg, createTestUser } from '../../../../test/helpers/factories.ts';
import {
  COMMON_PASSWORD_COUNT,
  dummyPasswordHash,
  isCommonPassword,
  passwordProblem,
  passwordQueueDepth,
  verifyPassword,
} from '../../identity/index.ts';

const attempt = (ctx: TestContext, username: string, password: string, ip = '127.0.0.1') =>
  ctx.app.inject({ method: 'POST', url: '/v1/auth/token', payload: { username, password }, remoteAddress: ip });

forEachEngine('auth login throttling', (ctx) => {
  it('throttles an account after repeated failures with 429 + Retry-After, then lets it in again', async () => {
    const org = await createTestOrg(ctx());
    const user = await createTestUser(ctx(), org);
    for (let i = 0; i < 5; i++) assert.equal((await attempt(ctx(), user.username, 'wrong-password!')).statusCode, 401);
    assert.equal(
      (await attempt(ctx(), user.username, 'wrong-password!')).statusCode,
      401,
      'the 6th failure is still checked, then locks',
    );
    const locked = await attempt(ctx(), user.username, user.password);
    assert.equal(locked.statusCode, 429, 'even the right password waits');
    assert.equal(locked.headers['retry-after'], '1');
    assert.equal(json(locked).code, 'rate_limited');
    ctx().clock.advance(1000);
    assert.equal((await attempt(ctx(), user.username, 'wrong-password!')).statusCode, 401);
    const longer = await attempt(ctx(), user.username, user.password);
    assert.equal(longer.statusCode, 429);
    assert.equal(longer.headers['retry-after'], '2', 'the delay grows');
    ctx().clock.advance(2000);
    assert.equal((await attempt(ctx(), user.username, user.password)).statusCode, 200, 'no permanent lockout');
    assert.equal(
      (await attempt(ctx(), user.username, 'wrong-password!')).statusCode,
      401,
      'a success resets the account counter',
    );
  });

  it('parallel wrong passwords are reserved atomically before hashing: 61 at once get 6 checked (issue 8, item 5)', async () => {
    const org = await createTestOrg(ctx());
    const user = await createTestUser(ctx(), org);
    const results = await Promise.all(
      Array.from({ length: 61 }, () => attempt(ctx(), user.username, 'wrong-password!', '10.61.0.1')),
    );
    const checked = results.filter((r) => r.statusCode === 401).length;
    const throttled = results.filter((r) => r.statusCode === 429).length;
    assert.equal(checked, 6, `5 free failures and the one that locks; got ${checked} checked`);
    assert.equal(throttled, 55);
    const row = await ctx()
      .deps.db.selectFrom('auth_login_failures')
      .selectAll()
      .where('key', '=', `account:${user.username}`)
      .executeTakeFirstOrThrow();
    assert.equal(row.failures, 6);
  });

  it('unknown usernames are throttled exactly like real ones', async () => {
    for (let i = 0; i < 6; i++)
      assert.equal((await attempt(ctx(), 'ghost-user-x', 'wrong-password!', '10.0.0.9')).statusCode, 401);
    assert.equal((await attempt(ctx(), 'ghost-user-x', 'wrong-password!', '10.0.0.9')).statusCode, 429);
  });

  it('throttles a client IP that sprays many accounts, without touching other IPs', async () => {
    const org = await createTestOrg(ctx());
    const user = await createTestUser(ctx(), org);
    ctx().clock.advance(16 * 60_000);
    for (let i = 0; i < 51; i++)
      assert.equal((await attempt(ctx(), `spray-${i}`, 'wrong-password!', '10.1.2.3')).statusCode, 401);
    const blocked = await attempt(ctx(), user.username, user.password, '10.1.2.3');
    assert.equal(blocked.statusCode, 429);
    assert.ok(Number(blocked.headers['retry-after']) >= 1);
    assert.equal((await attempt(ctx(), user.username, user.password, '10.9.9.9')).statusCode, 200);
  });

  it('answers 503 + Retry-After at once when too many hashes are already queued', async () => {
    const org = await createTestOrg(ctx());
    const hash = await dummyPasswordHash();
    // Fill the bounded hash pool's queue far beyond the cap; it drains about two hashes per 10 ms.
    const backlog = Array.from({ length: 120 }, () => verifyPassword(hash, 'x'));
    assert.ok(passwordQueueDepth() >= 110);
    const res = await attempt(ctx(), org.admin.username, org.admin.password, '10.7.7.7');
    assert.equal(res.statusCode, 503, res.body);
    assert.equal(res.headers['retry-after'], '1');
    await Promise.all(backlog);
    assert.equal((await attempt(ctx(), org.admin.username, org.admin.password, '10.7.7.7')).statusCode, 200);
  });

  it('the counters are shared by instances on the same database', async () => {
    const org = await createTestOrg(ctx());
    const user = await createTestUser(ctx(), org);
    const second = await ctx().secondInstance();
    for (let i = 0; i < 6; i++)
      assert.equal((await attempt(ctx(), user.username, 'wrong-password!', '10.3.3.3')).statusCode, 401);
    const res = await second.app.inject({
      method: 'POST',
      url: '/v1/auth/token',
      payload: { username: user.username, password: user.password },
      remoteAddress: '10.4.4.4',
    });
    assert.equal(res.statusCode, 429);
  });
});

it('the password policy refuses a shipped list of common passwords', () => {
  assert.ok(COMMON_PASSWORD_COUNT >= 3000, `only ${COMMON_PASSWORD_COUNT} common passwords`);
  for (const p of [
    'Password123',
    'qwerty123!',
    'Welcome2024',
    '1q2w3e4r5t',
    'Dragon123',
    '11111111',
    'zaq12wsx',
    'Football1',
  ]) {
    assert.ok(isCommonPassword(p), p);
    assert.equal(passwordProblem(p), 'is too common');
  }
  for (const p of ['correct horse battery staple', 'Tr0ub4dor&3-x', 'ünïcödé pässphrase ✓'])
    assert.equal(passwordProblem(p), null, p);
  assert.equal(passwordProblem('short'), 'must be at least 8 characters long');
  assert.equal(passwordProblem('x'.repeat(1025)), 'must be at most 1024 characters long');
});
