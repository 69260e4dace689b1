import assert from 'node:assert/strict';
import { it } from 'node:test';
import { Value } from 'typebox/value';
import { envelopeSchema } from '../../core/events/index.ts';
import { newId } from '../../core/ids.ts';
import { CREATE, LIST, REVOKE, assertFieldError, createKey } from '../../../test/helpers/api-keys.ts';
import { forEachEngine, json } from '../../../test/helpers/context.ts';
import { createTestOrg, createTestUser } from '../../../test/helpers/factories.ts';
import { securitySuite } from '../../../test/helpers/security.ts';
import { KEY_PATTERN } from './secrets/key-format.ts';

forEachEngine('api keys: create, list, revoke', (ctx) => {
  it('create returns id, name, keyHint and the plaintext key, and no expiresAt when none was set', async () => {
    const org = await createTestOrg(ctx());
    const res = await ctx().inject({
      method: 'POST',
      url: CREATE,
      headers: org.admin.headers,
      payload: { name: '  Nightly import  ', roleId: org.roles.editor },
    });
    assert.equal(res.statusCode, 200, res.body);
    const body = json(res);
    assert.deepEqual(Object.keys(body).sort(), ['id', 'key', 'keyHint', 'name']);
    assert.match(body.id, /^[0-9a-f-]{36}$/);
    assert.equal(body.name, 'Nightly import');
    assert.match(body.key, KEY_PATTERN);
    assert.equal(body.keyHint, body.key.slice(-4));
  });

  it('create echoes expiresAt as ISO-8601 (from an ISO string or epoch milliseconds)', async () => {
    const org = await createTestOrg(ctx());
    const at = ctx().clock.now() + 86_400_000;
    const fromIso = await createKey(ctx(), org, { expiresAt: new Date(at).toISOString() });
    assert.equal(fromIso.expiresAt, new Date(at).toISOString());
    const fromEpoch = await createKey(ctx(), org, { expiresAt: at + 1 });
    assert.equal(fromEpoch.expiresAt, new Date(at + 1).toISOString());
    const offset = await createKey(ctx(), org, { expiresAt: '2999-01-01T02:00:00.123+02:00' });
    assert.equal(offset.expiresAt, '2999-01-01T00:00:00.123Z');
  });

  it('create stores a service account with the role, and the key only as a keyed hash', async () => {
    const org = await createTestOrg(ctx());
    const created = await createKey(ctx(), org, { roleId: org.roles.editor });
    const row = await ctx()
      .deps.db.selectFrom('api_keys')
      .selectAll()
      .where('id', '=', created.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.key_hash, ctx().deps.keys.hash('api-key', created.key));
    assert.equal(row.key_hint, created.keyHint);
    assert.equal(row.org_id, org.orgId);
    assert.equal(row.created_by, org.admin.userId);
    const account = await ctx()
      .deps.db.selectFrom('users')
      .selectAll()
      .where('id', '=', row.service_user_id)
      .executeTakeFirstOrThrow();
    assert.equal(account.account_type, 'service');
    assert.equal(account.role_id, org.roles.editor);
    assert.equal(account.password_hash, null);
    assert.equal(account.org_id, org.orgId);
  });

  it('create rejects bad input naming the field', async () => {
    const org = await createTestOrg(ctx());
    const other = await createTestOrg(ctx());
    const base = { name: 'k', roleId: org.roles.viewer };
    const now = ctx().clock.now();
    const cases: [Record<string, unknown>, string][] = [
      [{ ...base, name: '' }, 'body.name'],
      [{ ...base, name: '   ' }, 'body.name'],
      [{ ...base, name: 'x'.repeat(101) }, 'body.name'],
      [{ roleId: org.roles.viewer }, 'body.name'],
      [{ ...base, name: { text: 'k' } }, 'body.name'],
      [{ name: 'k' }, 'body.roleId'],
      [{ ...base, roleId: 'not-a-uuid' }, 'body.roleId'],
      [{ ...base, roleId: newId() }, 'body.roleId'],
      [{ ...base, roleId: other.roles.viewer }, 'body.roleId'],
      [{ ...base, expiresAt: new Date(now - 1).toISOString() }, 'body.expiresAt'],
      [{ ...base, expiresAt: now }, 'body.expiresAt'],
      [{ ...base, expiresAt: 'tomorrow' }, 'body.expiresAt'],
      [{ ...base, expiresAt: '2999-01-01T00:00:00' }, 'body.expiresAt'],
      [{ ...base, expiresAt: 1e17 }, 'body.expiresAt'],
      [{ ...base, expiresAt: -5 }, 'body.expiresAt'],
    ];
    for (const [payload, field] of cases) {
      assertFieldError(await ctx().inject({ method: 'POST', url: CREATE, headers: org.admin.headers, payload }), field);
    }
    assert.equal(
      (
        await ctx().inject({
          method: 'POST',
          url: CREATE,
          headers: org.admin.headers,
          payload: { ...base, name: 'x'.repeat(100) },
        })
      ).statusCode,
      200,
    );
  });

  it('create refuses a role holding privileges the creator lacks (403), allows one within them', async () => {
    const org = await createTestOrg(ctx());
    const creator = await createTestUser(ctx(), org, {
      privileges: ['api_key_management', 'download', 'view_storyboards'],
    });
    const refused = await ctx().inject({
      method: 'POST',
      url: CREATE,
      headers: creator.headers,
      payload: { name: 'k', roleId: org.roles.editor },
    });
    assert.equal(refused.statusCode, 403, refused.body);
    const allowed = await ctx().inject({
      method: 'POST',
      url: CREATE,
      headers: creator.headers,
      payload: { name: 'k', roleId: org.roles.viewer },
    });
    assert.equal(allowed.statusCode, 200, allowed.body);
  });

  it('an API key cannot create API keys, even with API Key Management', async () => {
    const org = await createTestOrg(ctx());
    const { key } = await createKey(ctx(), org, { roleId: org.roles.administrator });
    const res = await ctx().inject({
      method: 'POST',
      url: CREATE,
      headers: { 'x-api-key': key },
      payload: { name: 'k2', roleId: org.roles.viewer },
    });
    assert.equal(res.statusCode, 403, res.body);
    const list = await ctx().inject({ method: 'POST', url: LIST, headers: { 'x-api-key': key }, payload: {} });
    assert.equal(list.statusCode, 200, list.body);
  });

  it('list returns the record fields with ISO-8601 timestamps, never the key or its hash', async () => {
    const org = await createTestOrg(ctx());
    const created = await createKey(ctx(), org, {
      name: 'listed',
      roleId: org.roles.editor,
      expiresAt: ctx().clock.now() + 60_000,
    });
    const res = await ctx().inject({ method: 'POST', url: LIST, headers: org.admin.headers, payload: {} });
    assert.equal(res.statusCode, 200, res.body);
    const body = json(res);
    assert.deepEqual(Object.keys(body).sort(), ['apiKeys', 'pagination']);
    assert.equal(body.apiKeys.length, 1);
    const record = body.apiKeys[0];
    assert.deepEqual(Object.keys(record).sort(), [
      'createdAt',
      'createdBy',
      'expiresAt',
      'id',
      'keyHint',
      'lastUsedAt',
      'name',
      'revokedAt',
      'roleId',
    ]);
    assert.equal(record.id, created.id);
    assert.equal(record.name, 'listed');
    assert.equal(record.keyHint, created.keyHint);
    assert.equal(record.roleId, org.roles.editor);
    assert.equal(record.createdBy, org.admin.userId);
    assert.equal(record.createdAt, new Date(ctx().clock.now()).toISOString());
    assert.equal(record.expiresAt, created.expiresAt);
    assert.equal(record.revokedAt, null);
    assert.equal(record.lastUsedAt, null);
    assert.ok(!res.body.includes(created.key));
    const hash = ctx().deps.keys.hash('api-key', created.key);
    assert.ok(!res.body.includes(hash));
    assert.deepEqual(body.pagination, { nextPageCursor: null, maxSize: 20 });
  });

  it('list accepts an empty POST, shows only the caller organization, and pages by maxSize', async () => {
    const org = await createTestOrg(ctx());
    const other = await createTestOrg(ctx());
    await createKey(ctx(), other);
    for (let i = 0; i < 3; i++) {
      ctx().clock.advance(1);
      await createKey(ctx(), org, { name: `k${i}` });
    }
    const empty = await ctx().inject({ method: 'POST', url: LIST, headers: org.admin.headers });
    assert.equal(empty.statusCode, 200, empty.body);
    assert.equal(json(empty).apiKeys.length, 3);
    const first = json(
      await ctx().inject({ method: 'POST', url: LIST, headers: org.admin.headers, payload: { maxSize: 2 } }),
    );
    assert.deepEqual(
      first.apiKeys.map((k: { name: string }) => k.name),
      ['k0', 'k1'],
    );
    assert.equal(first.pagination.maxSize, 2);
    assert.equal(typeof first.pagination.nextPageCursor, 'string');
    const second = json(
      await ctx().inject({
        method: 'POST',
        url: LIST,
        headers: org.admin.headers,
        payload: { maxSize: 2, pageCursor: first.pagination.nextPageCursor },
      }),
    );
    assert.deepEqual(
      second.apiKeys.map((k: { name: string }) => k.name),
      ['k2'],
    );
    assert.equal(second.pagination.nextPageCursor, null);
  });

  it('list rejects maxSize outside 1..100 and a cursor it did not issue, naming the field', async () => {
    const org = await createTestOrg(ctx());
    for (const maxSize of [101, 0, -1, 1.5, 'ten']) {
      assertFieldError(
        await ctx().inject({ method: 'POST', url: LIST, headers: org.admin.headers, payload: { maxSize } }),
        'body.maxSize',
      );
    }
    assert.equal(
      (await ctx().inject({ method: 'POST', url: LIST, headers: org.admin.headers, payload: { maxSize: 100 } }))
        .statusCode,
      200,
    );
    for (const pageCursor of [
      'garbage!',
      Buffer.from('["a","b"]').toString('base64url'),
      Buffer.from('[1]').toString('base64url'),
    ]) {
      assertFieldError(
        await ctx().inject({ method: 'POST', url: LIST, headers: org.admin.headers, payload: { pageCursor } }),
        'body.pageCursor',
      );
    }
    assertFieldError(
      await ctx().inject({
        method: 'POST',
        url: LIST,
        headers: org.admin.headers,
        payload: { includeRevoked: 'maybe' },
      }),
      'body.includeRevoked',
    );
  });

  it('revoke sets revokedAt, is idempotent (same record, same revokedAt) and audited once', async () => {
    const org = await createTestOrg(ctx());
    const created = await createKey(ctx(), org);
    const revokedAt = new Date(ctx().clock.now()).toISOString();
    const first = await ctx().inject({
      method: 'POST',
      url: REVOKE,
      headers: org.admin.headers,
      payload: { id: created.id },
    });
    assert.equal(first.statusCode, 200, first.body);
    const record = json(first).apiKey;
    assert.equal(record.id, created.id);
    assert.equal(record.revokedAt, revokedAt);
    assert.equal(record.keyHint, created.keyHint);
    assert.equal(record.key, undefined);
    ctx().clock.advance(5000);
    const again = await ctx().inject({
      method: 'POST',
      url: REVOKE,
      headers: org.admin.headers,
      payload: { id: created.id },
    });
    assert.equal(again.statusCode, 200, again.body);
    assert.deepEqual(json(again).apiKey, record);
    const account = await ctx()
      .deps.db.selectFrom('users')
      .innerJoin('api_keys', 'api_keys.service_user_id', 'users.id')
      .select('users.status')
      .where('api_keys.id', '=', created.id)
      .executeTakeFirstOrThrow();
    assert.equal(account.status, 'disabled');
    const audits = await ctx()
      .deps.db.selectFrom('audit_log')
      .selectAll()
      .where('target_id', '=', created.id)
      .where('action', '=', 'api_key.revoked')
      .execute();
    assert.equal(audits.length, 1);
    assert.equal(audits[0]!.actor_id, org.admin.userId);
  });

  it('concurrent revokes of one key agree on revokedAt and audit once', async () => {
    const org = await createTestOrg(ctx());
    const created = await createKey(ctx(), org);
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        ctx().inject({ method: 'POST', url: REVOKE, headers: org.admin.headers, payload: { id: created.id } }),
      ),
    );
    assert.ok(results.every((r) => r.statusCode === 200));
    assert.equal(new Set(results.map((r) => json(r).apiKey.revokedAt)).size, 1);
    const audits = await ctx()
      .deps.db.selectFrom('audit_log')
      .select('id')
      .where('target_id', '=', created.id)
      .where('action', '=', 'api_key.revoked')
      .execute();
    assert.equal(audits.length, 1);
  });

  it('revoke: unknown id or another organization key is 404; a malformed id is 400 naming body.id', async () => {
    const org = await createTestOrg(ctx());
    const other = await createTestOrg(ctx());
    const foreign = await createKey(ctx(), other);
    assert.equal(
      (await ctx().inject({ method: 'POST', url: REVOKE, headers: org.admin.headers, payload: { id: newId() } }))
        .statusCode,
      404,
    );
    assert.equal(
      (await ctx().inject({ method: 'POST', url: REVOKE, headers: org.admin.headers, payload: { id: foreign.id } }))
        .statusCode,
      404,
    );
    const stillActive = await ctx().inject({ method: 'GET', url: '/v1/user', headers: { 'x-api-key': foreign.key } });
    assert.equal(stillActive.statusCode, 200);
    assertFieldError(
      await ctx().inject({ method: 'POST', url: REVOKE, headers: org.admin.headers, payload: { id: 'nope' } }),
      'body.id',
    );
    assertFieldError(
      await ctx().inject({ method: 'POST', url: REVOKE, headers: org.admin.headers, payload: {} }),
      'body.id',
    );
  });

  it('creation is audited with the creator as actor; the audit never holds the key', async () => {
    const org = await createTestOrg(ctx());
    const created = await createKey(ctx(), org, { name: 'audited' });
    const row = await ctx()
      .deps.db.selectFrom('audit_log')
      .selectAll()
      .where('target_id', '=', created.id)
      .where('action', '=', 'api_key.created')
      .executeTakeFirstOrThrow();
    assert.equal(row.actor_id, org.admin.userId);
    assert.equal(row.target_type, 'api_key');
    assert.equal(JSON.parse(row.data).name, 'audited');
    assert.ok(!row.data.includes(created.key));
  });

  it('the OpenAPI document lists the three POST operations', async () => {
    const doc = json(await ctx().inject({ method: 'GET', url: '/openapi.json' }));
    for (const path of [CREATE, LIST, REVOKE]) assert.ok(doc.paths[path]?.post, path);
  });

  securitySuite(ctx, 'create-api-key', {
    method: 'POST',
    privileges: ['api_key_management'],
    prepare: (_ctx, org) => ({ url: CREATE, body: { name: 'k', roleId: org.roles.viewer } }),
    credentials: true,
    ceiling: {
      privileges: ['api_key_management'],
      prepare: (_ctx, org) => ({ url: CREATE, body: { name: 'k', roleId: org.roles.administrator } }),
    },
  });
  securitySuite(ctx, 'list-api-keys', {
    method: 'POST',
    privileges: ['api_key_management'],
    readScope: true,
    prepare: () => ({ url: LIST, body: {} }),
  });
  securitySuite(ctx, 'revoke-api-key', {
    method: 'POST',
    privileges: ['api_key_management'],
    resource: true,
    prepare: async (c, org) => ({ url: REVOKE, body: { id: (await createKey(c, org)).id } }),
  });
});

