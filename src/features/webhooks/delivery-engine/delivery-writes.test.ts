// How the delivery worker writes its log under load: a backlog is leased as the fan-out writes it
// (no second write and no claim per message), and on PostgreSQL, where the log has no foreign key
// to its endpoint (migration 0020), an endpoint cannot be deleted under a batch that writes for it.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { sql } from 'kysely';
import { forEachEngine, json, type TestContext } from '../../../../test/helpers/context.ts';
import { createTestOrg, type TestOrg } from '../../../../test/helpers/factories.ts';
import { startReceiver } from '../../../../test/helpers/receiver.ts';
import { settlesWithin, signal, waitFor } from '../../../../test/helpers/wait.ts';
import { publishEvents } from '../../../core/events/index.ts';
import { newId } from '../../../core/ids.ts';
import { recordOutcomes } from './record-outcomes.ts';
import { fanOut } from './message-store.ts';
import { createDeliveryEngine, runDeliveryOnce } from '../index.ts';

const assetEvent = (org: TestOrg) => ({
  orgId: org.orgId,
  type: 'asset.created' as const,
  actor: null,
  data: { asset: { id: newId(), filename: 'photo.jpg', metadataTemplate: null, securityTemplates: [] } },
});

async function createEndpoint(ctx: TestContext, org: TestOrg, url: string): Promise<string> {
  const res = await ctx.inject({
    method: 'POST',
    url: '/webhooks/endpoint',
    headers: org.admin.headers,
    payload: [{ description: 'Writes test', url, eventTypes: ['asset.*'] }],
  });
  assert.equal(res.statusCode, 200, res.body);
  return (json(res) as { id: string }).id;
}

const count = async (ctx: TestContext, table: 'webhook_messages' | 'webhook_attempts', endpointId: string) =>
  Number(
    (
      await ctx.deps.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('endpoint_id', '=', endpointId)
        .executeTakeFirstOrThrow()
    ).n,
  );

/**
 * Deletes an endpoint as `deleteEndpoint` does (its row, then its log) in a transaction that stops
 * after the row, holding its lock, until `release` is called.
 */
function deleteEndpointUntil(ctx: TestContext, endpointId: string) {
  const gate = signal();
  const locked = signal();
  const done = ctx.deps.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('webhook_endpoints').where('id', '=', endpointId).execute();
    locked.resolve();
    await gate.promise;
    await trx.deleteFrom('webhook_attempts').where('endpoint_id', '=', endpointId).execute();
    await trx.deleteFrom('webhook_messages').where('endpoint_id', '=', endpointId).execute();
  });
  return { locked: locked.promise, release: gate.resolve, done };
}

