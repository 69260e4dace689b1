// Issue 28, item 0: a bulk edit applies each item exactly once, whatever happens to the workers
// running it: two workers with a lease shorter than the job, a worker that stalls past its lease,
// and a worker process killed mid-job whose job resumes elsewhere. Each asset's title gets "x"
// appended once, one asset.metadata.updated event per asset, and the Action's `updated` is right.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { it } from 'node:test';
import { forEachEngine, json, TEST_SECRET, type TestContext } from '../../../../test/helpers/context.ts';
import { createTestOrg, type TestOrg } from '../../../../test/helpers/factories.ts';
import { createAsset, defaultTemplate } from '../../../../test/helpers/assets.ts';
import { stopProcess } from '../../../../test/helpers/processes.ts';
import { startWorker } from '../../../core/jobs/worker.ts';
import { fromJson } from '../../../core/db/json.ts';
import { assetJobHandlers } from '../index.ts';

const until = async (what: string, check: () => Promise<boolean>, limitMs = 60_000) => {
  const end = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
};

async function setUp(ctx: TestContext, count: number) {
  // The test's clock back to the real time: a test before may have moved it past a lease, and a job
  // enqueued in its future would wait that long for the real-time server process to take it.
  ctx.clock.set(Date.now());
  const org = await createTestOrg(ctx);
  const template = await defaultTemplate(ctx, org);
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push((await createAsset(ctx, org)).objectId);
  const started = await ctx.inject({
    method: 'PATCH',
    url: '/v1/asset',
    headers: org.admin.headers,
    payload: {
      metadataTemplateId: template.id,
      objectIds: ids,
      metadataDocument: [
        { metadataDefinitionId: template.attr('title'), metadataDefinitionValue: 'x', operation: 'append' },
      ],
    },
  });
  assert.equal(started.statusCode, 200, started.body);
  const actionId = json(started).jobId as string;
  const { job_id: jobId } = await ctx.deps.db
    .selectFrom('actions')
    .select('job_id')
    .where('id', '=', actionId)
    .executeTakeFirstOrThrow();
  return { org, template, ids, actionId, jobId: jobId! };
}

async function assertExactlyOnce(ctx: TestContext, org: TestOrg, titleId: string, ids: string[], actionId: string) {
  const rows = await ctx.deps.db.selectFrom('assets').select(['id', 'metadata']).where('id', 'in', ids).execute();
  const titles = rows.map(
    (r) =>
      fromJson<{ metadataDefinitionId: string; metadataDefinitionValue?: unknown }[]>(r.metadata, []).find(
        (m) => m.metadataDefinitionId === titleId,
      )?.metadataDefinitionValue,
  );
  const wrong = titles.filter((t) => t !== 'x');
  assert.equal(wrong.length, 0, `every title is "x" once; got ${JSON.stringify(wrong.slice(0, 5))}`);
  const events = await ctx.deps.db
    .selectFrom('events')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('org_id', '=', org.orgId)
    .where('type', '=', 'asset.metadata.updated')
    .executeTakeFirstOrThrow();
  assert.equal(Number(events.n), ids.length, 'one event per asset');
  const action = json(await ctx.inject({ method: 'GET', url: `/v1/action/${actionId}`, headers: org.admin.headers }));
  assert.equal(action.status, 'succeeded', JSON.stringify(action));
  assert.deepEqual(action.result, { updated: ids.length, failed: 0, total: ids.length });
  assert.equal(action.processed, ids.length);
}

