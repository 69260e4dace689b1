// Migration 0018: the fan-out queue (events are written once and never updated) and the partial
// due index. Queued exactly when the event's transaction commits, taken off in the fan-out's
// transaction (a failed fan-out leaves it queued), backfilled from the old flag, and the delivery
// queries still read indexes on both engines.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { sql, type CompiledQuery, type KyselyPlugin } from 'kysely';
import { Migrator } from 'kysely/migration';
import { forEachEngine, TEST_SECRET, type TestContext } from '../../../../test/helpers/context.ts';
import { createPgDatabase } from '../../../../test/helpers/engines.ts';
import { createTestOrg, type TestOrg } from '../../../../test/helpers/factories.ts';
import { startReceiver, type Receiver } from '../../../../test/helpers/receiver.ts';
import { parseConfig } from '../../../config.ts';
import { createDeps } from '../../../deps.ts';
import type { Db } from '../../../core/db/connect.ts';
import { migrateToLatest } from '../../../core/db/migrate.ts';
import { migrations } from '../../../core/db/migrations/index.ts';
import { publishEvent, publishEvents } from '../../../core/events/index.ts';
import { newId } from '../../../core/ids.ts';
import { claimDue, extendLeases, fanOut, messageIdFor } from './message-store.ts';
import { createDeliveryEngine, pruneDeliveryLog, RETENTION_MS, runDeliveryOnce } from '../index.ts';
import { waitFor } from '../../../../test/helpers/wait.ts';

const assetEvent = (ctx: TestContext, org: TestOrg) => ({
  orgId: org.orgId,
  type: 'asset.created' as const,
  actor: null,
  data: { asset: { id: newId(ctx.clock.now()), filename: 'photo.jpg', metadataTemplate: null, securityTemplates: [] } },
});

const queued = async (db: Db) =>
  (await db.selectFrom('event_fanout_queue').select('event_id').execute()).map((r) => r.event_id).sort();

/** A new organization with one endpoint (asset.*) pointing at a real receiver, closed after `run`. */
async function withSubscribedReceiver(
  ctx: TestContext,
  run: (org: TestOrg, rx: Receiver) => Promise<void>,
): Promise<void> {
  const org = await createTestOrg(ctx);
  const rx = await startReceiver();
  try {
    const res = await ctx.inject({
      method: 'POST',
      url: '/webhooks/endpoint',
      headers: org.admin.headers,
      payload: [{ description: 'Queue test', url: rx.url, eventTypes: ['asset.*'] }],
    });
    assert.equal(res.statusCode, 200, res.body);
    await run(org, rx);
  } finally {
    await rx.close();
  }
}

/**
 * The database with every query recorded (Kysely's plugin hook, which also sees the queries run in a
 * transaction) and every transaction counted.
 */
