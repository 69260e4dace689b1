// Issue 28, item 6: logs follow a request into its jobs. A job enqueued while a request is handled
// records the request's id (the X-Request-Id the client saw), and the worker that runs it — in any
// process — names that id in its log lines.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { it } from 'node:test';
import { forEachEngine } from './helpers/context.ts';
import { createTestOrg } from './helpers/factories.ts';
import { createAsset, jpeg, pathOf } from './helpers/assets.ts';
import { createLog } from '../src/core/log.ts';
import { FatalJobError, JobSignal } from '../src/core/jobs/queue.ts';
import { startWorker } from '../src/core/jobs/worker.ts';

forEachEngine('request ids across the API and the workers', (ctx) => {
  it("a job records the id of the request that enqueued it, and the worker's log names it", async () => {
    const org = await createTestOrg(ctx());
    const created = await createAsset(ctx(), org, { filename: 'traced.jpg' });
    const put = await ctx().inject({
      method: 'PUT',
      url: pathOf(created.url!),
      payload: await jpeg(32, 32),
      headers: { 'content-type': 'application/octet-stream' },
    });
    assert.equal(put.statusCode, 200, put.body);
    const requestId = String(put.headers['x-request-id']);
    assert.ok(requestId.length > 0);
    const jobs = await ctx()
      .deps.db.selectFrom('jobs')
      .select(['id', 'type', 'request_id'])
      .where('org_id', '=', org.orgId)
      .where('type', '=', 'assets.renditions')
      .execute();
    assert.equal(jobs.length, 1);
    assert.equal(jobs[0]!.request_id, requestId, 'the renditions job names the upload request');

    // Jobs enqueued outside a request (a sweep, the CLI) name none.
    const lines: string[] = [];
    const log = createLog(
      'info',
      new Writable({
        write(chunk, _encoding, done) {
          lines.push(String(chunk));
          done();
        },
      }),
    );
    const worker = startWorker({
      db: ctx().deps.db,
      engine: ctx().deps.engine,
      clock: ctx().deps.clock,
      log,
      signal: new JobSignal(),
      handlers: {
        'assets.renditions': async () => {
          throw new FatalJobError('no renditions today');
        },
      },
      pollMs: 3_600_000,
    });
    try {
      await worker.drain();
    } finally {
      await worker.stop();
    }
    const failed = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.msg === 'job failed for good');
    assert.ok(failed, lines.join(''));
    assert.equal(failed.requestId, requestId);
    assert.equal(failed.jobId, jobs[0]!.id);
  });
});
