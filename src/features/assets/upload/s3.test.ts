import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, it } from 'node:test';
import sharp from 'sharp';
import { forEachEngine, json } from '../../../../test/helpers/context.ts';
import { createTestOrg, type TestOrg } from '../../../../test/helpers/factories.ts';
import { startS3 } from '../../../../test/helpers/s3.ts';
import type { Worker } from '../../../core/jobs/worker.ts';
import { assetWorker, createAsset, jpeg, pathOf } from '../../../../test/helpers/assets.ts';

const PART = 5 * 1024 * 1024;
const s3 = await startS3();
after(async () => s3.close());

forEachEngine(
  'assets on S3 (s3rver): presigned single and multipart uploads, renditions, downloads',
  (ctx) => {
    let org: TestOrg;
    let worker: Worker;
    before(async () => {
      org = await createTestOrg(ctx());
      worker = assetWorker(ctx());
    });
    after(async () => worker.stop());

    it('answers a real S3 presigned PUT URL; the content is found by the watch job (or confirmed by complete) and renditions follow', async () => {
      const bytes = await jpeg(900, 600);
      const created = await createAsset(ctx(), org, { filename: 's3.jpg' });
      assert.match(created.url!, /X-Amz-Signature=/);
      assert.ok(created.url!.startsWith(s3.endpoint));
      const put = await fetch(created.url!, { method: 'PUT', body: bytes });
      assert.equal(put.status, 200);
      ctx().clock.advance(6000);
      await worker.drain();
      await worker.drain();
      const asset = json(
        await ctx().inject({ method: 'GET', url: `/v1/asset/${created.objectId}`, headers: org.admin.headers }),
      );
      assert.equal(asset.contentState, 'available');
      assert.equal(asset.renditionsState, 'ready');
      const thumb = await ctx().inject({
        method: 'GET',
        url: pathOf(asset.renditions.imageThumb),
        headers: org.admin.headers,
      });
      assert.deepEqual([(await sharp(thumb.rawPayload).metadata()).width], [200]);
      const link = json(
        await ctx().inject({ method: 'GET', url: `/v1/asset/${created.objectId}/content`, headers: org.admin.headers }),
      ).presignedURL;
      assert.ok((await ctx().inject({ method: 'GET', url: pathOf(link) })).rawPayload.equals(bytes));

      const second = await createAsset(ctx(), org, { filename: 'confirm.jpg' });
      await fetch(second.url!, { method: 'PUT', body: await jpeg(30, 30) });
      const done = await ctx().inject({
        method: 'POST',
        url: '/v1/asset/complete',
        headers: org.admin.headers,
        payload: { action: 'complete', fileId: second.fileId },
      });
      assert.equal(done.statusCode, 200, done.body);
      assert.equal(
        (await ctx().inject({ method: 'GET', url: `/v1/asset/${second.objectId}`, headers: org.admin.headers }))
          .statusCode,
        200,
      );
    });

    it('refuses content that contradicts the declared size, and keeps nothing', async () => {
      // A declared filesize means part URLs (reference: training/large-upload.md); the size is checked on completion.
      const created = await createAsset(ctx(), org, { filename: 'short.jpg', filesize: 10 });
      const part = await fetch(created.urls![0]!.url, { method: 'PUT', body: await jpeg(30, 30) });
      assert.equal(part.status, 200);
      const res = await ctx().inject({
        method: 'POST',
        url: '/v1/asset/complete',
        headers: org.admin.headers,
        payload: {
          action: 'complete',
          uploadId: created.uploadId,
          parts: [{ partNumber: 1, etag: part.headers.get('etag')! }],
        },
      });
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(
        await ctx().deps.blobs.head(
          `uploads/${org.orgId}/${(await ctx().deps.db.selectFrom('asset_uploads').select('id').where('asset_id', '=', created.objectId).executeTakeFirstOrThrow()).id}/object`,
        ),
        null,
      );
      assert.equal(
        json(await ctx().inject({ method: 'GET', url: `/v1/asset/${created.objectId}`, headers: org.admin.headers }))
          .contentState,
        'pending',
      );
    });

    it('runs a real S3 multipart upload: parts to presigned URLs, complete with their ETags; cancel aborts it', async () => {
      const content = randomBytes(PART + 4321);
      const created = await createAsset(ctx(), org, { filename: 'multi.bin', filesize: content.length });
      assert.equal(created.urls!.length, 2);
      const parts = [];
      for (const { partNumber, url } of created.urls!) {
        const res = await fetch(url, {
          method: 'PUT',
          body: content.subarray((partNumber - 1) * PART, partNumber * PART),
        });
        assert.equal(res.status, 200);
        parts.push({ partNumber, etag: res.headers.get('etag')! });
      }
      const done = await ctx().inject({
        method: 'POST',
        url: '/v1/asset/complete',
        headers: org.admin.headers,
        payload: { action: 'complete', uploadId: created.uploadId, parts },
      });
      assert.equal(done.statusCode, 200, done.body);
      const link = json(
        await ctx().inject({ method: 'GET', url: `/v1/asset/${created.objectId}/content`, headers: org.admin.headers }),
      ).presignedURL;
      assert.ok((await ctx().inject({ method: 'GET', url: pathOf(link) })).rawPayload.equals(content));

      const dropped = await createAsset(ctx(), org, { filename: 'drop.bin', filesize: PART + 1 });
      await fetch(dropped.urls![0]!.url, { method: 'PUT', body: content.subarray(0, PART) });
      const cancel = await ctx().inject({
        method: 'POST',
        url: '/v1/asset/complete',
        headers: org.admin.headers,
        payload: { action: 'cancel', uploadId: dropped.uploadId },
      });
      assert.equal(cancel.statusCode, 200, cancel.body);
      // The record stays, without content (reference §7.19: the asset stays metadata-only).
      assert.equal(
        json(await ctx().inject({ method: 'GET', url: `/v1/asset/${dropped.objectId}`, headers: org.admin.headers }))
          .contentState,
        'none',
      );
      const upload = await ctx()
        .deps.db.selectFrom('asset_uploads')
        .select('status')
        .where('id', '=', dropped.uploadId!)
        .executeTakeFirstOrThrow();
      assert.equal(upload.status, 'cancelled');
      assert.equal(await ctx().deps.blobs.head(`uploads/${org.orgId}/${dropped.uploadId}/object`), null);
    });

    it('stores identical content once on S3; the recycle bin lists it and purge removes the object', async () => {
      const bytes = await jpeg(70, 50);
      const upload = async (name: string) => {
        const created = await createAsset(ctx(), org, { filename: name });
        assert.equal((await fetch(created.url!, { method: 'PUT', body: bytes })).status, 200);
        const done = await ctx().inject({
          method: 'POST',
          url: '/v1/asset/complete',
          headers: org.admin.headers,
          payload: { action: 'complete', fileId: created.fileId },
        });
        assert.equal(done.statusCode, 200, done.body);
        return created;
      };
      const a = await upload('twin-a.jpg');
      const b = await upload('twin-b.jpg');
      const rows = await ctx()
        .deps.db.selectFrom('assets')
        .select(['id', 'blob_key'])
        .where('id', 'in', [a.objectId, b.objectId])
        .execute();
      assert.equal(rows.length, 2);
      assert.equal(rows[0]!.blob_key, rows[1]!.blob_key);
      const key = rows[0]!.blob_key!;
      assert.ok(await ctx().deps.blobs.head(key));
      for (const x of [a, b]) {
        const del = await ctx().inject({
          method: 'POST',
          url: `/v1/asset/${x.objectId}/delete`,
          headers: org.admin.headers,
          payload: { action: 'delete' },
        });
        assert.equal(del.statusCode, 200, del.body);
      }
      const bin = json(await ctx().inject({ method: 'GET', url: '/v1/asset/recycle-bin', headers: org.admin.headers }));
      const listed = bin.items.map((i: { objectId: string }) => i.objectId);
      assert.ok(listed.includes(a.objectId) && listed.includes(b.objectId));
      // Purging one keeps the shared bytes; purging the other removes them.
      const first = await ctx().inject({
        method: 'POST',
        url: '/v1/asset/purge',
        headers: org.admin.headers,
        payload: { objectIds: [a.objectId] },
      });
      assert.equal(first.statusCode, 200, first.body);
      await worker.drain();
      assert.ok(await ctx().deps.blobs.head(key));
      await ctx().inject({
        method: 'POST',
        url: '/v1/asset/purge',
        headers: org.admin.headers,
        payload: { objectIds: [b.objectId] },
      });
      await worker.drain();
      assert.equal(await ctx().deps.blobs.head(key), null);
    });
  },
  {
    env: {
      TESSERA_STORAGE: `s3://${s3.bucket}/tenant?endpoint=${encodeURIComponent(s3.endpoint)}&region=us-east-1`,
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
      TESSERA_UPLOAD_PART_SIZE: String(PART),
    },
  },
);
