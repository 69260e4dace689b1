import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine, json, type TestContext } from '../../../test/helpers/context.ts';
import { createTestOrg, type TestOrg } from '../../../test/helpers/factories.ts';
import { securitySuite } from '../../../test/helpers/security.ts';
import { EVENT_TYPES } from '../../core/events/index.ts';

const endpointBody = (over: Record<string, unknown> = {}) => ({
  description: 'Asset sync',
  url: 'http://127.0.0.1:9/hook',
  eventTypes: ['asset.created', 'user.*'],
  rateLimit: 200,
  ...over,
});

async function createEndpoint(
  ctx: TestContext,
  org: TestOrg,
  over: Record<string, unknown> = {},
): Promise<{ id: string; secret: string }> {
  const res = await ctx.inject({
    method: 'POST',
    url: '/webhooks/endpoint',
    headers: org.admin.headers,
    payload: [endpointBody(over)],
  });
  assert.equal(res.statusCode, 200, res.body);
  return json(res);
}

forEachEngine('webhook endpoints', (ctx) => {
  it('creates, reads, lists, updates and deletes endpoints at /webhooks and /v1/webhooks', async () => {
    const org = await createTestOrg(ctx());
    const res = await ctx().inject({
      method: 'POST',
      url: '/webhooks/endpoint',
      headers: org.admin.headers,
      payload: [endpointBody(), endpointBody({ description: 'Second one', eventTypes: ['*'] })],
    });
    assert.equal(res.statusCode, 200, res.body);
    const created = json(res);
    assert.equal(created.endpoints.length, 2);
    assert.equal(created.id, created.endpoints[0].id);
    assert.match(created.secret, /^whsec_[A-Za-z0-9+/]+=*$/);
    for (const prefix of ['', '/v1']) {
      const got = await ctx().inject({
        method: 'GET',
        url: `${prefix}/webhooks/endpoint/${created.id}`,
        headers: org.admin.headers,
      });
      assert.equal(got.statusCode, 200, got.body);
      const endpoint = json(got);
      assert.deepEqual(
        {
          id: endpoint.id,
          description: endpoint.description,
          url: endpoint.url,
          eventTypes: endpoint.eventTypes,
          disabled: endpoint.disabled,
          rateLimit: endpoint.rateLimit,
          timeoutSeconds: endpoint.timeoutSeconds,
          oauth: endpoint.oauth,
        },
        {
          id: created.id,
          description: 'Asset sync',
          url: 'http://127.0.0.1:9/hook',
          eventTypes: ['asset.created', 'user.*'],
          disabled: false,
          rateLimit: 200,
          timeoutSeconds: 30,
          oauth: null,
        },
      );
      assert.equal(endpoint.secret, undefined);
    }
    const list = json(
      await ctx().inject({ method: 'GET', url: '/webhooks/endpoint/list', headers: org.admin.headers }),
    );
    assert.deepEqual(
      list.map((e: { id: string }) => e.id),
      created.endpoints.map((e: { id: string }) => e.id).sort(),
    );
    const patch = await ctx().inject({
      method: 'PATCH',
      url: `/v1/webhooks/endpoint/${created.id}`,
      headers: org.admin.headers,
      payload: { description: 'Renamed hook', disabled: true, rateLimit: null, timeoutSeconds: 30 },
    });
    assert.equal(patch.statusCode, 204, patch.body);
    assert.equal(patch.body, '');
    const after = json(
      await ctx().inject({ method: 'GET', url: `/webhooks/endpoint/${created.id}`, headers: org.admin.headers }),
    );
    assert.equal(after.description, 'Renamed hook');
    assert.equal(after.disabled, true);
    assert.equal(after.rateLimit, null);
    assert.equal(after.timeoutSeconds, 30);
    const del = await ctx().inject({
      method: 'DELETE',
      url: `/webhooks/endpoint/${created.id}`,
      headers: org.admin.headers,
    });
    assert.equal(del.statusCode, 204);
    assert.equal(
      (await ctx().inject({ method: 'GET', url: `/webhooks/endpoint/${created.id}`, headers: org.admin.headers }))
        .statusCode,
      404,
    );
  });

  it('pages the endpoint list with before/after cursors, which are mutually exclusive', async () => {
    const org = await createTestOrg(ctx());
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await createEndpoint(ctx(), org, { description: `Endpoint ${i}` })).id);
    ids.sort();
    const page = (q: string) =>
      ctx().inject({ method: 'GET', url: `/webhooks/endpoint/list?${q}`, headers: org.admin.headers });
    assert.deepEqual(
      json(await page('limit=2')).map((e: { id: string }) => e.id),
      ids.slice(0, 2),
    );
    assert.deepEqual(
      json(await page(`limit=2&after=${ids[1]}`)).map((e: { id: string }) => e.id),
      ids.slice(2, 4),
    );
    assert.deepEqual(
      json(await page(`limit=2&before=${ids[4]}`)).map((e: { id: string }) => e.id),
      ids.slice(2, 4),
    );
    const both = await page(`before=${ids[4]}&after=${ids[0]}`);
    assert.equal(both.statusCode, 400);
    assert.ok(json(both).details.some((d: { field: string }) => d.field === 'query.before'));
    assert.equal((await page('after=!!')).statusCode, 400);
  });

  it('rejects bad input with 400 naming the field', async () => {
    const org = await createTestOrg(ctx());
    const cases: [unknown, string][] = [
      [[endpointBody({ description: 'abc' })], 'body.0.description'],
      [[endpointBody({ description: 'x'.repeat(101) })], 'body.0.description'],
      [[endpointBody(), endpointBody({ url: 'not a url' })], 'body.1.url'],
      [[endpointBody({ url: 'ftp://example.com/x' })], 'body.0.url'],
      [[endpointBody({ eventTypes: ['asset.exploded'] })], 'body.0.eventTypes'],
      [[endpointBody({ eventTypes: ['nothing.*'] })], 'body.0.eventTypes'],
      [[endpointBody({ eventTypes: [] })], 'body.0.eventTypes'],
      [[endpointBody({ rateLimit: 0 })], 'body.0.rateLimit'],
      [[endpointBody({ timeoutSeconds: 31 })], 'body.0.timeoutSeconds'],
      [[], 'body'],
      [Array.from({ length: 51 }, () => endpointBody()), 'body'],
    ];
    for (const [payload, field] of cases) {
      const res = await ctx().inject({
        method: 'POST',
        url: '/webhooks/endpoint',
        headers: org.admin.headers,
        payload,
      });
      assert.equal(res.statusCode, 400, `${field}: ${res.body}`);
      assert.ok(
        json(res).details.some((d: { field: string }) => d.field === field),
        `${field} not named in ${res.body}`,
      );
    }
    const { id } = await createEndpoint(ctx(), org);
    const bad = await ctx().inject({
      method: 'PATCH',
      url: `/webhooks/endpoint/${id}`,
      headers: org.admin.headers,
      payload: { eventTypes: ['nope'] },
    });
    assert.equal(bad.statusCode, 400);
    assert.equal(json(bad).details[0].field, 'body.eventTypes');
    assert.equal(
      (await ctx().inject({ method: 'GET', url: '/webhooks/endpoint/not-a-uuid', headers: org.admin.headers }))
        .statusCode,
      400,
    );
  });

  it('lists every catalog event type with a description and a JSON Schema', async () => {
    const org = await createTestOrg(ctx());
    const res = await ctx().inject({ method: 'GET', url: '/webhooks/event-type/list', headers: org.admin.headers });
    assert.equal(res.statusCode, 200);
    const types = json(res);
    assert.deepEqual(types.map((t: { name: string }) => t.name).sort(), [...EVENT_TYPES].sort());
    for (const name of [
      'asset.created',
      'asset.metadata.updated',
      'version.created',
      'collection.assets.updated',
      'relationship.created',
      'user.created',
      'metadata.template.updated',
      'security.template.updated',
      'storyboard.shared',
      'api_key.created',
      'cdn.pullzone.created',
      'message.attempt.exhausted',
      'endpoint.disabled',
    ]) {
      const entry = types.find((t: { name: string }) => t.name === name);
      assert.ok(entry, name);
      assert.ok(entry.description.length >= 5 && entry.description.length <= 100, name);
      assert.equal(entry.schema.properties.eventType.const, name);
      assert.ok(entry.schema.properties.event);
    }
    const after = json(
      await ctx().inject({
        method: 'GET',
        url: '/v1/webhooks/event-type/list?after=user.created',
        headers: org.admin.headers,
      }),
    );
    assert.ok(after.every((t: { name: string }) => t.name > 'user.created'));
  });

  it('shows the secret, rotates it with an overlap, and refuses a weak custom secret', async () => {
    const org = await createTestOrg(ctx());
    const { id, secret } = await createEndpoint(ctx(), org);
    const shown = json(
      await ctx().inject({ method: 'GET', url: `/webhooks/endpoint/${id}/secret`, headers: org.admin.headers }),
    );
    assert.equal(shown.key, secret);
    const rotated = await ctx().inject({
      method: 'POST',
      url: `/webhooks/endpoint/${id}/secret/rotate`,
      headers: org.admin.headers,
      payload: { overlapSeconds: 3600 },
    });
    assert.equal(rotated.statusCode, 200, rotated.body);
    assert.notEqual(json(rotated).key, secret);
    assert.equal(
      json(await ctx().inject({ method: 'GET', url: `/webhooks/endpoint/${id}/secret`, headers: org.admin.headers }))
        .key,
      json(rotated).key,
    );
    const row = await ctx()
      .deps.db.selectFrom('webhook_endpoints')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    assert.ok(!row.secret.includes(secret.slice(6)), 'stored encrypted');
    assert.equal(row.previous_secret_until, ctx().clock.now() + 3600_000);
    const weak = await ctx().inject({
      method: 'POST',
      url: `/webhooks/endpoint/${id}/secret/rotate`,
      headers: org.admin.headers,
      payload: { key: 'whsec_c2hvcnQ=' },
    });
    assert.equal(weak.statusCode, 400);
    assert.equal(json(weak).details[0].field, 'body.key');
  });

  it('adds and removes an OAuth client; the client secret is encrypted and never returned', async () => {
    const org = await createTestOrg(ctx());
    const { id } = await createEndpoint(ctx(), org);
    const put = await ctx().inject({
      method: 'PUT',
      url: `/webhooks/endpoint/oauth/${id}`,
      headers: org.admin.headers,
      payload: {
        clientId: 'client-1',
        clientSecret: 'very-secret-value',
        tokenUrl: 'http://127.0.0.1:9/token',
        scope: ['hooks:write'],
        extraParams: { audience: 'api' },
      },
    });
    assert.equal(put.statusCode, 204, put.body);
    const got = await ctx().inject({ method: 'GET', url: `/webhooks/endpoint/${id}`, headers: org.admin.headers });
    assert.deepEqual(json(got).oauth, {
      clientId: 'client-1',
      tokenUrl: 'http://127.0.0.1:9/token',
      scope: ['hooks:write'],
      extraParams: { audience: 'api' },
      authMethod: 'client_secret_basic',
    });
    assert.ok(!got.body.includes('very-secret-value'));
    const row = await ctx()
      .deps.db.selectFrom('webhook_endpoints')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    assert.ok(!JSON.stringify(row).includes('very-secret-value'));
    assert.equal(ctx().deps.keys.decrypt(row.oauth_client_secret!), 'very-secret-value');
    const badUrl = await ctx().inject({
      method: 'PUT',
      url: `/webhooks/endpoint/oauth/${id}`,
      headers: org.admin.headers,
      payload: { clientId: 'c', clientSecret: 's', tokenUrl: 'nope' },
    });
    assert.equal(badUrl.statusCode, 400);
    assert.equal(json(badUrl).details[0].field, 'body.tokenUrl');
    assert.equal(
      (await ctx().inject({ method: 'DELETE', url: `/webhooks/endpoint/oauth/${id}`, headers: org.admin.headers }))
        .statusCode,
      204,
    );
    assert.equal(
      json(await ctx().inject({ method: 'GET', url: `/webhooks/endpoint/${id}`, headers: org.admin.headers })).oauth,
      null,
    );
    assert.equal(
      (await ctx().inject({ method: 'DELETE', url: `/webhooks/endpoint/oauth/${id}`, headers: org.admin.headers }))
        .statusCode,
      404,
    );
  });

  it('documents every webhook route in the OpenAPI document', async () => {
    const res = await ctx().inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(res.statusCode, 200);
    const paths = Object.keys(json(res).paths);
    for (const path of [
      '/webhooks/endpoint',
      '/webhooks/endpoint/list',
      '/webhooks/event-type/list',
      '/webhooks/endpoint/{id}',
      '/webhooks/endpoint/oauth/{endpointId}',
      '/webhooks/endpoint/{id}/recover',
    ]) {
      assert.ok(paths.includes(path), path);
    }
  });

  const withEndpoint = async (c: TestContext, org: TestOrg) => (await createEndpoint(c, org)).id;
  const privileges = ['webhooks_administration'] as const;
  securitySuite(ctx, 'POST /webhooks/endpoint', {
    method: 'POST',
    privileges: [...privileges],
    prepare: () => ({ url: '/webhooks/endpoint', body: [endpointBody()] }),
  });
  securitySuite(ctx, 'GET /webhooks/endpoint/list', {
    method: 'GET',
    privileges: [...privileges],
    prepare: () => ({ url: '/webhooks/endpoint/list' }),
  });
  securitySuite(ctx, 'GET /webhooks/event-type/list', {
    method: 'GET',
    prepare: () => ({ url: '/webhooks/event-type/list' }),
  });
  for (const prefix of ['/webhooks', '/v1/webhooks']) {
    securitySuite(ctx, `GET ${prefix}/endpoint/{id}`, {
      method: 'GET',
      privileges: [...privileges],
      resource: true,
      prepare: async (c, org) => ({ url: `${prefix}/endpoint/${await withEndpoint(c, org)}` }),
    });
  }
  securitySuite(ctx, 'PATCH /webhooks/endpoint/{id}', {
    method: 'PATCH',
    privileges: [...privileges],
    resource: true,
    prepare: async (c, org) => ({
      url: `/webhooks/endpoint/${await withEndpoint(c, org)}`,
      body: { description: 'Changed it' },
    }),
  });
  securitySuite(ctx, 'DELETE /webhooks/endpoint/{id}', {
    method: 'DELETE',
    privileges: [...privileges],
    resource: true,
    prepare: async (c, org) => ({ url: `/webhooks/endpoint/${await withEndpoint(c, org)}` }),
  });
  securitySuite(ctx, 'PUT /webhooks/endpoint/oauth/{endpointId}', {
    method: 'PUT',
    privileges: [...privileges],
    resource: true,
    prepare: async (c, org) => ({
      url: `/webhooks/endpoint/oauth/${await withEndpoint(c, org)}`,
      body: { clientId: 'c', clientSecret: 's', tokenUrl: 'http://127.0.0.1:9/token' },
    }),
  });
  securitySuite(ctx, 'DELETE /webhooks/endpoint/oauth/{endpointId}', {
    method: 'DELETE',
    privileges: [...privileges],
    resource: true,
    prepare: async (c, org) => {
      const id = await withEndpoint(c, org);
      await c.inject({
        method: 'PUT',
        url: `/webhooks/endpoint/oauth/${id}`,
        headers: org.admin.headers,
        payload: { clientId: 'c', clientSecret: 's', tokenUrl: 'http://127.0.0.1:9/token' },
      });
      return { url: `/webhooks/endpoint/oauth/${id}` };
    },
  });
  securitySuite(ctx, 'GET /webhooks/endpoint/{id}/secret', {
    method: 'GET',
    privileges: [...privileges],
    resource: true,
    prepare: async (c, org) => ({ url: `/webhooks/endpoint/${await withEndpoint(c, org)}/secret` }),
  });
  securitySuite(ctx, 'POST /webhooks/endpoint/{id}/secret/rotate', {
    method: 'POST',
    privileges: [...privileges],
    resource: true,
    prepare: async (c, org) => ({ url: `/webhooks/endpoint/${await withEndpoint(c, org)}/secret/rotate`, body: {} }),
  });
  securitySuite(ctx, 'GET /webhooks/endpoint/{id}/message/list', {
    method: 'GET',
    privileges: [...privileges],
    resource: true,
    prepare: async (c, org) => ({ url: `/webhooks/endpoint/${await withEndpoint(c, org)}/message/list` }),
  });
  securitySuite(ctx, 'GET /webhooks/endpoint/{id}/attempt/list', {
    method: 'GET',
    privileges: [...privileges],
    resource: true,
    prepare: async (c, org) => ({ url: `/webhooks/endpoint/${await withEndpoint(c, org)}/attempt/list` }),
  });
  securitySuite(ctx, 'POST /webhooks/endpoint/{id}/recover', {
    method: 'POST',
    privileges: [...privileges],
    resource: true,
    prepare: async (c, org) => ({
      url: `/webhooks/endpoint/${await withEndpoint(c, org)}/recover`,
      body: { since: '2020-01-01T00:00:00Z' },
    }),
  });
  securitySuite(ctx, 'POST /webhooks/endpoint/{id}/message/{messageId}/resend', {
    method: 'POST',
    privileges: [...privileges],
    resource: true,
    prepare: async (c, org) => {
      const endpointId = await withEndpoint(c, org);
      const now = c.clock.now();
      const { newId } = await import('../../core/ids.ts');
      const messageId = newId(now);
      await c.deps.db
        .insertInto('webhook_messages')
        .values({
          id: messageId,
          org_id: org.orgId,
          endpoint_id: endpointId,
          event_id: 'e',
          event_type: 'asset.created',
          status: 'failed',
          attempts: 8,
          total_attempts: 8,
          next_attempt_at: now,
          locked_until: null,
          locked_by: null,
          last_status: 500,
          last_attempt_at: now,
          created_at: now,
          updated_at: now,
        })
        .execute();
      return { url: `/webhooks/endpoint/${endpointId}/message/${messageId}/resend` };
    },
  });
});