/** `tessera serve` in its own process on the test's database, its lease 2 s. */
function serverProcess(c: TestContext, extra: Record<string, string> = {}) {
  const env: Record<string, string | undefined> = {
    ...process.env,
    TESSERA_DATA_DIR: c.dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    TESSERA_LOG_LEVEL: 'warn',
    TESSERA_SECRET_KEY: TEST_SECRET,
    TESSERA_JOB_LEASE_MS: '2000',
    TESSERA_ALLOW_PRIVATE_TARGETS: 'true',
    DATABASE_URL: c.database.kind === 'postgres' ? c.database.url : undefined,
    ...extra,
  };
  const child = spawn(process.execPath, ['src/main.ts', 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  return { child, output: () => output };
}

forEachEngine('bulk edit: each item exactly once (issue 28, item 0)', (ctx) => {
  const worker = (c: Pick<TestContext, 'deps'>, options: { leaseMs: number; heartbeatMs: number }) =>
    startWorker({
      db: c.deps.db,
      engine: c.deps.engine,
      clock: c.deps.clock,
      log: c.deps.log,
      signal: c.deps.jobs,
      handlers: assetJobHandlers(c.deps),
      pollMs: 3_600_000,
      concurrency: 2,
      ...options,
    });
  const processed = async (actionId: string) =>
    (await ctx().deps.db.selectFrom('actions').select('processed').where('id', '=', actionId).executeTakeFirstOrThrow())
      .processed;

  // SQLite only for now: on PostgreSQL the 300 items finish before the steps below can be taken,
  // and holding the edit mid-job with a row lock starved the test's pool (to be redone).
  it('a running job keeps its lease (heartbeat): a second worker claims nothing while it runs past the lease', async (t) => {
    if (ctx().engine !== 'sqlite') return t.skip('SQLite only (see above)');
    const { org, template, ids, actionId, jobId } = await setUp(ctx(), 300);
    const second = await ctx().secondInstance();
    const a = worker(ctx(), { leaseMs: 1000, heartbeatMs: 10 });
    const b = worker(second, { leaseMs: 1000, heartbeatMs: 10 });
    const release = () => {};
    try {
      const running = a.drain();
      await until('the edit to start', async () => (await processed(actionId)) >= 5);
      // Time passes beyond the lease in steps; after each, the heartbeat renews the lease while
      // the job runs, so the job is never free for the other worker to claim.
      let last: unknown;
      for (let step = 0; step < 3; step++) {
        ctx().clock.advance(700);
        const now = ctx().clock.now();
        await until(
          'the lease to be renewed while the job runs',
          async () => {
            const job = await ctx()
              .deps.db.selectFrom('jobs')
              .select(['locked_until', 'status'])
              .where('id', '=', jobId)
              .executeTakeFirstOrThrow();
            last = job;
            return job.status === 'running' && (job.locked_until ?? 0) > now;
          },
          10_000,
        ).catch((e) => {
          throw new Error(`${e.message}: ${JSON.stringify(last)} now ${now} step ${step}`);
        });
        assert.equal(await b.drain(), 0, 'the job is not claimed by the other worker');
      }
      release();
      await running;
      const job = await ctx()
        .deps.db.selectFrom('jobs')
        .select(['status', 'locked_until', 'attempts'])
        .where('id', '=', jobId)
        .executeTakeFirstOrThrow();
      assert.deepEqual(
        job,
        { status: 'done', locked_until: null, attempts: 1 },
        'finished on its first claim, lease released',
      );
    } finally {
      release();
      await a.stop();
      await b.stop();
    }
    await assertExactlyOnce(ctx(), org, template.attr('title'), ids, actionId);
  });

  // A stalled SQLite process holding the write lock stops every process on the file: nothing can
  // take over until it wakes, so this case is PostgreSQL's (whose server ends the stalled
  // session's transaction after TESSERA_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS, releasing its locks).
  it('a worker stalled past its lease (SIGSTOP) while another takes the job over: each item once when it wakes', async (t) => {
    if (ctx().engine !== 'postgres') return t.skip('PostgreSQL only');
    const { org, template, ids, actionId } = await setUp(ctx(), 150);
    const server = serverProcess(ctx(), { TESSERA_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: '1000' });
    try {
      await until(
        `the worker process to start on the edit\n${server.output()}`,
        async () => (await processed(actionId)) >= 20 || server.child.exitCode !== null,
      );
      server.child.kill('SIGSTOP');
      // Its lease runs out; a worker here takes the job over and finishes it.
      ctx().clock.set(Date.now() + 60_000);
      const b = worker(ctx(), { leaseMs: 2000, heartbeatMs: 500 });
      try {
        await b.drain();
      } finally {
        await b.stop();
      }
      // The stalled worker wakes up in the middle of an item, and is stopped gracefully (it finishes its job step first).
      server.child.kill('SIGCONT');
    } finally {
      await stopProcess(server.child);
    }
    await assertExactlyOnce(ctx(), org, template.attr('title'), ids, actionId);
  });

  it('a worker process killed mid-job: the job resumes after the lease and applies each remaining item once', async () => {
    const { org, template, ids, actionId } = await setUp(ctx(), 150);
    const { child, output } = serverProcess(ctx());
    try {
      await until(
        `the worker process to start on the edit\n${output()}`,
        async () => (await processed(actionId)) >= 20 || child.exitCode !== null,
      );
    } finally {
      await stopProcess(child, () => child.kill('SIGKILL'));
    }
    const at = await processed(actionId);
    assert.ok(at < ids.length, `killed mid-job (at ${at} of ${ids.length})`);
    // The dead process's lease runs out; a worker here resumes the job.
    ctx().clock.set(Date.now() + 60_000);
    const w = worker(ctx(), { leaseMs: 2000, heartbeatMs: 500 });
    try {
      await w.drain();
    } finally {
      await w.stop();
    }
    await assertExactlyOnce(ctx(), org, template.attr('title'), ids, actionId);
  });
});