forEachEngine('api keys: webhook events', (ctx) => {
  it('creating and revoking a key publish api_key.created and api_key.revoked once, in the catalog shape', async () => {
    const org = await createTestOrg(ctx());
    const created = await createKey(ctx(), org, { name: 'events' });
    for (let i = 0; i < 2; i++) {
      const res = await ctx().inject({
        method: 'POST',
        url: REVOKE,
        headers: org.admin.headers,
        payload: { id: created.id },
      });
      assert.equal(res.statusCode, 200, res.body);
    }
    const rows = await ctx()
      .deps.db.selectFrom('events')
      .select(['type', 'body'])
      .where('org_id', '=', org.orgId)
      .where('type', 'like', 'api_key.%')
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    assert.deepEqual(rows.map((r) => r.type).sort(), ['api_key.created', 'api_key.revoked']);
    for (const row of rows) {
      const body = JSON.parse(row.body);
      assert.equal(body.eventType, row.type);
      assert.deepEqual(body.apiKey, {
        id: created.id,
        name: 'events',
        keyHint: created.keyHint,
        roleId: org.roles.viewer,
        expiresAt: null,
      });
      assert.equal(body.event.user.id, org.admin.userId);
      assert.ok(!row.body.includes(created.key), 'the key never appears in an event');
      const errors = [...Value.Errors(envelopeSchema(row.type as 'api_key.created'), body)];
      assert.deepEqual(errors, []);
    }
  });
});
