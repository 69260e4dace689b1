// Issue 28, item 0: idempotent multipart completion on S3 (s3rver). A completion whose process
// died after S3 assembled the parts (the S3 multipart upload is then gone) is finished by the
// next `complete`, once, with nothing left behind in the staging area; a repeated `complete` is a
// 200 that changes nothing. (Two completions at once are not tested here: s3rver writes an
// assembled object non-atomically, which S3 does not.)
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, it } from 'node:test';
import { forEachEngine, json } from '../../../../test/helpers/context.ts';
import { createTestOrg, type TestOrg } from '../../../../test/helpers/factories.ts';
import { startS3 } from '../../../../test/helpers/s3.ts';
import { createAsset, pathOf } from '../../../../test/helpers/assets.ts';

const PART = 5 * 1024 * 1024;
const s3 = await startS3();
after(async () => s3.close());

forEachEngine(
  'multipart completion is idempotent (S3)',
  (ctx) => {
    let org: TestOrg;
    before(async () => {
      org = await createTestOrg(ctx());
    });

    async function partsUploaded(content: Buffer) {
      const created = await createAsset(ctx(), org, { filename: 'multi.bin', filesize: content.length });
      const parts = [];
      for (const { partNumber, url } of created.urls!) {
        const res = await fetch(url, {
          method: 'PUT',
          body: content.subarray((partNumber - 1) * PART, partNumber * PART),
        });
        assert.equal(res.status, 200);
        parts.push({ partNumber, etag: res.headers.get('etag')! });
      }
      return { created, parts };
    }

    const complete = (uploadId: string, parts: { partNumber: number; etag: string }[]) =>
      ctx().inject({
        method: 'POST',
        url: '/v1/asset/complete',
        headers: org.admin.headers,
        payload: { action: 'complete', uploadId, parts },
      });

    const renditionJobs = async (assetId: string) =>
      (
        await ctx().deps.db.selectFrom('jobs').select(['payload']).where('type', '=', 'assets.renditions').execute()
      ).filter((j) => JSON.parse(j.payload).assetId === assetId).length;

    it('a completion that died after S3 assembled the parts is finished by the next one, once, with no object left over', async () => {
      const content = randomBytes(PART + 777);
      const { created, parts } = await partsUploaded(content);
      const upload = await ctx()
        .deps.db.selectFrom('asset_uploads')
        .selectAll()
        .where('id', '=', created.uploadId!)
        .executeTakeFirstOrThrow();
      // What the killed process got done: S3's CompleteMultipartUpload (the multipart upload is gone now).
      await ctx().deps.blobs.presign!.complete(upload.staging_key, upload.s3_upload_id!, parts);

      const done = await complete(created.uploadId!, parts);
      assert.equal(done.statusCode, 200, done.body);
      const again = await complete(created.uploadId!, parts);
      assert.equal(again.statusCode, 200, again.body);

      const asset = json(
        await ctx().inject({ method: 'GET', url: `/v1/asset/${created.objectId}`, headers: org.admin.headers }),
      );
      assert.equal(asset.contentState, 'available');
      const link = json(
        await ctx().inject({ method: 'GET', url: `/v1/asset/${created.objectId}/content`, headers: org.admin.headers }),
      ).presignedURL;
      assert.ok((await ctx().inject({ method: 'GET', url: pathOf(link) })).rawPayload.equals(content));
      // Nothing orphaned: the assembled object left the staging area for its content address.
      assert.equal(await ctx().deps.blobs.head(upload.staging_key), null);
      assert.equal(await renditionJobs(created.objectId), 1);
    });
  },
  {
    env: {
      TESSERA_STORAGE: `s3://${s3.bucket}?endpoint=${s3.endpoint}&region=us-east-1`,
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
      TESSERA_UPLOAD_PART_SIZE: String(PART),
    },
  },
);
