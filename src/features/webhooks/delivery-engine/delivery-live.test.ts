import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { it } from 'node:test';
import { forEachEngine, json } from '../../../../test/helpers/context.ts';
import { createTestOrg } from '../../../../test/helpers/factories.ts';
import { startReceiver } from '../../../../test/helpers/receiver.ts';
import { waitFor } from '../../../../test/helpers/wait.ts';
import { sql } from 'kysely';
import { publishEvent } from '../../../core/events/index.ts';
import { newId } from '../../../core/ids.ts';
import { createDeliveryEngine } from '../index.ts';

// The real delivery loop (as `serve` runs it), on the real clock.
forEachEngine(
  'webhook delivery loop',
  (ctx) => {
    const endpointFor = async (org: Awaited<ReturnType<typeof createTestOrg>>, url: string): Promise<string> =>
      json(
        await ctx().inject({
          method: 'POST',
          url: '/webhooks/endpoint',
          headers: org.admin.headers,
          payload: [{ description: 'Live test', url, eventTypes: ['asset.*'], timeoutSeconds: 30 }],
        }),
      ).id;
    const publishAsset = (orgId: string) =>
      ctx()
        .deps.db.transaction()
        .execute((trx) =>
          publishEvent(trx, Date.now(), {
            orgId,
            type: 'asset.created',
            actor: null,
            data: { asset: { id: newId(), filename: 'a.png', metadataTemplate: null, securityTemplates: [] } },
          }),
        );

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

    // Decision 0035 C: a message in flight for the first time has no row until its outcome is recorded.
    it('a message held without a row by an engine stopped before its outcome is listed as delivering, and resend answers 409', async () => {
      const org = await createTestOrg(ctx());
      const receiver = await startReceiver(() => {});
      const endpoint = await endpointFor(org, receiver.url);
      const engine = createDeliveryEngine(ctx().deps, { pollMs: 10, leaseMs: 60_000 });
      engine.start();
      let eventId: string;
      try {
        eventId = await publishAsset(org.orgId);
        await waitFor(() => receiver.received.length === 1, 'the first delivery to arrive');
      } finally {
        await engine.abandon();
        await receiver.close();
      }
      const webhookId = receiver.received[0]!.headers['webhook-id'];
      const rows = await ctx()
        .deps.db.selectFrom('webhook_messages')
        .select('id')
        .where('org_id', '=', org.orgId)
        .execute();
      assert.equal(rows.length, 0, 'no message row: it is written at its outcome');
      const list = async (query = '') => {
        const res = await ctx().inject({
          method: 'GET',
          url: `/webhooks/endpoint/${endpoint}/message/list${query}`,
          headers: org.admin.headers,
        });
        assert.equal(res.statusCode, 200, res.body);
        return json(res).messages as { id: string; status: string; attempts: number; eventId: string }[];
      };
      const [message, ...more] = await list();
      assert.deepEqual(more, []);
      assert.equal(message!.id, webhookId);
      assert.equal(message!.eventId, eventId);
      assert.equal(message!.status, 'delivering');
      assert.equal(message!.attempts, 0);
      assert.equal((await list('?status=delivering')).length, 1);
      assert.equal((await list('?status=pending')).length, 0);
      assert.equal((await list('?eventType=asset.updated')).length, 0);
      assert.equal((await list(`?after=${webhookId}`)).length, 0);
      const resend = await ctx().inject({
        method: 'POST',
        url: `/webhooks/endpoint/${endpoint}/message/${webhookId}/resend`,
        headers: org.admin.headers,
      });
      assert.equal(resend.statusCode, 409, resend.body);
      assert.equal(json(resend).code, 'conflict');
      assert.match(json(resend).message, /being delivered/);
      // Another organization does not see it.
      const other = await createTestOrg(ctx());
      const foreign = await ctx().inject({
        method: 'GET',
        url: `/webhooks/endpoint/${endpoint}/message/list`,
        headers: other.admin.headers,
      });
      assert.equal(foreign.statusCode, 404);
    });

    // Decision 0035 C: the holds move only once the outcome commit has committed.
    it('an outcome commit that fails leaves its messages to be sent again, even when the rest of their event is recorded', async () => {
      const org = await createTestOrg(ctx());
      const fast = await startReceiver();
      const slow = await startReceiver(async (_req, res) => {
        await new Promise((resolve) => setTimeout(resolve, 400));
        res.end('ok');
      });
      const fastId = await endpointFor(org, fast.url);
      await endpointFor(org, slow.url);
      const db = ctx().deps.db;
      // The database refuses the fast endpoint's first outcome commit. On PostgreSQL at COMMIT (a
      // deferred constraint trigger), after every statement of the batch ran: without holds moved
      // only after the commit, the failed batch had already counted its message off its event's
      // hold, the slow endpoint's outcome then deleted the event's queue row, and the refused
      // message was never sent again. (SQLite has no deferred trigger: there the INSERT fails.)
      if (ctx().deps.engine === 'postgres') {
        await sql`create function refuse_attempt() returns trigger language plpgsql as $$
          begin if new.endpoint_id = ${sql.lit(fastId)} then raise exception 'refused by the test'; end if; return new; end $$`.execute(
          db,
        );
        await sql`create constraint trigger refuse_attempt after insert on webhook_attempts deferrable initially deferred for each row execute function refuse_attempt()`.execute(
          db,
        );
      } else {
        await sql`create trigger refuse_attempt before insert on webhook_attempts when new.endpoint_id = ${sql.lit(fastId)}
          begin select raise(abort, 'refused by the test'); end`.execute(db);
      }
      const engine = createDeliveryEngine(ctx().deps, { pollMs: 10, leaseMs: 1500 });
      engine.start();
      try {
        const eventId = await publishAsset(org.orgId);
        await waitFor(
          async () =>
            (await db.selectFrom('webhook_messages').select('id').where('org_id', '=', org.orgId).execute()).length ===
            1,
          "the slow endpoint's outcome",
        );
        assert.equal(fast.received.length, 1);
        await sql`drop trigger refuse_attempt${ctx().deps.engine === 'postgres' ? sql` on webhook_attempts` : sql``}`.execute(
          db,
        );
        // Its event's queue row was kept and runs out: fanned out again, the message is sent again and recorded.
        await waitFor(
          async () =>
            (
              await db
                .selectFrom('webhook_messages')
                .select('id')
                .where('endpoint_id', '=', fastId)
                .where('status', '=', 'succeeded')
                .execute()
            ).length === 1,
          'the refused message to be sent again and recorded',
        );
        assert.equal(fast.received.length, 2);
        assert.equal(fast.received[1]!.headers['webhook-id'], fast.received[0]!.headers['webhook-id']);
        await waitFor(
          async () =>
            (await db.selectFrom('event_fanout_queue').select('event_id').where('event_id', '=', eventId).execute())
              .length === 0,
          'the queue row to go',
        );
      } finally {
        await engine.stop();
        await fast.close();
        await slow.close();
      }
    });

    // A holder whose queue lease ran out while it was sending records after the message's new holder did.
    it('a slow holder records its attempt beside the row its successor wrote (the plain insert conflicts, the batch is written again)', async () => {
      const org = await createTestOrg(ctx());
      const waiting: ServerResponse[] = [];
      const receiver = await startReceiver((_req, res) => {
        if (waiting.length === 0) waiting.push(res);
        else res.end('ok');
      });
      const endpoint = await endpointFor(org, receiver.url);
      const db = ctx().deps.db;
      const slow = createDeliveryEngine(ctx().deps, { pollMs: 10 });
      slow.start();
      try {
        const eventId = await publishAsset(org.orgId);
        await waitFor(() => waiting.length === 1, 'the first send to hang');
        // Its lease runs out (as when its renewals fail): another engine fans the event out again.
        await db.updateTable('event_fanout_queue').set({ locked_until: 0 }).where('event_id', '=', eventId).execute();
        const successor = createDeliveryEngine(ctx().deps, { manual: true });
        assert.equal((await successor.runOnce()).succeeded, 1);
        assert.equal(receiver.received.length, 2);
        waiting[0]!.end('ok');
        const attempts = () =>
          db.selectFrom('webhook_attempts').select(['message_id', 'ok']).where('endpoint_id', '=', endpoint).execute();
        await waitFor(async () => (await attempts()).length === 2, "the slow holder's attempt to be recorded");
        const messages = await db
          .selectFrom('webhook_messages')
          .select(['id', 'status', 'total_attempts'])
          .where('endpoint_id', '=', endpoint)
          .execute();
        assert.deepEqual(
          messages.map((m) => [m.id, m.status]),
          [[receiver.received[0]!.headers['webhook-id'], 'succeeded']],
        );
        assert.deepEqual(
          (await attempts()).map((a) => [a.message_id, a.ok]),
          [
            [messages[0]!.id, 1],
            [messages[0]!.id, 1],
          ],
        );
      } finally {
        for (const res of waiting) if (!res.writableEnded) res.end('ok');
        await slow.stop();
        await receiver.close();
      }
    });
  },
  { realClock: true },
);
