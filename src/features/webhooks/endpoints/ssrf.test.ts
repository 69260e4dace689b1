import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine, json } from '../../../../test/helpers/context.ts';
import { createTestOrg } from '../../../../test/helpers/factories.ts';
import { startReceiver } from '../../../../test/helpers/receiver.ts';
import { publishEvent } from '../../../core/events/index.ts';
import { newId } from '../../../core/ids.ts';
import { runDeliveryOnce } from '../index.ts';

// The operator has NOT allowed private targets here (production default).
forEachEngine(
  'webhook SSRF defence',
  (ctx) => {
    const internal = [
      'http://127.0.0.1:8080/hook',
      'http://localhost/hook',
      'http://[::1]/hook',
      'http://[::ffff:127.0.0.1]/hook',
      'http://2130706433/hook',
      'http://0x7f000001/hook',
      'http://0.0.0.0/hook',
      'http://10.1.2.3/hook',
      'http://192.168.0.1/hook',
      'http://172.16.0.1/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://100.64.0.1/hook',
      'http://[fd00::1]/hook',
      'http://[fe80::1]/hook',
    ];

    it('refuses internal targets when an endpoint is created or updated, naming the field', async () => {
      const org = await createTestOrg(ctx());
      for (const url of internal) {
        const res = await ctx().inject({
          method: 'POST',
          url: '/webhooks/endpoint',
          headers: org.admin.headers,
          payload: [{ description: 'Internal', url, eventTypes: ['*'] }],
        });
        assert.equal(res.statusCode, 400, `${url}: ${res.body}`);
        assert.equal(json(res).details[0].field, 'body.0.url', url);
      }
      const ok = await ctx().inject({
        method: 'POST',
        url: '/webhooks/endpoint',
        headers: org.admin.headers,
        payload: [{ description: 'Public', url: 'https://93.184.215.14/hook', eventTypes: ['*'] }],
      });
      assert.equal(ok.statusCode, 200, ok.body);
      const id = json(ok).id;
      const patch = await ctx().inject({
        method: 'PATCH',
        url: `/webhooks/endpoint/${id}`,
        headers: org.admin.headers,
        payload: { url: 'http://169.254.169.254/' },
      });
      assert.equal(patch.statusCode, 400);
      assert.equal(json(patch).details[0].field, 'body.url');
      const oauth = await ctx().inject({
        method: 'PUT',
        url: `/webhooks/endpoint/oauth/${id}`,
        headers: org.admin.headers,
        payload: { clientId: 'c', clientSecret: 's', tokenUrl: 'http://127.0.0.1/token' },
      });
      assert.equal(oauth.statusCode, 400);
      assert.equal(json(oauth).details[0].field, 'body.tokenUrl');
    });

    it('refuses to connect to an internal address even when the stored URL slipped past the check', async () => {
      const org = await createTestOrg(ctx());
      const canary = await startReceiver();
      const now = ctx().clock.now();
      const endpointId = newId(now);
      await ctx()
        .deps.db.insertInto('webhook_endpoints')
        .values({
          id: endpointId,
          org_id: org.orgId,
          description: 'Rebound',
          url: canary.url,
          event_types: '["*"]',
          rate_limit: null,
          timeout_ms: 5000,
          disabled: 0,
          disabled_reason: null,
          secret: ctx().deps.keys.encrypt('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'),
          previous_secret: null,
          previous_secret_until: null,
          oauth: null,
          oauth_client_secret: null,
          target_auth: null,
          target_auth_secret: null,
          payload_format: 'standard',
          failing_since: null,
          created_at: now,
          updated_at: now,
        })
        .execute();
      await ctx()
        .deps.db.transaction()
        .execute((trx) =>
          publishEvent(trx, now, {
            orgId: org.orgId,
            type: 'asset.deleted',
            actor: null,
            data: { asset: { id: newId(), filename: 'a', metadataTemplate: null, securityTemplates: [] } },
          }),
        );
      await runDeliveryOnce(ctx().deps);
      assert.equal(canary.received.length, 0);
      const attempts = json(
        await ctx().inject({
          method: 'GET',
          url: `/webhooks/endpoint/${endpointId}/attempt/list`,
          headers: org.admin.headers,
        }),
      ).attempts;
      assert.equal(attempts.length, 1);
      assert.equal(attempts[0].success, false);
      assert.equal(attempts[0].errorClass, 'ssrf_blocked');
      await canary.close();
    });
  },
  { env: { TESSERA_ALLOW_PRIVATE_TARGETS: 'false' } },
);
