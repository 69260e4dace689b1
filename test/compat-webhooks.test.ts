import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine, json } from './helpers/context.ts';
import { createTestOrg } from './helpers/factories.ts';

/** Issue 24, item 5: the reference's own webhook examples, sent unchanged (only the target hosts are local). */
forEachEngine('compatibility: webhook endpoints (issue 24)', (ctx) => {
  it('createSubscription (v2/requests/webhook.yaml example) gets the documented 30 s receiver deadline', async () => {
    const org = await createTestOrg(ctx());
    const created = await ctx().inject({
      method: 'POST', url: '/webhooks/endpoint', headers: { ...org.admin.headers, 'content-type': 'application/json' },
      payload: [{ description: 'Notify System X for All Assets Created', eventTypes: ['asset.created', 'asset.updated', 'asset.downloaded', 'asset.deleted'], url: 'http://127.0.0.1:9/hook', rateLimit: 200 }],
    });
    assert.equal(created.statusCode, 200, created.body);
    const got = json(await ctx().inject({ method: 'GET', url: `/webhooks/endpoint/${json(created).id}`, headers: org.admin.headers }));
    assert.equal(got.timeoutSeconds, 30);
  });

  it('CreateOauth accepts the portal\'s own example body ("scope": [""]); empty scopes are dropped, the secret never returned', async () => {
    const org = await createTestOrg(ctx());
    const created = await ctx().inject({ method: 'POST', url: '/webhooks/endpoint', headers: org.admin.headers, payload: [{ description: 'OAuth protected', url: 'http://127.0.0.1:9/hook', eventTypes: ['asset.created'] }] });
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
      const put = await ctx().inject({ method: 'PUT', url: `${prefix}/webhooks/endpoint/oauth/${id}`, headers: { ...org.admin.headers, 'content-type': 'application/json' }, payload: body });
      assert.equal(put.statusCode, 204, put.body);
    }
    const got = await ctx().inject({ method: 'GET', url: `/webhooks/endpoint/${id}`, headers: org.admin.headers });
    assert.deepEqual(json(got).oauth, { clientId: body.clientId, tokenUrl: body.tokenUrl, scope: [], extraParams: body.extraParams, authMethod: 'client_secret_basic' });
    assert.ok(!got.body.includes(body.clientSecret));
  });
});
