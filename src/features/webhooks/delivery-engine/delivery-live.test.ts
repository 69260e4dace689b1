import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { it } from 'node:test';
import { forEachEngine, json } from '../../../../test/helpers/context.ts';
import { createTestOrg } from '../../../../test/helpers/factories.ts';
import { startReceiver } from '../../../../test/helpers/receiver.ts';
import { waitFor } from '../../../../test/helpers/wait.ts';
import { publishEvent } from '../../../core/events/index.ts';
import { newId } from '../../../core/ids.ts';
import { createDeliveryEngine } from '../index.ts';

// The real delivery loop (as `serve` runs it), on the real clock.
forEachEngine(
  'webhook delivery loop',
  (ctx) => {
    it('a hanging endpoint does not hold up deliveries to a healthy one', async () => {
      const org = await createTestOrg(ctx());
      const held: ServerResponse[] = [];
      const hanging = await startReceiver((_req, res) => {
        held.push(res);
      });
      const healthy = await startReceiver();
      const create = async (url: string) =>
        json(
          await ctx().inject({
            method: 'POST',
            url: '/webhooks/endpoint',
            headers: org.admin.headers,
            payload: [{ description: 'Live test', url, eventTypes: ['asset.*'], timeoutSeconds: 30 }],
          }),
        );
      const { id: hangingId } = await create(hanging.url);
      const engine = createDeliveryEngine(ctx().deps, { pollMs: 10, endpointConcurrency: 4 });
      engine.start();
      try {
        const publish = () =>
          ctx()
            .deps.db.transaction()
            .execute((trx) =>
              publishEvent(trx, Date.now(), {
                orgId: org.orgId,
                type: 'asset.created',
                actor: null,
                data: { asset: { id: newId(), filename: 'a.png', metadataTemplate: null, securityTemplates: [] } },
              }),
            );
        for (let i = 0; i < 20; i++) await publish();
        await waitFor(() => held.length === 4, 'the hanging endpoint to hold its concurrency');
        const { id: healthyId } = await create(healthy.url);
        for (let i = 0; i < 10; i++) await publish();
        await waitFor(() => healthy.received.length === 10, 'the healthy endpoint').catch(async (error: Error) => {
          const rows = await ctx()
            .deps.db.selectFrom('webhook_messages')
            .select(['endpoint_id', 'status', 'locked_by', 'locked_until', 'next_attempt_at'])
            .execute();
          const queued = await ctx().deps.db.selectFrom('event_fanout_queue').select('event_id').execute();
          throw new Error(
            `${error.message}: healthy got ${healthy.received.length}; messages ${JSON.stringify(rows.map((r) => [r.endpoint_id === healthyId, r.status, r.locked_until]))}; events not fanned out ${queued.length}`,
          );
        });
        assert.equal(held.length, 4, 'the hanging endpoint still has only its 4 requests open, none answered');
        await waitFor(
          async () =>
            (
              await ctx()
                .deps.db.selectFrom('webhook_messages')
                .select('id')
                .where('endpoint_id', '=', healthyId)
                .where('status', '=', 'succeeded')
                .execute()
            ).length === 10,
          'the healthy attempts to be recorded',
        );
        // Disabling the hanging endpoint stops what this process still had queued for it (30 messages, 4 in flight):
        // the queued ones are marked failed (recoverable).
        assert.equal(
          (
            await ctx().inject({
              method: 'PATCH',
              url: `/webhooks/endpoint/${hangingId}`,
              headers: org.admin.headers,
              payload: { disabled: true },
            })
          ).statusCode,
          204,
        );
        await waitFor(
          async () =>
            (
              await ctx()
                .deps.db.selectFrom('webhook_messages')
                .select('id')
                .where('endpoint_id', '=', hangingId)
                .where('status', '=', 'failed')
                .execute()
            ).length === 26,
          'the queued messages of the disabled endpoint to be dropped',
        ).catch(async (error: Error) => {
          const rows = await ctx()
            .deps.db.selectFrom('webhook_messages')
            .select(['status'])
            .where('endpoint_id', '=', hangingId)
            .execute();
          throw new Error(`${error.message}: ${JSON.stringify(rows.map((r) => r.status))}`);
        });
        assert.equal(held.length, 4);
      } finally {
        for (const res of held) res.end();
        hanging.respond((_req, res) => res.end());
        await engine.stop();
        await hanging.close();
        await healthy.close();
      }
    });
  },
  { realClock: true },
);