forEachEngine(
  'webhook delivery writes',
  (ctx) => {
    it("a backlog ten times an endpoint's queue is leased as the fan-out writes it: no message waits for a claim", async () => {
      const org = await createTestOrg(ctx());
      const rx = await startReceiver();
      const endpointId = await createEndpoint(ctx(), org, rx.url);
      // Concurrency 2: this process holds at most 32 messages of the endpoint.
      const total = 320;
      await ctx()
        .deps.db.transaction()
        .execute((trx) =>
          publishEvents(
            trx,
            Date.now(),
            Array.from({ length: total }, () => assetEvent(org)),
          ),
        );
      const engine = createDeliveryEngine(ctx().deps, { pollMs: 5, endpointConcurrency: 2 });
      engine.start();
      try {
        await waitFor(
          async () =>
            Number(
              (
                await ctx()
                  .deps.db.selectFrom('webhook_messages')
                  .select((eb) => eb.fn.countAll<number>().as('n'))
                  .where('endpoint_id', '=', endpointId)
                  .where('status', '=', 'succeeded')
                  .executeTakeFirstOrThrow()
              ).n,
            ) === total,
          'every message to succeed',
        );
      } finally {
        await engine.stop();
        await rx.close();
      }
      assert.equal(rx.received.length, total);
      assert.equal(await count(ctx(), 'webhook_attempts', endpointId), total);
      // Before, the fan-out wrote whatever did not fit as pending, and 90 % came back through a claim.
      const stats = engine.stats();
      assert.deepEqual({ atFanOut: stats.atFanOut, byClaim: stats.byClaim }, { atFanOut: total, byClaim: 0 });
      // No slivers: each fan-out but the last takes at least a quarter of the endpoint's capacity
      // of 32 (8 events), where it used to fan out again as soon as a few sends had finished.
      assert.ok(stats.fanOuts <= total / 8 + 1, `${stats.fanOuts} fan-outs for ${total} events`);
    });

    it('an endpoint that went idle does not count: the backlog of a busy one is still paced to its own room', async () => {
      const quiet = await createTestOrg(ctx());
      const busy = await createTestOrg(ctx());
      const rx = await startReceiver();
      const quietId = await createEndpoint(ctx(), quiet, rx.url);
      const busyId = await createEndpoint(ctx(), busy, rx.url);
      const succeeded = async (endpointId: string) =>
        Number(
          (
            await ctx()
              .deps.db.selectFrom('webhook_messages')
              .select((eb) => eb.fn.countAll<number>().as('n'))
              .where('endpoint_id', '=', endpointId)
              .where('status', '=', 'succeeded')
              .executeTakeFirstOrThrow()
          ).n,
        );
      const engine = createDeliveryEngine(ctx().deps, { pollMs: 5, endpointConcurrency: 2 });
      engine.start();
      const total = 320;
      try {
        await ctx()
          .deps.db.transaction()
          .execute((trx) => publishEvents(trx, Date.now(), [assetEvent(quiet)]));
        await waitFor(async () => (await succeeded(quietId)) === 1, "the quiet endpoint's message");
        // Its queue is empty (room for 32) and it took nothing for over a second.
        await new Promise((r) => setTimeout(r, 1100));
        await ctx()
          .deps.db.transaction()
          .execute((trx) =>
            publishEvents(
              trx,
              Date.now(),
              Array.from({ length: total }, () => assetEvent(busy)),
            ),
          );
        await waitFor(async () => (await succeeded(busyId)) === total, 'every message of the busy endpoint');
      } finally {
        await engine.stop();
        await rx.close();
      }
      const stats = engine.stats();
      assert.deepEqual({ atFanOut: stats.atFanOut, byClaim: stats.byClaim }, { atFanOut: total + 1, byClaim: 0 });
    });

    it('a fan-out and an outcome batch of 250 rows (one statement each on PostgreSQL) write every row exactly once', async () => {
      const org = await createTestOrg(ctx());
      const endpointId = await createEndpoint(ctx(), org, 'http://127.0.0.1:9/unused');
      const total = 250;
      await ctx()
        .deps.db.transaction()
        .execute((trx) =>
          publishEvents(
            trx,
            Date.now(),
            Array.from({ length: total }, () => assetEvent(org)),
          ),
        );
      const workerId = newId();
      const now = Date.now();
      const fan = await fanOut(ctx().deps.db, ctx().deps.engine, now, {
        workerId,
        leaseMs: 60_000,
        limit: 500,
        canTake: () => true,
      });
      assert.equal(fan.events, total);
      assert.equal(fan.held.length, total);
      // Held without a row (decision 0035 C): the events' queue rows are leased to this worker instead.
      assert.equal(await count(ctx(), 'webhook_messages', endpointId), 0);
      const eventIds = fan.held.map((m) => m.eventId);
      const queued = () =>
        ctx().deps.db.selectFrom('event_fanout_queue').select('locked_by').where('event_id', 'in', eventIds).execute();
      assert.deepEqual(
        (await queued()).map((q) => q.locked_by),
        eventIds.map(() => workerId),
      );
      const summary = await recordOutcomes(
        ctx().deps.db,
        workerId,
        now + 1,
        fan.held.map((message) => ({ message, at: now, ok: true, status: 200, latencyMs: 1, responseBody: 'ok' })),
      );
      assert.equal(summary.succeeded, total);
      assert.deepEqual(await queued(), [], 'every event recorded: its queue row is gone');
      const attempts = await ctx()
        .deps.db.selectFrom('webhook_attempts')
        .select(['message_id', 'attempt'])
        .where('endpoint_id', '=', endpointId)
        .execute();
      assert.equal(attempts.length, total);
      assert.equal(new Set(attempts.map((a) => a.message_id)).size, total);
      assert.ok(attempts.every((a) => a.attempt === 1));
      const states = await ctx()
        .deps.db.selectFrom('webhook_messages')
        .select(['status', 'attempts', 'locked_by'])
        .where('endpoint_id', '=', endpointId)
        .execute();
      assert.ok(states.every((m) => m.status === 'succeeded' && m.attempts === 1 && m.locked_by === null));
    });

    it('a receiver answering with NUL characters is logged (replaced by U+FFFD), not a batch that fails on every retry', async () => {
      const org = await createTestOrg(ctx());
      const rx = await startReceiver((_req, res) => {
        res.end('ok\u0000done');
      });
      try {
        const endpointId = await createEndpoint(ctx(), org, rx.url);
        await ctx()
          .deps.db.transaction()
          .execute((trx) => publishEvents(trx, Date.now(), [assetEvent(org), assetEvent(org)]));
        const summary = await runDeliveryOnce(ctx().deps);
        assert.equal(summary.succeeded, 2);
        const attempts = await ctx()
          .deps.db.selectFrom('webhook_attempts')
          .select(['response_body', 'ok'])
          .where('endpoint_id', '=', endpointId)
          .execute();
        assert.deepEqual(
          attempts.map((a) => [a.ok, a.response_body]),
          [
            [1, 'ok\uFFFDdone'],
            [1, 'ok\uFFFDdone'],
          ],
        );
      } finally {
        await rx.close();
      }
    });

    it('PostgreSQL: recording attempts waits for an endpoint being deleted, then writes nothing for it', async (t) => {
      if (ctx().engine !== 'postgres') return t.skip('SQLite keeps its foreign keys and has one writer');
      const org = await createTestOrg(ctx());
      const endpointId = await createEndpoint(ctx(), org, 'http://127.0.0.1:9/hook');
      await ctx()
        .deps.db.transaction()
        .execute((trx) => publishEvents(trx, Date.now(), [assetEvent(org)]));
      const fan = await fanOut(ctx().deps.db, 'postgres', Date.now(), {
        workerId: 'w1',
        leaseMs: 60_000,
        limit: 500,
        canTake: () => true,
      });
      const message = fan.held.find((m) => m.endpointId === endpointId)!;
      assert.ok(message);

      const deletion = deleteEndpointUntil(ctx(), endpointId);
      await deletion.locked;
      const recording = recordOutcomes(ctx().deps.db, 'w1', Date.now(), [
        { message, at: Date.now(), ok: true, status: 200, latencyMs: 3, responseBody: 'ok' },
      ]);
      try {
        assert.equal(await settlesWithin(recording, 300), false, 'the batch waits for the delete');
      } finally {
        deletion.release();
      }
      await deletion.done;
      const summary = await recording;
      assert.equal(summary.succeeded, 0);
      assert.equal(await count(ctx(), 'webhook_attempts', endpointId), 0);
      assert.equal(await count(ctx(), 'webhook_messages', endpointId), 0);
    });

    it('PostgreSQL: the fan-out waits for an endpoint being deleted, then writes no message for it', async (t) => {
      if (ctx().engine !== 'postgres') return t.skip('SQLite keeps its foreign keys and has one writer');
      const org = await createTestOrg(ctx());
      const endpointId = await createEndpoint(ctx(), org, 'http://127.0.0.1:9/hook');
      const deletion = deleteEndpointUntil(ctx(), endpointId);
      await deletion.locked;
      await ctx()
        .deps.db.transaction()
        .execute((trx) => publishEvents(trx, Date.now(), [assetEvent(org)]));
      const fanning = fanOut(ctx().deps.db, 'postgres', Date.now(), {
        workerId: 'w1',
        leaseMs: 60_000,
        limit: 500,
        canTake: () => true,
      });
      try {
        assert.equal(await settlesWithin(fanning, 300), false, 'the fan-out waits for the delete');
      } finally {
        deletion.release();
      }
      await deletion.done;
      await fanning;
      assert.equal(await count(ctx(), 'webhook_messages', endpointId), 0);
    });

    it('PostgreSQL: deleting an endpoint waits for a batch writing for it, and removes what it wrote', async (t) => {
      if (ctx().engine !== 'postgres') return t.skip('SQLite keeps its foreign keys and has one writer');
      const org = await createTestOrg(ctx());
      const endpointId = await createEndpoint(ctx(), org, 'http://127.0.0.1:9/hook');
      const foreignKeys = await sql<{
        n: number;
      }>`select count(*)::int as n from pg_constraint where contype = 'f' and conrelid in ('webhook_messages'::regclass, 'webhook_attempts'::regclass)`.execute(
        ctx().deps.db,
      );
      assert.equal(foreignKeys.rows[0]!.n, 0, 'the log has no foreign keys (migration 0020)');

      const gate = signal();
      const locked = signal();
      // What the worker does in a batch: lock the endpoint against deletion, then write its log.
      const batch = ctx()
        .deps.db.transaction()
        .execute(async (trx) => {
          await trx.selectFrom('webhook_endpoints').select('id').where('id', '=', endpointId).forKeyShare().execute();
          locked.resolve();
          await gate.promise;
          const at = Date.now();
          await trx
            .insertInto('webhook_messages')
            .values({
              id: newId(at),
              org_id: org.orgId,
              endpoint_id: endpointId,
              event_id: newId(at),
              event_type: 'asset.created',
              status: 'succeeded',
              attempts: 1,
              total_attempts: 1,
              next_attempt_at: at,
              locked_until: null,
              locked_by: null,
              last_status: 200,
              last_attempt_at: at,
              created_at: at,
              updated_at: at,
            })
            .execute();
          await trx
            .insertInto('webhook_attempts')
            .values({
              id: newId(at),
              org_id: org.orgId,
              endpoint_id: endpointId,
              message_id: newId(at),
              attempt: 1,
              at,
              ok: 1,
              status_code: 200,
              latency_ms: 3,
              response_body: null,
              error_class: null,
            })
            .execute();
        });
      await locked.promise;
      const deleting = ctx().inject({
        method: 'DELETE',
        url: `/webhooks/endpoint/${endpointId}`,
        headers: org.admin.headers,
      });
      try {
        assert.equal(await settlesWithin(deleting, 300), false, 'the delete waits for the batch');
      } finally {
        gate.resolve();
      }
      await batch;
      assert.equal((await deleting).statusCode, 204);
      assert.equal(await count(ctx(), 'webhook_messages', endpointId), 0);
      assert.equal(await count(ctx(), 'webhook_attempts', endpointId), 0);
    });
  },
  { realClock: true },
);
