import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine, json, type TestContext } from '../../../../test/helpers/context.ts';
import { login } from '../../../../test/helpers/auth.ts';
import { createTestOrg, createTestUser, type TestOrg } from '../../../../test/helpers/factories.ts';
import { securitySuite } from '../../../../test/helpers/security.ts';

// Issue 27, item 1: invite a user with a one-time set-password link.

const invite = (ctx: TestContext, org: TestOrg, userId: string, headers = org.admin.headers) =>
  ctx.inject({ method: 'POST', url: `/v1/user/${userId}/invitation`, headers });
const accept = (ctx: TestContext, token: string, password: string) =>
  ctx.inject({ method: 'POST', url: '/v1/user/invitation/accept', payload: { token, password } });
const signIn = (ctx: TestContext, username: string, password: string) =>
  ctx.inject({ method: 'POST', url: '/v1/auth/token', payload: { username, password } });

/** A local user made through the API without a password: they cannot sign in until invited. */
async function passwordless(ctx: TestContext, org: TestOrg, username: string): Promise<string> {
  const created = await ctx.inject({
    method: 'POST',
    url: '/v1/user',
    headers: org.admin.headers,
    payload: {
      firstName: 'Ivy',
      lastName: 'Invited',
      friendlyName: 'Ivy',
      email: `${username}@example.test`,
      username,
      accountType: 'local',
      userRoleId: org.roles.viewer,
      groups: [org.groups.everyone],
    },
  });
  assert.equal(created.statusCode, 200, created.body);
  return json(created).userId;
}

forEachEngine('invitations', (ctx) => {
  it('a user created without a password accepts an invitation once, then signs in with the password chosen', async () => {
    const org = await createTestOrg(ctx());
    const userId = await passwordless(ctx(), org, 'ivy');
    assert.equal((await signIn(ctx(), 'ivy', 'Anything-at-all-1')).statusCode, 401);
    const res = await invite(ctx(), org, userId);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['cache-control'], 'no-store');
    const body = json(res);
    const url = new URL(body.url);
    assert.equal(url.pathname, '/app/set-password');
    assert.equal(url.searchParams.get('token'), body.token);
    assert.equal(Date.parse(body.expiresAt), ctx().clock.now() + 7 * 24 * 3600 * 1000);
    // Only the token's hash is kept.
    const row = await ctx().deps.db.selectFrom('user_invitations').selectAll().executeTakeFirstOrThrow();
    assert.notEqual(row.token_hash, body.token);
    assert.ok(!JSON.stringify(row).includes(body.token));

    // The password rules apply, naming the field; the token is not spent by a refused password.
    const weak = await accept(ctx(), body.token, 'password');
    assert.equal(weak.statusCode, 400);
    assert.equal(json(weak).details[0].field, 'body.password');
    const ok = await accept(ctx(), body.token, 'Ivy-chosen-pass-1');
    assert.equal(ok.statusCode, 200, ok.body);
    assert.deepEqual(json(ok).username, 'ivy');
    assert.equal((await signIn(ctx(), 'ivy', 'Ivy-chosen-pass-1')).statusCode, 200);

    // Single use.
    const again = await accept(ctx(), body.token, 'Ivy-another-pass-2');
    assert.equal(again.statusCode, 400);
    assert.equal(json(again).details[0].field, 'body.token');
    assert.equal((await signIn(ctx(), 'ivy', 'Ivy-chosen-pass-1')).statusCode, 200);
    // Audited, without the token.
    const audit = await ctx()
      .deps.db.selectFrom('audit_log')
      .select(['action', 'actor_id'])
      .where('target_id', '=', userId)
      .execute();
    assert.ok(audit.some((a) => a.action === 'user.invited' && a.actor_id === org.admin.userId));
    assert.ok(audit.some((a) => a.action === 'user.invitation_accepted' && a.actor_id === userId));
  });

  it('an expired invitation is refused with 410 naming the token; a new invitation replaces the old one', async () => {
    const org = await createTestOrg(ctx());
    const user = await createTestUser(ctx(), org);
    const first = json(await invite(ctx(), org, user.userId));
    const second = json(await invite(ctx(), org, user.userId));
    const replaced = await accept(ctx(), first.token, 'Replaced-pass-word-1');
    assert.equal(replaced.statusCode, 400);
    assert.equal(json(replaced).details[0].field, 'body.token');
    ctx().clock.advance(7 * 24 * 3600 * 1000);
    const expired = await accept(ctx(), second.token, 'Expired-pass-word-1');
    assert.equal(expired.statusCode, 410, expired.body);
    assert.equal(json(expired).details[0].field, 'body.token');
    // The old password still works.
    assert.equal((await signIn(ctx(), user.username, user.password)).statusCode, 200);
  });

  it('accepting ends the sessions the user had', async () => {
    const org = await createTestOrg(ctx());
    const user = await createTestUser(ctx(), org);
    const session = await login(ctx(), user);
    const { token } = json(await invite(ctx(), org, user.userId));
    assert.equal((await accept(ctx(), token, 'Fresh-pass-word-9')).statusCode, 200);
    const me = await ctx().inject({
      method: 'GET',
      url: '/v1/user',
      headers: { accesstoken: session.session.accessToken },
    });
    assert.equal(me.statusCode, 401);
  });

  it('refuses a malformed token, yourself, a disabled user and a federated one', async () => {
    const org = await createTestOrg(ctx());
    for (const token of ['x', 'not-a-token-at-all'.repeat(5)]) {
      const res = await accept(ctx(), token, 'Some-pass-word-1');
      assert.equal(res.statusCode, 400);
      assert.equal(json(res).details[0].field, 'body.token');
    }
    const missing = await ctx().inject({ method: 'POST', url: '/v1/user/invitation/accept', payload: {} });
    assert.equal(missing.statusCode, 400);
    assert.equal((await invite(ctx(), org, org.admin.userId)).statusCode, 409);
    const off = await createTestUser(ctx(), org, { status: 'disabled' });
    assert.equal((await invite(ctx(), org, off.userId)).statusCode, 409);
  });

  it("another organization's user is 404; a caller without User Management gets 403", async () => {
    const org = await createTestOrg(ctx());
    const other = await createTestOrg(ctx());
    const theirs = await createTestUser(ctx(), other);
    assert.equal((await invite(ctx(), org, theirs.userId)).statusCode, 404);
    const plain = await createTestUser(ctx(), org, { privileges: ['download'] });
    const target = await createTestUser(ctx(), org);
    assert.equal((await invite(ctx(), org, target.userId, plain.headers)).statusCode, 403);
  });

  securitySuite(ctx, '/v1/user/{id}/invitation', {
    method: 'POST',
    resource: true,
    privileges: ['user_management'],
    credentials: true,
    prepare: async (c, org) => ({ url: `/v1/user/${(await createTestUser(c, org)).userId}/invitation` }),
    ceiling: {
      privileges: ['user_management'],
      prepare: (_c, org) => ({ url: `/v1/user/${org.admin.userId}/invitation` }),
    },
  });
});
