import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { runDeliveryOnce } from '../src/features/webhooks/index.ts';
import { createAsset, defaultTemplate } from './helpers/assets.ts';
import { forEachEngine, json } from './helpers/context.ts';
import { createTestOrg } from './helpers/factories.ts';
import { startReceiver, type Receiver } from './helpers/receiver.ts';

/** Issue 24, item 5: the reference's own webhook examples, sent unchanged (only the target hosts are local). */
forEachEngine('compatibility: webhook endpoints (issue 24)', (ctx) => {
  it('createSubscription (v2/requests/webhook.yaml example) gets the documented 30 s receiver deadline', async () => {
    const org = await createTestOrg(ctx());
    const created = await ctx().inject({
      method: 'POST',
      url: '/webhooks/endpoint',
      headers: { ...org.admin.headers, 'content-type': 'application/json' },
      payload: [
        {
          description: 'Notify System X for All Assets Created',
          eventTypes: ['asset.created', 'asset.updated', 'asset.downloaded', 'asset.deleted'],
          url: 'http://127.0.0.1:9/hook',
          rateLimit: 200,
        },
      ],
    });
    assert.equal(created.statusCode, 200, created.body);
    const got = json(
      await ctx().inject({ method: 'GET', url: `/webhooks/endpoint/${json(created).id}`, headers: org.admin.headers }),
    );
    assert.equal(got.timeoutSeconds, 30);
  });

  it('CreateOauth accepts the portal\'s own example body ("scope": [""]); empty scopes are dropped, the secret never returned', async () => {
    const org = await createTestOrg(ctx());
    const created = await ctx().inject({
      method: 'POST',
      url: '/webhooks/endpoint',
      headers: org.admin.headers,
      payload: [{ description: 'OAuth protected', url: 'http://127.0.0.1:9/hook', eventTypes: ['asset.created'] }],
    });
    const id = json(created).id as string;
    // developer-portal/webhooks/authentication.md, verbatim but for the token host.
    const body = {
      clientId: 'FbhKdCwuiItoSSRJpKXc6cjhpJFVy7JbB',
      tokenUrl: 'http://127.0.0.1:9/oauth/token',
      clientSecret: '458Gfd7774Gb1niGYu1JT9xfQobecM0i5UGOp_F5BU6DdGFEDCvz7r0xObfdf458Bn',
      extraParams: { audience: 'http://yourdomain.tenovos.io' },
      scope: [''],
    };
    for (const prefix of ['', '/v1']) {
      const put = await ctx().inject({
        method: 'PUT',
        url: `${prefix}/webhooks/endpoint/oauth/${id}`,
        headers: { ...org.admin.headers, 'content-type': 'application/json' },
        payload: body,
      });
      assert.equal(put.statusCode, 204, put.body);
    }
    const got = await ctx().inject({ method: 'GET', url: `/webhooks/endpoint/${id}`, headers: org.admin.headers });
    assert.deepEqual(json(got).oauth, {
      clientId: body.clientId,
      tokenUrl: body.tokenUrl,
      scope: [],
      extraParams: body.extraParams,
      authMethod: 'client_secret_basic',
    });
    assert.ok(!got.body.includes(body.clientSecret));
  });

  const receivers: Receiver[] = [];
  after(async () => {
    for (const r of receivers) await r.close();
  });

  it('target authentication: HTTP Basic or a custom header with a secret value, sent with every delivery, stored encrypted, never returned', async () => {
    const org = await createTestOrg(ctx());
    const headers = { ...org.admin.headers, 'content-type': 'application/json' };
    // The receiver answers 401 unless the request authenticates as the endpoint was told to.
    let expected = {
      name: 'authorization',
      value: `Basic ${Buffer.from('tessera-hooks:s3cret pass').toString('base64')}`,
    };
    const rx = await startReceiver((req, res) => {
      res.statusCode = req.headers[expected.name] === expected.value ? 200 : 401;
      res.end();
    });
    receivers.push(rx);
    const created = await ctx().inject({
      method: 'POST',
      url: '/webhooks/endpoint',
      headers,
      payload: [
        {
          description: 'Notify System X for All Assets Created',
          eventTypes: ['asset.created', 'asset.updated', 'asset.downloaded', 'asset.deleted'],
          url: rx.url,
          rateLimit: 200,
          authentication: { type: 'basic', username: 'tessera-hooks', password: 's3cret pass' },
        },
      ],
    });
    assert.equal(created.statusCode, 200, created.body);
    const id = json(created).id as string;
    const got = await ctx().inject({ method: 'GET', url: `/webhooks/endpoint/${id}`, headers });
    assert.deepEqual(json(got).authentication, { type: 'basic', username: 'tessera-hooks' });
    assert.ok(!got.body.includes('s3cret'), 'the password is never returned');
    const stored = await ctx()
      .deps.db.selectFrom('webhook_endpoints')
      .select(['target_auth_secret'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    assert.ok(stored.target_auth_secret && !stored.target_auth_secret.includes('s3cret'), 'stored encrypted');
    assert.equal(ctx().deps.keys.decrypt(stored.target_auth_secret), 's3cret pass');
    await createAsset(ctx(), org, { filename: 'a.jpg' });
    await createAsset(ctx(), org, {});
    await runDeliveryOnce(ctx().deps);
    const messages = json(
      await ctx().inject({ method: 'GET', url: `/webhooks/endpoint/${id}/message/list`, headers }),
    ).messages;
    assert.ok(messages.length >= 1);
    assert.ok(
      messages.every((m: { status: string }) => m.status === 'succeeded'),
      JSON.stringify(messages),
    );
    assert.equal(rx.received.at(-1)!.headers.authorization, expected.value);

    // A custom header with a secret value instead (PATCH), e.g. an API gateway's key header.
    expected = { name: 'x-auth-token', value: 'tok_9f2c1d7e' };
    const patched = await ctx().inject({
      method: 'PATCH',
      url: `/webhooks/endpoint/${id}`,
      headers,
      payload: { authentication: { type: 'header', headerName: 'X-Auth-Token', headerValue: 'tok_9f2c1d7e' } },
    });
    assert.equal(patched.statusCode, 204, patched.body);
    assert.deepEqual(
      json(await ctx().inject({ method: 'GET', url: `/webhooks/endpoint/${id}`, headers })).authentication,
      { type: 'header', headerName: 'X-Auth-Token' },
    );
    const before = rx.received.length;
    await createAsset(ctx(), org, {});
    await runDeliveryOnce(ctx().deps);
    assert.ok(rx.received.length > before);
    const last = rx.received.at(-1)!;
    assert.equal(last.headers['x-auth-token'], 'tok_9f2c1d7e');
    assert.equal(last.headers.authorization, undefined);
    assert.ok(
      json(await ctx().inject({ method: 'GET', url: `/webhooks/endpoint/${id}/message/list`, headers })).messages.every(
        (m: { status: string }) => m.status === 'succeeded',
      ),
    );
    // The audit log names the change, never the secret.
    const audit = await ctx().deps.db.selectFrom('audit_log').selectAll().where('target_id', '=', id).execute();
    assert.ok(audit.length > 0);
    assert.ok(!JSON.stringify(audit).includes('tok_9f2c1d7e') && !JSON.stringify(audit).includes('s3cret'));

    // Bad input is a 400 naming the field.
    for (const [authentication, field] of [
      [{ type: 'basic', username: 'u' }, 'body.authentication.password'],
      [{ type: 'basic', username: 'a:b', password: 'p' }, 'body.authentication.username'],
      [{ type: 'header', headerName: 'X-Key' }, 'body.authentication.headerValue'],
      [{ type: 'header', headerName: 'Content-Type', headerValue: 'v' }, 'body.authentication.headerName'],
      [{ type: 'header', headerName: 'Webhook-Signature', headerValue: 'v' }, 'body.authentication.headerName'],
      [{ type: 'header', headerName: 'X Key', headerValue: 'v' }, 'body.authentication.headerName'],
      [{ type: 'header', headerName: 'X-Key', headerValue: 'v\r\nX-Injected: 1' }, 'body.authentication.headerValue'],
    ] as const) {
      const res = await ctx().inject({
        method: 'PATCH',
        url: `/webhooks/endpoint/${id}`,
        headers,
        payload: { authentication },
      });
      assert.equal(res.statusCode, 400, `${JSON.stringify(authentication)}: ${res.body}`);
      assert.equal(json(res).details[0].field, field, res.body);
    }
    // Basic and an OAuth client would both send Authorization: 409 either way round.
    const oauth = { clientId: 'c', clientSecret: 's', tokenUrl: 'http://127.0.0.1:9/token' };
    assert.equal(
      (await ctx().inject({ method: 'PUT', url: `/webhooks/endpoint/oauth/${id}`, headers, payload: oauth }))
        .statusCode,
      204,
    );
    assert.equal(
      (
        await ctx().inject({
          method: 'PATCH',
          url: `/webhooks/endpoint/${id}`,
          headers,
          payload: { authentication: { type: 'basic', username: 'u', password: 'p' } },
        })
      ).statusCode,
      409,
    );
    assert.equal(
      (await ctx().inject({ method: 'DELETE', url: `/webhooks/endpoint/oauth/${id}`, headers })).statusCode,
      204,
    );
    assert.equal(
      (
        await ctx().inject({
          method: 'PATCH',
          url: `/webhooks/endpoint/${id}`,
          headers,
          payload: { authentication: { type: 'basic', username: 'u', password: 'p' } },
        })
      ).statusCode,
      204,
    );
    assert.equal(
      (await ctx().inject({ method: 'PUT', url: `/webhooks/endpoint/oauth/${id}`, headers, payload: oauth }))
        .statusCode,
      409,
    );
    // none removes it.
    assert.equal(
      (
        await ctx().inject({
          method: 'PATCH',
          url: `/webhooks/endpoint/${id}`,
          headers,
          payload: { authentication: { type: 'none' } },
        })
      ).statusCode,
      204,
    );
    assert.equal(
      json(await ctx().inject({ method: 'GET', url: `/webhooks/endpoint/${id}`, headers })).authentication,
      null,
    );
    assert.equal(
      (
        await ctx()
          .deps.db.selectFrom('webhook_endpoints')
          .select('target_auth_secret')
          .where('id', '=', id)
          .executeTakeFirstOrThrow()
      ).target_auth_secret,
      null,
    );
  });

  it('payloadFormat "legacy" delivers the reference\'s older event-feed record (its own handler test\'s asset update), signed', async () => {
    const org = await createTestOrg(ctx());
    const { attr } = await defaultTemplate(ctx(), org);
    const rx = await startReceiver();
    receivers.push(rx);
    const created = json(
      await ctx().inject({
        method: 'POST',
        url: '/webhooks/endpoint',
        headers: org.admin.headers,
        payload: [
          {
            description: 'Legacy event feed',
            url: rx.url,
            eventTypes: ['asset.metadata.updated', 'asset.created'],
            payloadFormat: 'legacy',
          },
        ],
      }),
    );
    assert.equal(
      json(await ctx().inject({ method: 'GET', url: `/webhooks/endpoint/${created.id}`, headers: org.admin.headers }))
        .payloadFormat,
      'legacy',
    );
    const asset = await createAsset(ctx(), org, {
      metadata: [{ metadataDefinitionId: attr('title'), metadataDefinitionValue: 'Before' }],
    });
    const update = await ctx().inject({
      method: 'PATCH',
      url: `/v1/asset/${asset.objectId}`,
      headers: org.admin.headers,
      payload: { metadata: [{ metadataDefinitionId: attr('title'), metadataDefinitionValue: 'French Oui' }] },
    });
    assert.equal(update.statusCode, 200, update.body);
    await runDeliveryOnce(ctx().deps);
    const bodies = rx.received.map((r) => {
      // Signed like every delivery: the signature covers the legacy body as sent.
      new Webhook(created.secret).verify(r.body, r.headers as Record<string, string>);
      return JSON.parse(r.body);
    });
    // The record of the reference's handler test: {"id","createdAt","createdBy","customerId","service":"asset","module":"asset","action":"update",
    // "data":{"objectId","lastUpdatedEpoch","capturedChanges":{"lastUpdatedBy","lastUpdatedEpoch","metadataDocument"…},"change":["metadataDocument"]}}
    const record = bodies.find((b) => b.action === 'update');
    assert.ok(record, JSON.stringify(bodies));
    assert.deepEqual(Object.keys(record).sort(), [
      'action',
      'createdAt',
      'createdBy',
      'customerId',
      'data',
      'id',
      'module',
      'service',
    ]);
    assert.deepEqual(Object.keys(record.data).sort(), ['capturedChanges', 'change', 'lastUpdatedEpoch', 'objectId']);
    assert.match(record.id, /^[0-9a-f-]{36}$/);
    assert.equal(typeof record.createdAt, 'number');
    assert.equal(record.createdBy, org.admin.userId);
    assert.equal(record.customerId, org.customerId);
    assert.equal(record.service, 'asset');
    assert.equal(record.module, 'asset');
    assert.equal(record.data.objectId, asset.objectId);
    assert.equal(record.data.lastUpdatedEpoch, record.createdAt);
    assert.deepEqual(record.data.change, ['metadataDocument']);
    assert.equal(record.data.capturedChanges.lastUpdatedBy, org.admin.userId);
    assert.equal(record.data.capturedChanges.lastUpdatedEpoch, record.createdAt);
    assert.equal(record.data.capturedChanges.asset.id, asset.objectId, "Tessera's topic object beside");
    const create = bodies.find((b) => b.action === 'create');
    assert.ok(create);
    assert.equal(create.data.objectId, asset.objectId);
    assert.equal(create.module, 'asset');
  });
});