function observed(db: Db): { db: Db; queries: CompiledQuery[]; transactions: () => number } {
  const queries: CompiledQuery[] = [];
  let transactions = 0;
  const recorder: KyselyPlugin = {
    transformQuery: (args) => {
      queries.push(db.getExecutor().compileQuery(args.node, args.queryId));
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
  const spied = db.withPlugin(recorder);
  const counted = new Proxy(spied, {
    get(target, key) {
      if (key === 'transaction') {
        transactions += 1;
        return () => target.transaction();
      }
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { db: counted, queries, transactions: () => transactions };
}

forEachEngine('webhook fan-out queue', (ctx) => {
  it('an idle engine polls by reading: no write transaction and no write statement while nothing is queued or due (decision 0035)', async () => {
    // Anything earlier setup queued is fanned out first (to no endpoint).
    await runDeliveryOnce(ctx().deps);
    const seen = observed(ctx().deps.db);
    const engine = createDeliveryEngine({ ...ctx().deps, db: seen.db }, { pollMs: 2 });
    const polls = () => seen.queries.filter((q) => /event_fanout_queue/.test(q.sql)).length;
    engine.start();
    try {
      // Twenty polls of the queue (the claim's poll runs with each of them).
      await waitFor(() => polls() >= 20, 'twenty idle polls');
    } finally {
      await engine.stop();
    }
    const writes = seen.queries.filter((q) => /^\s*(with|update|insert|delete)\b/i.test(q.sql)).map((q) => q.sql);
    assert.deepEqual(writes, [], 'no write statement');
    assert.equal(seen.transactions(), 0, 'no transaction');
    assert.ok(
      seen.queries.some((q) => /webhook_messages/.test(q.sql)),
      'the claim still looks for due messages',
    );
  });

  it('queues an event exactly when its transaction commits; the fan-out empties the queue and leaves the event row as written', async () => {
    const db = ctx().deps.db;
    await withSubscribedReceiver(ctx(), async (org, rx) => {
      await runDeliveryOnce(ctx().deps);
      assert.deepEqual(await queued(db), []);

      let rolledBack = '';
      await assert.rejects(
        db.transaction().execute(async (trx) => {
          rolledBack = await publishEvent(trx, ctx().clock.now(), assetEvent(ctx(), org));
          throw new Error('the change fails');
        }),
        /the change fails/,
      );
      const one = await db.transaction().execute((trx) => publishEvent(trx, ctx().clock.now(), assetEvent(ctx(), org)));
      const bulk = await db
        .transaction()
        .execute((trx) => publishEvents(trx, ctx().clock.now(), [assetEvent(ctx(), org), assetEvent(ctx(), org)]));
      const ids = [one, ...bulk].sort();
      assert.deepEqual(await queued(db), ids);
      assert.ok(!(await queued(db)).includes(rolledBack));

      const before = await db.selectFrom('events').selectAll().where('id', 'in', ids).orderBy('id').execute();
      const summary = await runDeliveryOnce(ctx().deps);
      assert.equal(summary.fannedOut, 3);
      assert.equal(summary.succeeded, 3);
      assert.deepEqual(await queued(db), []);
      assert.deepEqual(
        await db.selectFrom('events').selectAll().where('id', 'in', ids).orderBy('id').execute(),
        before,
      );
      assert.deepEqual(rx.received.map((r) => JSON.parse(r.body).event.id).sort(), ids);
    });
  });

  it("a message's id, its webhook-id, is derived from its event and endpoint: a UUIDv7 with the event's time (decision 0035)", async () => {
    const db = ctx().deps.db;
    await withSubscribedReceiver(ctx(), async (org, rx) => {
      const ids = await db
        .transaction()
        .execute((trx) => publishEvents(trx, ctx().clock.now(), [assetEvent(ctx(), org), assetEvent(ctx(), org)]));
      ctx().clock.advance(5000); // fanned out later than the events were written
      await runDeliveryOnce(ctx().deps);
      const messages = await db
        .selectFrom('webhook_messages')
        .innerJoin('events', 'events.id', 'webhook_messages.event_id')
        .select(['webhook_messages.id', 'webhook_messages.endpoint_id', 'events.id as event_id', 'events.created_at'])
        .where('events.id', 'in', ids)
        .execute();
      assert.equal(messages.length, 2);
      for (const m of messages) {
        assert.equal(m.id, messageIdFor(m.event_id, Number(m.created_at), m.endpoint_id));
        assert.equal(parseInt(m.id.slice(0, 8) + m.id.slice(9, 13), 16), Number(m.created_at));
      }
      assert.deepEqual(rx.received.map((r) => r.headers['webhook-id']).sort(), messages.map((m) => m.id).sort());
    });
  });

  it('a fan-out that fails leaves its events queued, and the next one delivers them once', async () => {
    const db = ctx().deps.db;
    await withSubscribedReceiver(ctx(), async (org, rx) => {
      const id = await db.transaction().execute((trx) => publishEvent(trx, ctx().clock.now(), assetEvent(ctx(), org)));
      // The failure strikes after the event was taken off the queue and its messages were being built.
      await assert.rejects(
        fanOut(db, ctx().engine, ctx().clock.now(), {
          workerId: 'w',
          leaseMs: 1000,
          limit: 10,
          canTake: () => {
            throw new Error('worker died');
          },
        }),
        /worker died/,
      );
      assert.deepEqual(await queued(db), [id]);
      assert.equal(
        (await db.selectFrom('webhook_messages').select('id').where('event_id', '=', id).execute()).length,
        0,
      );
      await runDeliveryOnce(ctx().deps);
      assert.deepEqual(await queued(db), []);
      assert.deepEqual(
        rx.received.map((r) => JSON.parse(r.body).event.id),
        [id],
      );
    });
  });

  it('the retention prune keeps an old event still waiting for its fan-out, and removes it once fanned out', async () => {
    const db = ctx().deps.db;
    const org = await createTestOrg(ctx());
    const id = await db.transaction().execute((trx) => publishEvent(trx, ctx().clock.now(), assetEvent(ctx(), org)));
    ctx().clock.advance(RETENTION_MS + 1000);
    await pruneDeliveryLog(db, ctx().clock.now());
    assert.equal((await db.selectFrom('events').select('id').where('id', '=', id).execute()).length, 1);
    assert.ok((await queued(db)).includes(id));
    await runDeliveryOnce(ctx().deps); // no endpoint: fanned out to nothing
    assert.ok(!(await queued(db)).includes(id));
    await pruneDeliveryLog(db, ctx().clock.now());
    assert.equal((await db.selectFrom('events').select('id').where('id', '=', id).execute()).length, 0);
  });

  it('the fan-out, claim and lease queries read indexes (the claims the partial due index), on this engine', async () => {
    const db = ctx().deps.db;
    // Rows for each query to find (an empty queue or no due message is answered by the peek alone):
    // two queued events for an endpoint, fanned out as pending rows (the endpoint full), the first
    // then leased by a claim (its lease expired by the recorded claim's time below).
    // (Nothing is sent: the receiver only gives the endpoint an address.)
    await withSubscribedReceiver(ctx(), async (org) => {
      await db
        .transaction()
        .execute((trx) => publishEvents(trx, ctx().clock.now(), [assetEvent(ctx(), org), assetEvent(ctx(), org)]));
    });
    const seen: CompiledQuery[] = [];
    // Records the SQL the delivery functions run (Kysely's plugin hook), to EXPLAIN each of them.
    const recorder: KyselyPlugin = {
      transformQuery: (args) => {
        seen.push(db.getExecutor().compileQuery(args.node, args.queryId));
        return args.node;
      },
      transformResult: async (args) => args.result,
    };
    const spied = db.withPlugin(recorder);
    const isPeek = (q: CompiledQuery) => /^select 1 as one /.test(q.sql);
    const now = ctx().clock.now();
    const fan = await fanOut(spied, ctx().engine, now, {
      workerId: 'w',
      leaseMs: 1000,
      limit: 10,
      canTake: () => false,
    });
    assert.equal(fan.events, 2);
    const take = seen.filter((q) => /event_fanout_queue/.test(q.sql) && !isPeek(q));
    assert.equal(
      (await claimDue(db, ctx().engine, now, { workerId: 'w', leaseMs: 1000, limit: 1, skipEndpoints: [] })).length,
      1,
    );
    seen.length = 0;
    const claimed = await claimDue(spied, ctx().engine, now + 5000, {
      workerId: 'w',
      leaseMs: 1000,
      limit: 10,
      skipEndpoints: ['e1'],
      expired: true,
    });
    assert.equal(claimed.length, 2);
    const claims = seen.filter((q) => /webhook_messages/.test(q.sql) && !isPeek(q));
    const claimPeeks = seen.filter(isPeek);
    assert.equal(claims.length, 2, 'expired leases, then due messages');
    assert.equal(claimPeeks.length, 2, 'a peek before each');
    seen.length = 0;
    await extendLeases(spied, ctx().engine, 'w', now);
    const lease = seen.filter((q) => /webhook_messages/.test(q.sql));
    // SQLite reads the rows, then leases them by rowid; PostgreSQL does both in one statement. Then the
    // queue rows of events with no message held are deleted by key (decision 0035 C).
    assert.equal(take.length, ctx().engine === 'sqlite' ? 3 : 2);
    assert.equal(lease.length, 1);

    const plan = async (q: CompiledQuery): Promise<string> => {
      if (ctx().engine === 'sqlite') {
        const rows = await db.executeQuery<{ detail: string }>({ ...q, sql: `explain query plan ${q.sql}` });
        const text = rows.rows.map((r) => r.detail).join(' | ');
        const scans = rows.rows
          .map((r) => r.detail)
          .filter((d) => /^SCAN /.test(d) && !/USING (COVERING )?INDEX|CONSTANT ROWS/.test(d));
        assert.deepEqual(scans, [], text);
        return text;
      }
      return db.connection().execute(async (conn) => {
        await sql`set enable_seqscan = off`.execute(conn);
        try {
          const rows = await conn.executeQuery<{ 'QUERY PLAN': string }>({ ...q, sql: `explain ${q.sql}` });
          const text = rows.rows.map((r) => r['QUERY PLAN']).join('\n');
          assert.ok(!/Seq Scan/.test(text), text);
          return text;
        } finally {
          await sql`reset enable_seqscan`.execute(conn);
        }
      });
    };
    // The queue is read in its key order (no sort of the whole queue: only the rows taken are
    // sorted on PostgreSQL), and on PostgreSQL its rows are deleted by direct lookup.
    const takePlan = await plan(take[0]!);
    assert.match(
      takePlan,
      /Index Scan using event_fanout_queue_pkey|USING (COVERING )?INDEX sqlite_autoindex_event_fanout_queue/,
      takePlan,
    );
    assert.ok(!/TEMP B-TREE/.test(takePlan), takePlan);
    if (ctx().engine === 'postgres') assert.match(takePlan, /Tid Scan on event_fanout_queue/, takePlan);
    for (const q of take.slice(1)) {
      const text = await plan(q);
      // The queue rows go by ctid, each found by its key (decision 0035 C).
      if (ctx().engine === 'postgres' && /^delete/.test(q.sql)) {
        assert.match(text, /Tid Scan on event_fanout_queue/, text);
        assert.match(text, /Index Scan using event_fanout_queue_pkey/, text);
      }
    }
    for (const q of [...claims, ...claimPeeks]) assert.match(await plan(q), /webhook_messages_due_idx/);
    await plan(lease[0]!);
  });
});

forEachEngine('migration 0018', (ctx) => {
  it('queues the events not yet fanned out before it, and only those', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tessera-m0018-'));
    const pg = ctx().engine === 'postgres' ? await createPgDatabase() : undefined;
    const config = parseConfig({
      TESSERA_DATA_DIR: dataDir,
      TESSERA_LOG_LEVEL: 'silent',
      TESSERA_SECRET_KEY: TEST_SECRET,
      ...(pg ? { DATABASE_URL: pg.url } : {}),
    });
    const deps = createDeps(config, { poolSize: 2 });
    try {
      const migrator = new Migrator({ db: deps.db, provider: { getMigrations: async () => migrations } });
      const { error } = await migrator.migrateTo('0017_content_revision');
      assert.equal(error, undefined);
      for (const [id, fannedOut] of [
        ['old-done', 1],
        ['old-waiting', 0],
      ] as const) {
        await sql`insert into events (id, org_id, type, body, fanned_out, created_at) values (${id}, 'o', 'asset.created', '{}', ${fannedOut}, 1)`.execute(
          deps.db,
        );
      }
      await migrateToLatest(deps.db);
      assert.deepEqual(await queued(deps.db), ['old-waiting']);
      await deps.db
        .insertInto('events')
        .values({ id: 'new', org_id: 'o', type: 'asset.created', body: '{}', created_at: 2 })
        .execute();
      assert.deepEqual(await queued(deps.db), ['new', 'old-waiting']);
    } finally {
      await deps.close();
      await pg?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
