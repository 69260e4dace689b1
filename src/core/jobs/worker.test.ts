import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine } from '../../../test/helpers/context.ts';
import { createLog } from '../log.ts';
import { enqueueRawJob, FatalJobError, RetryJob } from './queue.ts';
import { startWorker, type ClaimedJob, type JobHandler } from './worker.ts';

forEachEngine('jobs', (ctx) => {
  const worker = (handlers: Record<string, JobHandler>, extra: { leaseMs?: number; probeMs?: number } = {}) =>
    startWorker({
      db: ctx().deps.db,
      engine: ctx().engine,
      clock: ctx().clock,
      log: createLog('silent'),
      signal: ctx().deps.jobs,
      handlers,
      pollMs: 60_000,
      ...extra,
    });
  const statusOf = async (id: string) =>
    ctx().deps.db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  it('runs a job enqueued in a committed transaction, and none from a rolled-back one', async () => {
    const seen: unknown[] = [];
    const type = `t-${Math.random()}`;
    const now = ctx().clock.now();
    const committed = await ctx()
      .deps.db.transaction()
      .execute((trx) => enqueueRawJob(trx, now, { type, payload: { n: 1 } }));
    await assert.rejects(
      ctx()
        .deps.db.transaction()
        .execute(async (trx) => {
          await enqueueRawJob(trx, now, { type, payload: { n: 2 } });
          throw new Error('roll back');
        }),
    );
    const w = worker({
      [type]: async (job) => {
        seen.push(job.payload);
      },
    });
    try {
      assert.equal(await w.drain(), 1);
      assert.deepEqual(seen, [{ n: 1 }]);
      assert.equal((await statusOf(committed)).status, 'done');
    } finally {
      await w.stop();
    }
  });

  it('retries with backoff, honours RetryJob delays, and buries a job after max attempts', async () => {
    const type = `t-${Math.random()}`;
    const attempts: number[] = [];
    const id = await enqueueRawJob(ctx().deps.db, ctx().clock.now(), { type, payload: null, maxAttempts: 3 });
    const w = worker({
      [type]: async (job: ClaimedJob) => {
        attempts.push(job.attempts);
        throw new Error(`boom ${job.attempts}`);
      },
    });
    try {
      await w.drain();
      assert.deepEqual(attempts, [1]);
      let row = await statusOf(id);
      assert.equal(row.status, 'pending');
      assert.ok(row.run_at > ctx().clock.now());
      assert.equal(await w.drain(), 0, 'not due yet');
      ctx().clock.advance(10 * 60_000);
      await w.drain();
      ctx().clock.advance(10 * 60_000);
      await w.drain();
      assert.deepEqual(attempts, [1, 2, 3]);
      row = await statusOf(id);
      assert.equal(row.status, 'dead');
      assert.equal(row.last_error, 'boom 3');
    } finally {
      await w.stop();
    }
    const type2 = `t-${Math.random()}`;
    const id2 = await enqueueRawJob(ctx().deps.db, ctx().clock.now(), { type: type2, payload: null });
    const w2 = worker({
      [type2]: async () => {
        throw new RetryJob('later', 5000);
      },
    });
    try {
      await w2.drain();
      assert.equal((await statusOf(id2)).run_at, ctx().clock.now() + 5000);
    } finally {
      await w2.stop();
    }
    const type3 = `t-${Math.random()}`;
    const id3 = await enqueueRawJob(ctx().deps.db, ctx().clock.now(), { type: type3, payload: null, maxAttempts: 10 });
    const w3 = worker({
      [type3]: async () => {
        throw new FatalJobError('never');
      },
    });
    try {
      await w3.drain();
      assert.equal((await statusOf(id3)).status, 'dead');
    } finally {
      await w3.stop();
    }
  });

  it('an idle worker whose poll is a minute claims, within its probe, a job another process enqueued', async () => {
    // Another process's enqueue wakes nobody here (no in-process signal, and no NOTIFY: decision 0022).
    const type = `t-${Math.random()}`;
    let ran: (() => void) | undefined;
    const done = new Promise<void>((resolve) => {
      ran = resolve;
    });
    const w = worker({ [type]: async () => ran!() }, { probeMs: 50 });
    try {
      assert.equal(await w.drain(), 0, 'its first look at the queue is over before the job exists');
      await enqueueRawJob(ctx().deps.db, ctx().clock.now(), { type, payload: null });
      // Without the probe the next claim is a minute away.
      let timer: NodeJS.Timeout | undefined;
      const claimed = await Promise.race([
        done.then(() => true),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(false), 20_000);
        }),
      ]);
      clearTimeout(timer);
      assert.ok(claimed, 'the job waits for the minute poll: nothing looked for it meanwhile');
    } finally {
      await w.stop();
    }
  });

  it('picks a job up again when its worker died holding the lease', async () => {
    const type = `t-${Math.random()}`;
    const id = await enqueueRawJob(ctx().deps.db, ctx().clock.now(), { type, payload: null });
    // Simulate a worker that claimed the job and then vanished.
    await ctx()
      .deps.db.updateTable('jobs')
      .set({ status: 'running', locked_by: 'dead-worker', locked_until: ctx().clock.now() + 1000, attempts: 1 })
      .where('id', '=', id)
      .execute();
    let runs = 0;
    const w = worker({
      [type]: async () => {
        runs += 1;
      },
    });
    try {
      assert.equal(await w.drain(), 0, 'lease still held');
      ctx().clock.advance(1001);
      assert.equal(await w.drain(), 1);
      assert.equal(runs, 1);
      assert.equal((await statusOf(id)).status, 'done');
    } finally {
      await w.stop();
    }
  });

  it('two workers never run the same job twice', async () => {
    const type = `t-${Math.random()}`;
    const now = ctx().clock.now();
    for (let i = 0; i < 40; i++) await enqueueRawJob(ctx().deps.db, now, { type, payload: i });
    const runs = new Map<number, number>();
    const handler: JobHandler = async (job) => {
      runs.set(Number(job.payload), (runs.get(Number(job.payload)) ?? 0) + 1);
      await new Promise((r) => setTimeout(r, 2));
    };
    const second = await ctx().secondInstance();
    const a = worker({ [type]: handler });
    const b = startWorker({
      db: second.deps.db,
      engine: ctx().engine,
      clock: ctx().clock,
      log: createLog('silent'),
      signal: second.deps.jobs,
      handlers: { [type]: handler },
      pollMs: 60_000,
    });
    try {
      await Promise.all([a.drain(), b.drain()]);
      assert.equal(runs.size, 40);
      assert.ok([...runs.values()].every((n) => n === 1));
    } finally {
      await a.stop();
      await b.stop();
    }
  });

  it("claims fairly across organizations: one organization's backlog does not hold back another's job (issue 23, defect 7)", async () => {
    const type = `t-${Math.random()}`;
    const order: string[] = [];
    const now = ctx().clock.now();
    // Organization A queues a backlog (its jobs are the oldest), then B queues one job.
    for (let i = 0; i < 8; i++)
      await enqueueRawJob(ctx().deps.db, now - 1000 + i, { type, orgId: 'org-a', payload: { n: `A${i}` } });
    await enqueueRawJob(ctx().deps.db, now, { type, orgId: 'org-b', payload: { n: 'B0' } });
    // A real worker running one job at a time.
    const w = startWorker({
      db: ctx().deps.db,
      engine: ctx().engine,
      clock: ctx().clock,
      log: createLog('silent'),
      signal: ctx().deps.jobs,
      handlers: {
        [type]: async (job) => {
          order.push(String((Object(job.payload) as { n?: unknown }).n));
        },
      },
      pollMs: 60_000,
      concurrency: 1,
    });
    try {
      assert.equal(await w.drain(), 9);
    } finally {
      await w.stop();
    }
    assert.equal(order.length, 9);
    assert.ok(order.indexOf('B0') < order.indexOf('A7'), `B's job ran before A's backlog finished: ${order.join(' ')}`);
    assert.deepEqual(order.slice(0, 2), ['A0', 'B0'], 'B is served at the next free slot');
    assert.deepEqual(
      order.filter((n) => n.startsWith('A')),
      ['A0', 'A1', 'A2', 'A3', 'A4', 'A5', 'A6', 'A7'],
      "each organization's own jobs stay in order",
    );
  });

  it('an organization with jobs running waits behind one without (several workers at once)', async () => {
    const type = `t-${Math.random()}`;
    const now = ctx().clock.now();
    for (let i = 0; i < 6; i++)
      await enqueueRawJob(ctx().deps.db, now - 1000 + i, { type, orgId: 'org-c', payload: { n: `C${i}` } });
    await enqueueRawJob(ctx().deps.db, now, { type, orgId: 'org-d', payload: { n: 'D0' } });
    // A job of C is running (claimed by another worker, lease live): D's job is next, before C's older ones.
    await ctx()
      .deps.db.updateTable('jobs')
      .set({ status: 'running', locked_until: now + 60_000, locked_by: 'other', updated_at: now })
      .where('type', '=', type)
      .where('org_id', '=', 'org-c')
      .where('run_at', '=', now - 1000)
      .execute();
    const order: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const w = startWorker({
      db: ctx().deps.db,
      engine: ctx().engine,
      clock: ctx().clock,
      log: createLog('silent'),
      signal: ctx().deps.jobs,
      handlers: {
        [type]: async (job) => {
          order.push(String((Object(job.payload) as { n?: unknown }).n));
          if (order.length === 1) await gate;
        },
      },
      pollMs: 60_000,
      concurrency: 1,
    });
    try {
      const draining = w.drain();
      release();
      await draining;
    } finally {
      await w.stop();
    }
    assert.equal(order[0], 'D0', `got ${order.join(' ')}`);
  });
});
