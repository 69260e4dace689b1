// Issue 14, item 1: resolved principals (tokens and API keys) are kept in memory, and every change
// that can alter one is honoured by the very next request on this instance. Each case warms the
// cache (and checks the second request really was served from it), makes the change through the
// API, and checks the next request at once — on SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { FastifyRequest } from 'fastify';
import { decodeJwt } from 'jose';
import { ALL_PRIVILEGES } from '../src/core/authz/catalog.ts';
import { revisionFeed } from '../src/core/db/revision.ts';
import { tokenResolver } from '../src/features/auth/index.ts';
import { flushApiKeyUsage } from '../src/features/api-keys/index.ts';
import { forEachEngine, json, type TestContext } from './helpers/context.ts';
import { createTestOrg, createTestUser, type TestOrg, type TestUser } from './helpers/factories.ts';
import { login } from './helpers/auth.ts';

type Ctx = () => TestContext;

const tokenCache = (ctx: Ctx) => ctx().deps.runtime.auth.principals;
const keyCache = (ctx: Ctx) => ctx().deps.runtime.apiKeys.principals;

async function status(
  ctx: Ctx,
  url: string,
  headers: Record<string, string>,
  method: 'GET' | 'POST' = 'GET',
): Promise<number> {
  return (await ctx().inject({ method, url, headers, ...(method === 'POST' ? { payload: {} } : {}) })).statusCode;
}

/** Two requests; the second must come from the principal cache (a hit, no resolution). */
async function warm(ctx: Ctx, headers: Record<string, string>, url = '/v1/user', expected = 200): Promise<void> {
  const cache = 'x-api-key' in headers ? keyCache(ctx) : tokenCache(ctx);
  assert.equal(await status(ctx, url, headers), expected);
  const hits = cache.stats.hits;
  assert.equal(await status(ctx, url, headers), expected);
  assert.equal(cache.stats.hits, hits + 1, 'the second request was served from the cache');
}

async function tokenOf(ctx: Ctx, user: Pick<TestUser, 'username' | 'password'>) {
  const result = await login(ctx(), user);
  return { result, headers: { accesstoken: result.session.accessToken } };
}

async function keyOf(ctx: Ctx, headers: Record<string, string>, roleId: string) {
  const res = await ctx().inject({
    method: 'POST',
    url: '/api/v1/api-key/create-api-key',
    headers,
    payload: { name: 'cache', roleId },
  });
  assert.equal(res.statusCode, 200, res.body);
  const body = json<{ id: string; key: string }>(res);
  return { id: body.id, headers: { 'x-api-key': body.key } };
}

/** A user whose own role holds `privileges`, signed in, with an API key of that same role. */
async function staff(ctx: Ctx, org: TestOrg, privileges = ['user_management', 'api_key_management'] as const) {
  const user = await createTestUser(ctx(), org, { privileges: [...privileges] });
  const token = await tokenOf(ctx, user);
  const me = json<{ roleId: string }>(await ctx().inject({ method: 'GET', url: '/v1/user', headers: token.headers }));
  const key = await keyOf(ctx, token.headers, me.roleId);
  return { user, token, key, roleId: me.roleId };
}

const principalFor = (ctx: Ctx, headers: Record<string, string>) =>
  tokenResolver(ctx().deps)({ headers } as unknown as FastifyRequest);

