// Issue 28, item 0: renditions outlast a storage outage. A job failing because the blob store
// cannot answer spends no attempt and backs off, so it runs once the store is back; a sweep
// enqueues renditions again for assets left "pending" with no live job. The S3-protocol server is
// reached through a TCP proxy on loopback that the test cuts and restores.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine, json } from '../../../../../test/helpers/context.ts';
import { createTestOrg, type TestOrg } from '../../../../../test/helpers/factories.ts';
import { startS3 } from '../../../../../test/helpers/s3.ts';
import { startTcpProxy } from '../../../../../test/helpers/tcp-proxy.ts';
import { assetWorker, createAsset, jpeg } from '../../../../../test/helpers/assets.ts';
import type { Worker } from '../../../../core/jobs/worker.ts';
import { resumePendingRenditions } from '../../index.ts';

const s3 = await startS3();
const proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(s3.endpoint).port) });
after(async () => {
  await proxy.close();
  await s3.close();
});

forEachEngine(
  'renditions across a storage outage',
  (ctx) => {
    let org: TestOrg;
    let worker: Worker;
    before(async () => {
      org = await createTestOrg(ctx());
      worker = assetWorker(ctx());
    });
    after(async () => worker.stop());

    async function uploaded(filename: string): Promise<string> {
      const created = await createAsset(ctx(), org, { filename });
      assert.equal((await fetch(created.url!, { method: 'PUT', body: await jpeg(300, 200) })).status, 200);
      const done = await ctx().inject({
        method: 'POST',
        url: '/v1/asset/complete',
        headers: org.admin.headers,
        payload: { action: 'complete', fileId: created.fileId },
      });
      assert.equal(done.statusCode, 200, done.body);
      return created.objectId;
    }

    const state = async (id: string) =>
      json(await ctx().inject({ method: 'GET', url: `/v1/asset/${id}`, headers: org.admin.headers })).renditionsState;

    it('a renditions job failing while storage is down spends no attempt and finishes once it is back', async () => {
      const id = await uploaded('during-outage.jpg');
      proxy.cut();
      try {
        // More rounds than the job has attempts (5): before, it was buried and the asset stayed pending for good.
        for (let round = 0; round < 7; round++) {
          ctx().clock.advance(120_000);
          await worker.drain();
        }
        const job = await ctx()
          .deps.db.selectFrom('jobs')
          .select(['status', 'attempts', 'last_error'])
          .where('type', '=', 'assets.renditions')
          .where('status', '<>', 'done')
          .executeTakeFirstOrThrow();
        assert.equal(job.status, 'pending');
        assert.equal(job.attempts, 0);
        assert.match(job.last_error ?? '', /storage/);
        assert.equal(await state(id), 'pending');
      } finally {
        proxy.restore();
      }
      ctx().clock.advance(120_000);
      await worker.drain();
      assert.equal(await state(id), 'ready');
    });

    it('an asset left pending with no live renditions job is enqueued again by the sweep', async () => {
      // No worker while the upload completes (its wake would run the job before it can be buried).
      await worker.stop();
      const id = await uploaded('lost-job.jpg');
      // What an outage left behind before: the job buried, the asset pending.
      await ctx()
        .deps.db.updateTable('jobs')
        .set({ status: 'dead' })
        .where('type', '=', 'assets.renditions')
        .where('status', '=', 'pending')
        .execute();
      worker = assetWorker(ctx());
      ctx().clock.advance(120_000);
      await worker.drain();
      assert.equal(await state(id), 'pending');
      assert.equal(await resumePendingRenditions(ctx().deps), 1);
      // A second sweep finds the job it enqueued live: nothing doubles.
      assert.equal(await resumePendingRenditions(ctx().deps), 0);
      await worker.drain();
      assert.equal(await state(id), 'ready');
      assert.equal(await resumePendingRenditions(ctx().deps), 0);
    });
  },
  {
    env: {
      TESSERA_STORAGE: `s3://${s3.bucket}?endpoint=http://127.0.0.1:${proxy.port}&region=us-east-1`,
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
      TESSERA_S3_CONNECT_TIMEOUT_MS: '1000',
      TESSERA_S3_REQUEST_TIMEOUT_MS: '5000',
    },
  },
);
