import assert from 'node:assert/strict';
import type { KyselyPlugin } from 'kysely';
import { it } from 'node:test';
import { CREATE, LIST, REVOKE, createKey, roleWith } from '../../../../test/helpers/api-keys.ts';
import type { App } from '../../../core/http/app-types.ts';
import { forEachEngine, json } from '../../../../test/helpers/context.ts';
import { createTestOrg, createTestUser } from '../../../../test/helpers/factories.ts';
import { flushApiKeyUsage, generateKey, verifyApiKey } from '../index.ts';

const ME = '/v1/user';

forEachEngine('api keys: authenticating with X-API-Key', (ctx) => {
  it('a key authenticates as its service account, with its role and no AccessToken', async () => {
    const org = await createTestOrg(ctx());
    const created = await createKey(ctx(), org, { roleId: org.roles.editor });
    const res = await ctx().inject({ method: 'GET', url: ME, headers: { 'x-api-key': created.key } });
    assert.equal(res.statusCode, 200, res.body);
    const me = json(res);
    const row = await ctx()
      .deps.db.selectFrom('api_keys')
      .select('service_user_id')
      .where('id', '=', created.id)
      .executeTakeFirstOrThrow();
    assert.equal(me.userId, row.service_user_id);
    assert.equal(me.accountType, 'service');
    assert.equal(me.roleId, org.roles.editor);
    assert.equal(me.customerId, org.customerId);
  });

  it('a key in the principal cache vouches for nothing else: near misses of it are refused', async () => {
    const org = await createTestOrg(ctx());
    const created = await createKey(ctx(), org);
    const call = (key: string) => ctx().inject({ method: 'GET', url: ME, headers: { 'x-api-key': key } });
    assert.equal((await call(created.key)).statusCode, 200);
    const last = created.key.at(-1) === 'a' ? 'b' : 'a';
    for (const near of [
      created.key.slice(0, -1) + last,
      ` ${created.key}x`.trim(),
      created.key.toLowerCase() === created.key ? created.key.toUpperCase() : created.key.toLowerCase(),
    ]) {
      assert.equal((await call(near)).statusCode, 401, near);
    }
    assert.equal((await call(created.key)).statusCode, 200);
  });

  it('malformed, unknown, revoked and expired keys all get the same 401', async () => {
    const org = await createTestOrg(ctx());
    const revoked = await createKey(ctx(), org);
    await ctx().inject({ method: 'POST', url: REVOKE, headers: org.admin.headers, payload: { id: revoked.id } });
    const expired = await createKey(ctx(), org, { expiresAt: ctx().clock.now() + 1 });
    ctx().clock.advance(1);
    const valid = generateKey();
    const bad = {
      empty: '',
      'wrong prefix': `tsx_${valid.slice(4)}`,
      'bad checksum': valid.slice(0, -1) + (valid.endsWith('a') ? 'b' : 'a'),
      truncated: valid.slice(0, 20),
      unknown: valid,
      revoked: revoked.key,
      expired: expired.key,
    };
    const bodies = new Set<string>();
    for (const [what, key] of Object.entries(bad)) {
      const res = await ctx().inject({ method: 'GET', url: ME, headers: { 'x-api-key': key } });
      assert.equal(res.statusCode, 401, `${what}: ${res.body}`);
      const { requestId: _id, ...rest } = json(res);
      bodies.add(JSON.stringify(rest));
    }
    assert.deepEqual(
      [...bodies],
      [
        JSON.stringify({
          status: 'error',
          code: 'unauthorized',
          message: 'Invalid API key',
          acceptedCredentials: ['AccessToken', 'Authorization: Bearer', 'X-API-Key'],
        }),
      ],
    );
  });

  it('malformed keys are refused without any database query; a well-formed one costs exactly one', async () => {
    let queries = 0;
    const counting: KyselyPlugin = {
      transformQuery: (args) => args.node,
      transformResult: async (args) => {
        queries += 1;
        return args.result;
      },
    };
    const deps = { ...ctx().deps, db: ctx().deps.db.withPlugin(counting) };
    const valid = generateKey();
    for (const bad of [
      '',
      'tsk_',
      valid.slice(0, -1) + (valid.endsWith('a') ? 'b' : 'a'),
      valid.toUpperCase(),
      `${valid} `,
      'x'.repeat(10_000),
    ]) {
      assert.equal(await verifyApiKey(deps, bad, '127.0.0.1'), null);
    }
    assert.equal(queries, 0);
    assert.equal(await verifyApiKey(deps, valid, '127.0.0.1'), null);
    assert.equal(queries, 1);
  });

  it('expiry is exact to the millisecond (injected clock)', async () => {
    const org = await createTestOrg(ctx());
    const expiresAt = ctx().clock.now() + 10_000;
    const { key } = await createKey(ctx(), org, { expiresAt: new Date(expiresAt).toISOString() });
    ctx().clock.set(expiresAt - 1);
    assert.equal((await ctx().inject({ method: 'GET', url: ME, headers: { 'x-api-key': key } })).statusCode, 200);
    ctx().clock.set(expiresAt);
    assert.equal((await ctx().inject({ method: 'GET', url: ME, headers: { 'x-api-key': key } })).statusCode, 401);
    ctx().clock.set(expiresAt + 1);
    assert.equal((await ctx().inject({ method: 'GET', url: ME, headers: { 'x-api-key': key } })).statusCode, 401);
  });

  it("a key's privileges never exceed its creator's current ones; a disabled creator stops the key", async () => {
    const org = await createTestOrg(ctx());
    const creatorRole = await roleWith(ctx(), org, ['api_key_management', 'download']);
    const creator = await createTestUser(ctx(), org, { roleId: creatorRole });
    const keyRole = await roleWith(ctx(), org, ['api_key_management', 'download']);
    const res = await ctx().inject({
      method: 'POST',
      url: CREATE,
      headers: creator.headers,
      payload: { name: 'capped', roleId: keyRole },
    });
    assert.equal(res.statusCode, 200, res.body);
    const { key } = json(res);
    const list = () => ctx().inject({ method: 'POST', url: LIST, headers: { 'x-api-key': key }, payload: {} });
    assert.equal((await list()).statusCode, 200);

    // The creator loses API Key Management: so does the key, on its next request.
    await ctx()
      .deps.db.updateTable('roles')
      .set({ privileges: JSON.stringify(['download']) })
      .where('id', '=', creatorRole)
      .execute();
    assert.equal((await list()).statusCode, 403);
    const principal = await verifyApiKey(ctx().deps, key, '127.0.0.1');
    assert.deepEqual([...principal!.privileges], ['download']);
    await ctx()
      .deps.db.updateTable('roles')
      .set({ privileges: JSON.stringify(['api_key_management', 'download']) })
      .where('id', '=', creatorRole)
      .execute();
    assert.equal((await list()).statusCode, 200);

    await ctx().deps.db.updateTable('users').set({ status: 'disabled' }).where('id', '=', creator.userId).execute();
    assert.equal((await list()).statusCode, 401);
    await ctx().deps.db.updateTable('users').set({ status: 'enabled' }).where('id', '=', creator.userId).execute();
    assert.equal((await list()).statusCode, 200);
  });

  it("disabling the key's service account stops the key", async () => {
    const org = await createTestOrg(ctx());
    const created = await createKey(ctx(), org);
    const me = () => ctx().inject({ method: 'GET', url: ME, headers: { 'x-api-key': created.key } });
    const account = json(await me()).userId;
    await ctx().deps.db.updateTable('users').set({ status: 'disabled' }).where('id', '=', account).execute();
    assert.equal((await me()).statusCode, 401);
  });

  it("the key's principal: kind api_key, apiKeyId, its role, and its creator's current groups", async () => {
    const org = await createTestOrg(ctx());
    const created = await createKey(ctx(), org, { roleId: org.roles.viewer });
    const principal = await verifyApiKey(ctx().deps, created.key, '127.0.0.1');
    assert.ok(principal);
    assert.equal(principal.kind, 'api_key');
    assert.equal(principal.apiKeyId, created.id);
    assert.equal(principal.orgId, org.orgId);
    assert.equal(principal.roleId, org.roles.viewer);
    assert.deepEqual([...principal.privileges].sort(), ['download', 'view_storyboards']);
    assert.deepEqual(principal.groupIds, [org.groups.administrators, org.groups.everyone].sort());
    await ctx()
      .deps.db.deleteFrom('user_groups')
      .where('user_id', '=', org.admin.userId)
      .where('group_id', '=', org.groups.administrators)
      .execute();
    const after = await verifyApiKey(ctx().deps, created.key, '127.0.0.1');
    assert.deepEqual(after!.groupIds, [org.groups.everyone]);
  });

  it('user credential + key: the user is the principal; the key must be valid and of the same organization', async () => {
    const org = await createTestOrg(ctx());
    const other = await createTestOrg(ctx());
    const user = await createTestUser(ctx(), org);
    const own = await createKey(ctx(), org);
    const foreign = await createKey(ctx(), other);
    const revoked = await createKey(ctx(), org);
    await ctx().inject({ method: 'POST', url: REVOKE, headers: org.admin.headers, payload: { id: revoked.id } });

    const both = await ctx().inject({ method: 'GET', url: ME, headers: { ...user.headers, 'x-api-key': own.key } });
    assert.equal(both.statusCode, 200, both.body);
    assert.equal(json(both).userId, user.userId);
    for (const key of [foreign.key, revoked.key, generateKey(), 'tsk_nonsense', 'tsk_']) {
      const res = await ctx().inject({ method: 'GET', url: ME, headers: { ...user.headers, 'x-api-key': key } });
      assert.equal(res.statusCode, 401, res.body);
      assert.equal(json(res).message, 'Invalid API key');
    }
    // Public routes ignore credentials altogether.
    assert.equal(
      (await ctx().inject({ method: 'GET', url: '/healthz', headers: { 'x-api-key': 'tsk_nonsense' } })).statusCode,
      200,
    );
  });

  it('lastUsedAt is kept in memory (no write per request), shown by list, and written by the batch flush', async () => {
    const org = await createTestOrg(ctx());
    const created = await createKey(ctx(), org);
    ctx().clock.advance(1234);
    const usedAt = ctx().clock.now();
    assert.equal(
      (await ctx().inject({ method: 'GET', url: ME, headers: { 'x-api-key': created.key } })).statusCode,
      200,
    );
    // Once the address is known and the key resolved, authenticating costs no database work at all
    // (the principal cache; issue 14): no read, no write.
    let queries = 0;
    const counting: KyselyPlugin = {
      transformQuery: (args) => args.node,
      transformResult: async (args) => {
        queries += 1;
        return args.result;
      },
    };
    const deps = { ...ctx().deps, db: ctx().deps.db.withPlugin(counting) };
    assert.ok(await verifyApiKey(deps, created.key, '127.0.0.1'));
    queries = 0;
    for (let i = 0; i < 10; i++) assert.ok(await verifyApiKey(deps, created.key, '127.0.0.1'));
    assert.equal(queries, 0);
    await flushApiKeyUsage(deps);
    const listed = json(await ctx().inject({ method: 'POST', url: LIST, headers: org.admin.headers, payload: {} }));
    assert.equal(
      listed.apiKeys.find((k: { id: string }) => k.id === created.id).lastUsedAt,
      new Date(usedAt).toISOString(),
    );
    await flushApiKeyUsage(ctx().deps);
    const after = await ctx()
      .deps.db.selectFrom('api_keys')
      .select('last_used_at')
      .where('id', '=', created.id)
      .executeTakeFirstOrThrow();
    assert.equal(after.last_used_at, usedAt);
  });

  it('lastUsedAt only moves forward across instances, and an instance flushes when it closes', async () => {
    const org = await createTestOrg(ctx());
    const created = await createKey(ctx(), org);
    const second = await ctx().secondInstance();
    const t1 = ctx().clock.now() + 10;
    ctx().clock.set(t1);
    assert.equal(
      (await ctx().inject({ method: 'GET', url: ME, headers: { 'x-api-key': created.key } })).statusCode,
      200,
    );
    await flushApiKeyUsage(ctx().deps);
    // The second instance saw the key earlier than the first; its later flush must not move lastUsedAt back.
    await second.deps.db.updateTable('api_keys').set({ last_used_at: t1 }).where('id', '=', created.id).execute();
    ctx().clock.set(t1 + 5);
    assert.equal(
      (await second.app.inject({ method: 'GET', url: ME, headers: { 'x-api-key': created.key } })).statusCode,
      200,
    );
    await second.close();
    const row = await ctx()
      .deps.db.selectFrom('api_keys')
      .select('last_used_at')
      .where('id', '=', created.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.last_used_at, t1 + 5);
    await ctx()
      .deps.db.updateTable('api_keys')
      .set({ last_used_at: t1 + 100 })
      .where('id', '=', created.id)
      .execute();
    assert.equal(
      (await ctx().inject({ method: 'GET', url: ME, headers: { 'x-api-key': created.key } })).statusCode,
      200,
    );
    await flushApiKeyUsage(ctx().deps);
    const kept = await ctx()
      .deps.db.selectFrom('api_keys')
      .select('last_used_at')
      .where('id', '=', created.id)
      .executeTakeFirstOrThrow();
    assert.equal(kept.last_used_at, t1 + 100);
  });

  it('first use from each new IP is audited once (across instances), with the service account as actor', async () => {
    const org = await createTestOrg(ctx());
    const created = await createKey(ctx(), org);
    const second = await ctx().secondInstance();
    const call = (app: App, ip: string) =>
      app.inject({ method: 'GET', url: ME, headers: { 'x-api-key': created.key }, remoteAddress: ip });
    for (const [app, ip] of [
      [ctx().app, '10.0.0.1'],
      [ctx().app, '10.0.0.1'],
      [second.app, '10.0.0.1'],
      [second.app, '10.0.0.2'],
      [ctx().app, '10.0.0.2'],
    ] as const) {
      assert.equal((await call(app, ip)).statusCode, 200);
    }
    const rows = await ctx()
      .deps.db.selectFrom('audit_log')
      .selectAll()
      .where('target_id', '=', created.id)
      .where('action', '=', 'api_key.used_from_new_ip')
      .orderBy('ip')
      .execute();
    assert.deepEqual(
      rows.map((r) => r.ip),
      ['10.0.0.1', '10.0.0.2'],
    );
    const actor = await ctx()
      .deps.db.selectFrom('users')
      .select(['account_type', 'org_id'])
      .where('id', '=', rows[0]!.actor_id!)
      .executeTakeFirstOrThrow();
    assert.deepEqual(actor, { account_type: 'service', org_id: org.orgId });
  });

  it('revocation holds on the very next request on another instance', async () => {
    const org = await createTestOrg(ctx());
    const created = await createKey(ctx(), org);
    const second = await ctx().secondInstance();
    const onSecond = () => second.app.inject({ method: 'GET', url: ME, headers: { 'x-api-key': created.key } });
    assert.equal((await onSecond()).statusCode, 200);
    assert.equal(
      (await ctx().inject({ method: 'POST', url: REVOKE, headers: org.admin.headers, payload: { id: created.id } }))
        .statusCode,
      200,
    );
    assert.equal((await onSecond()).statusCode, 401);
  });

  it('500 concurrent requests racing a revoke: none that starts after the revoke response is authenticated', async () => {
    const org = await createTestOrg(ctx());
    const created = await createKey(ctx(), org);
    const results: { startedAt: number; status: number }[] = [];
    const inflight: Promise<void>[] = [];
    const fire = () => {
      const startedAt = performance.now();
      inflight.push(
        ctx()
          .inject({ method: 'GET', url: ME, headers: { 'x-api-key': created.key } })
          .then((res) => {
            results.push({ startedAt, status: res.statusCode });
          }),
      );
    };
    let revokedAt = Number.POSITIVE_INFINITY;
    let revoke: Promise<void> | undefined;
    for (let i = 0; i < 450; i++) {
      if (i === 150) {
        revoke = ctx()
          .inject({ method: 'POST', url: REVOKE, headers: org.admin.headers, payload: { id: created.id } })
          .then((res) => {
            assert.equal(res.statusCode, 200);
            revokedAt = performance.now();
          });
      }
      fire();
      if (i % 10 === 9) await new Promise((resolve) => setImmediate(resolve));
    }
    await revoke;
    for (let i = 0; i < 50; i++) fire();
    await Promise.all(inflight);
    assert.equal(results.length, 500);
    const afterRevoke = results.filter((r) => r.startedAt > revokedAt);
    assert.ok(afterRevoke.length >= 50);
    assert.deepEqual(
      afterRevoke.filter((r) => r.status !== 401),
      [],
    );
    assert.ok(results.every((r) => r.status === 200 || r.status === 401));
    assert.ok(
      results.some((r) => r.status === 200),
      'requests before the revoke succeed',
    );
  });
});