forEachEngine('principal cache: every change is honoured at once on this instance', (ctx) => {
  it('a credential is resolved once, then served from memory until it expires', async () => {
    const org = await createTestOrg(ctx());
    const { headers } = await tokenOf(ctx, org.admin);
    await warm(ctx, headers);
    const { result } = await tokenOf(ctx, org.admin);
    const exp = decodeJwt(result.session.accessToken).exp! * 1000;
    const other = { accesstoken: result.session.accessToken };
    await warm(ctx, other);
    // The cached entry never outlives the token.
    ctx().clock.set(exp - 1);
    assert.equal(await status(ctx, '/v1/user', other), 200);
    ctx().clock.set(exp);
    assert.equal(await status(ctx, '/v1/user', other), 401);
  });

  it('sign-out (DELETE /v1/auth/token) and sign-out everywhere', async () => {
    const org = await createTestOrg(ctx());
    const one = await tokenOf(ctx, org.admin);
    await warm(ctx, one.headers);
    assert.equal(
      (await ctx().inject({ method: 'DELETE', url: '/v1/auth/token', headers: one.headers, payload: one.result }))
        .statusCode,
      200,
    );
    assert.equal(await status(ctx, '/v1/user', one.headers), 401);

    const a = await tokenOf(ctx, org.admin);
    const b = await tokenOf(ctx, org.admin);
    await warm(ctx, a.headers);
    await warm(ctx, b.headers);
    assert.equal(
      (await ctx().inject({ method: 'DELETE', url: '/v1/auth/sessions', headers: a.headers })).statusCode,
      200,
    );
    assert.equal(await status(ctx, '/v1/user', a.headers), 401);
    assert.equal(await status(ctx, '/v1/user', b.headers), 401);
  });

  it('ending one session (DELETE /v1/auth/sessions/{id})', async () => {
    const org = await createTestOrg(ctx());
    const a = await tokenOf(ctx, org.admin);
    const b = await tokenOf(ctx, org.admin);
    await warm(ctx, b.headers);
    const sid = decodeJwt(b.result.session.accessToken).sid as string;
    assert.equal(
      (await ctx().inject({ method: 'DELETE', url: `/v1/auth/sessions/${sid}`, headers: a.headers })).statusCode,
      204,
    );
    assert.equal(await status(ctx, '/v1/user', b.headers), 401);
    assert.equal(await status(ctx, '/v1/user', a.headers), 200);
  });

  it('disabling a user stops their tokens and the keys they created', async () => {
    const org = await createTestOrg(ctx());
    const { user, token, key } = await staff(ctx, org);
    await warm(ctx, token.headers);
    await warm(ctx, key.headers);
    assert.equal(
      (
        await ctx().inject({
          method: 'PATCH',
          url: `/v1/user/${user.userId}`,
          headers: org.admin.headers,
          payload: { status: 'disabled' },
        })
      ).statusCode,
      200,
    );
    assert.equal(await status(ctx, '/v1/user', token.headers), 401);
    assert.equal(await status(ctx, '/v1/user', key.headers), 401);
  });

  it("changing a user's role takes its privileges away from their tokens and keys", async () => {
    const org = await createTestOrg(ctx());
    const { user, token, key } = await staff(ctx, org);
    await warm(ctx, token.headers, '/v1/security/groups');
    await warm(ctx, key.headers, '/v1/security/groups');
    assert.equal(
      (
        await ctx().inject({
          method: 'PATCH',
          url: `/v1/user/${user.userId}`,
          headers: org.admin.headers,
          payload: { userRoleId: org.roles.viewer },
        })
      ).statusCode,
      200,
    );
    assert.equal(await status(ctx, '/v1/security/groups', token.headers), 403);
    // The key's own role still says User Management, but never beyond what its creator now holds.
    assert.equal(await status(ctx, '/v1/security/groups', key.headers), 403);
  });

  it("changing a role's privileges applies to every holder at once", async () => {
    const org = await createTestOrg(ctx());
    const { token, key, roleId } = await staff(ctx, org);
    await warm(ctx, token.headers, '/v1/security/groups');
    await warm(ctx, key.headers, '/v1/security/groups');
    assert.equal(
      (
        await ctx().inject({
          method: 'PATCH',
          url: `/v1/roles/${roleId}`,
          headers: org.admin.headers,
          payload: { privileges: ['API Key Management'] },
        })
      ).statusCode,
      200,
    );
    assert.equal(await status(ctx, '/v1/security/groups', token.headers), 403);
    assert.equal(await status(ctx, '/v1/security/groups', key.headers), 403);
    assert.equal(await status(ctx, '/v1/user', token.headers), 200);
  });

  it('group membership changes (add, remove, group deleted) show in the principal at once', async () => {
    const org = await createTestOrg(ctx());
    const { user, token } = await staff(ctx, org);
    const made = json<{ groupId: string }>(
      await ctx().inject({
        method: 'POST',
        url: '/v1/security/groups',
        headers: org.admin.headers,
        payload: { groupName: 'Editors' },
      }),
    );
    const group = { id: made.groupId };
    await warm(ctx, token.headers);
    assert.ok(!(await principalFor(ctx, token.headers))!.groupIds.includes(group.id));
    assert.equal(
      (
        await ctx().inject({
          method: 'PATCH',
          url: `/v1/user/${user.userId}/add-to-group`,
          headers: org.admin.headers,
          payload: { userGroupId: group.id },
        })
      ).statusCode,
      200,
    );
    assert.ok((await principalFor(ctx, token.headers))!.groupIds.includes(group.id));
    assert.ok(
      json<{ groups: string[] }>(
        await ctx().inject({ method: 'GET', url: '/v1/user', headers: token.headers }),
      ).groups.includes(group.id),
    );
    assert.equal(
      (
        await ctx().inject({
          method: 'PATCH',
          url: `/v1/user/${user.userId}/remove-from-group`,
          headers: org.admin.headers,
          payload: { userGroupId: group.id },
        })
      ).statusCode,
      200,
    );
    assert.ok(!(await principalFor(ctx, token.headers))!.groupIds.includes(group.id));
    assert.ok(
      !json<{ groups: string[] }>(
        await ctx().inject({ method: 'GET', url: '/v1/user', headers: token.headers }),
      ).groups.includes(group.id),
    );
    assert.equal(
      (
        await ctx().inject({
          method: 'PATCH',
          url: `/v1/user/${user.userId}/add-to-group`,
          headers: org.admin.headers,
          payload: { userGroupId: group.id },
        })
      ).statusCode,
      200,
    );
    assert.ok((await principalFor(ctx, token.headers))!.groupIds.includes(group.id));
    assert.equal(
      (await ctx().inject({ method: 'DELETE', url: `/v1/security/groups/${group.id}`, headers: org.admin.headers }))
        .statusCode,
      204,
    );
    assert.ok(!(await principalFor(ctx, token.headers))!.groupIds.includes(group.id));
  });

  it('a security template change drops every cached decision (the next request resolves afresh)', async () => {
    const org = await createTestOrg(ctx());
    const { token, key } = await staff(ctx, org);
    await warm(ctx, token.headers);
    await warm(ctx, key.headers);
    const misses = tokenCache(ctx).stats.misses + keyCache(ctx).stats.misses;
    const created = await ctx().inject({
      method: 'POST',
      url: '/v1/security/template',
      headers: org.admin.headers,
      payload: { templateName: 'Cache', templateDocument: [] },
    });
    assert.equal(created.statusCode, 201, created.body);
    const generation = revisionFeed(ctx().deps.db).generation;
    assert.equal(
      (
        await ctx().inject({
          method: 'PATCH',
          url: `/v1/security/template/${json<{ templateId: string }>(created).templateId}`,
          headers: org.admin.headers,
          payload: { description: 'changed' },
        })
      ).statusCode,
      200,
    );
    assert.ok(
      revisionFeed(ctx().deps.db).generation > generation,
      'the template change moved the generation before the call returned',
    );
    assert.equal(await status(ctx, '/v1/user', token.headers), 200);
    assert.equal(await status(ctx, '/v1/user', key.headers), 200);
    assert.equal(tokenCache(ctx).stats.misses + keyCache(ctx).stats.misses, misses + 2);
  });

  it('revoking an API key stops it at once', async () => {
    const org = await createTestOrg(ctx());
    const { token, key } = await staff(ctx, org);
    await warm(ctx, key.headers);
    assert.equal(
      (
        await ctx().inject({
          method: 'POST',
          url: '/api/v1/api-key/revoke-api-key',
          headers: token.headers,
          payload: { id: key.id },
        })
      ).statusCode,
      200,
    );
    assert.equal(await status(ctx, '/v1/user', key.headers), 401);
  });

  it('a password change (own, or reset by an administrator) ends the other sessions at once', async () => {
    const org = await createTestOrg(ctx());
    const { user, token } = await staff(ctx, org);
    const other = await tokenOf(ctx, user);
    await warm(ctx, token.headers);
    await warm(ctx, other.headers);
    const newPassword = `New-${user.password}-x`;
    const changed = await ctx().inject({
      method: 'PUT',
      url: '/v1/user/password',
      headers: token.headers,
      payload: { currentPassword: user.password, newPassword },
    });
    assert.equal(changed.statusCode, 200, changed.body);
    assert.equal(await status(ctx, '/v1/user', other.headers), 401);
    const again = await tokenOf(ctx, { username: user.username, password: newPassword });
    await warm(ctx, again.headers);
    const reset = await ctx().inject({
      method: 'PUT',
      url: `/v1/user/${user.userId}/password`,
      headers: org.admin.headers,
      payload: { newPassword: `Reset-${newPassword}` },
    });
    assert.equal(reset.statusCode, 200, reset.body);
    assert.equal(await status(ctx, '/v1/user', again.headers), 401);
    // And a change made by hand in the database drops the cache just the same.
    const last = await tokenOf(ctx, { username: user.username, password: `Reset-${newPassword}` });
    await warm(ctx, last.headers);
    const misses = tokenCache(ctx).stats.misses;
    await ctx().deps.db.updateTable('users').set({ password_hash: 'changed' }).where('id', '=', user.userId).execute();
    assert.equal(await status(ctx, '/v1/user', last.headers), 200);
    assert.equal(tokenCache(ctx).stats.misses, misses + 1, 'resolved afresh after the password change');
  });

  it('impersonation ceiling: it ends at once when the impersonator loses a privilege the target holds', async () => {
    const org = await createTestOrg(ctx());
    const boss = await createTestUser(ctx(), org, {
      privileges: ['impersonate', 'user_management', 'role_management'],
    });
    const bossToken = await tokenOf(ctx, boss);
    const target = await createTestUser(ctx(), org, { privileges: ['user_management'] });
    const res = await ctx().inject({
      method: 'POST',
      url: '/v1/auth/impersonate',
      headers: bossToken.headers,
      payload: { username: target.username },
    });
    assert.equal(res.statusCode, 200, res.body);
    const acting = { accesstoken: json<{ session: { accessToken: string } }>(res).session.accessToken };
    await warm(ctx, acting);
    const bossRole = json<{ roleId: string }>(
      await ctx().inject({ method: 'GET', url: '/v1/user', headers: bossToken.headers }),
    ).roleId;
    assert.equal(
      (
        await ctx().inject({
          method: 'PATCH',
          url: `/v1/roles/${bossRole}`,
          headers: org.admin.headers,
          payload: { privileges: ['impersonate', 'role_management'] },
        })
      ).statusCode,
      200,
    );
    assert.equal(await status(ctx, '/v1/user', acting), 401);
  });

  it('impersonation ends at once when the impersonator is disabled', async () => {
    const org = await createTestOrg(ctx());
    const boss = await createTestUser(ctx(), org, { privileges: [...ALL_PRIVILEGES] });
    const bossToken = await tokenOf(ctx, boss);
    const target = await createTestUser(ctx(), org);
    const res = await ctx().inject({
      method: 'POST',
      url: '/v1/auth/impersonate',
      headers: bossToken.headers,
      payload: { username: target.username },
    });
    assert.equal(res.statusCode, 200, res.body);
    const acting = { accesstoken: json<{ session: { accessToken: string } }>(res).session.accessToken };
    await warm(ctx, acting);
    assert.equal((await principalFor(ctx, acting))!.impersonatorId, boss.userId);
    assert.equal(
      (
        await ctx().inject({
          method: 'PATCH',
          url: `/v1/user/${boss.userId}`,
          headers: org.admin.headers,
          payload: { status: 'disabled' },
        })
      ).statusCode,
      200,
    );
    assert.equal(await status(ctx, '/v1/user', acting), 401);
  });

  it('bookkeeping writes (lastUsedAt of keys and sessions) do not drop the cache', async () => {
    const org = await createTestOrg(ctx());
    const { token, key } = await staff(ctx, org);
    await warm(ctx, token.headers);
    await warm(ctx, key.headers);
    const generation = revisionFeed(ctx().deps.db).generation;
    await flushApiKeyUsage(ctx().deps);
    const sid = decodeJwt(token.headers.accesstoken).sid as string;
    await ctx()
      .deps.db.updateTable('auth_sessions')
      .set({ last_used_at: ctx().clock.now() + 5 })
      .where('id', '=', sid)
      .execute();
    await ctx()
      .deps.db.updateTable('api_keys')
      .set({ last_used_at: ctx().clock.now() + 5 })
      .where('id', '=', key.id)
      .execute();
    await revisionFeed(ctx().deps.db).check();
    assert.equal(revisionFeed(ctx().deps.db).generation, generation);
    const hits = tokenCache(ctx).stats.hits;
    assert.equal(await status(ctx, '/v1/user', token.headers), 200);
    assert.equal(tokenCache(ctx).stats.hits, hits + 1);
  });
});
