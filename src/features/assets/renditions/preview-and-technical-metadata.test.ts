import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import sharp from 'sharp';
import { forEachEngine, json } from '../../../../test/helpers/context.ts';
import { createTestOrg, type TestOrg } from '../../../../test/helpers/factories.ts';
import { securitySuite } from '../../../../test/helpers/security.ts';
import type { Worker } from '../../../core/jobs/worker.ts';
import { assetWorker, createAsset, jpeg, pathOf, uploadAsset } from '../../../../test/helpers/assets.ts';

forEachEngine('assets: technical metadata and preview replacement', (ctx) => {
  let org: TestOrg;
  let worker: Worker;
  before(async () => {
    org = await createTestOrg(ctx());
    worker = assetWorker(ctx());
  });
  after(async () => worker.stop());

  it('sets technical metadata of federated assets only', async () => {
    const fed = await createAsset(ctx(), org, {
      filename: 'remote.tif',
      contentPath: 's3://their-bucket/path/remote.tif',
      skipTranscode: true,
    });
    assert.equal(fed.url, 's3://their-bucket/path/remote.tif');
    const ok = await ctx().inject({
      method: 'POST',
      url: `/v1/asset/${fed.objectId}/technical-metadata`,
      headers: org.admin.headers,
      payload: { tenovos_metadata: { fileName: 'remote.tif', MD5Checksum: 'abc' }, image_metadata: { imageWidth: 10 } },
    });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.deepEqual(json(ok), { message: 'Success' });
    const asset = json(
      await ctx().inject({ method: 'GET', url: `/v1/asset/${fed.objectId}`, headers: org.admin.headers }),
    );
    assert.equal(asset.technicalMetadata.tenovos_metadata.MD5Checksum, 'abc');
    assert.equal(asset.isFederated, true);
    const local = await createAsset(ctx(), org);
    const no = await ctx().inject({
      method: 'POST',
      url: `/v1/asset/${local.objectId}/technical-metadata`,
      headers: org.admin.headers,
      payload: { image_metadata: {} },
    });
    assert.equal(no.statusCode, 400);
    assert.equal(json(no).message, 'Asset is not federated');
  });

  it('replaces the preview rendition with an uploaded image', async () => {
    const a = await uploadAsset(ctx(), org, await jpeg(1200, 900), 'orig.jpg');
    await worker.drain();
    const replacement = await sharp({ create: { width: 500, height: 100, channels: 3, background: '#00ff00' } })
      .png()
      .toBuffer();
    const res = await ctx().inject({
      method: 'POST',
      url: '/v1/asset/content/preview',
      headers: org.admin.headers,
      payload: { fileIds: [a.fileId], filename: 'preview.png', filesize: replacement.length },
    });
    assert.equal(res.statusCode, 200, res.body);
    const put = await ctx().inject({ method: 'PUT', url: pathOf(json(res).uploads[0].url), payload: replacement });
    assert.equal(put.statusCode, 200, put.body);
    await worker.drain();
    const asset = json(
      await ctx().inject({ method: 'GET', url: `/v1/asset/${a.objectId}`, headers: org.admin.headers }),
    );
    const preview = await ctx().inject({
      method: 'GET',
      url: pathOf(asset.renditions.imagePreview),
      headers: org.admin.headers,
    });
    assert.deepEqual(
      [(await sharp(preview.rawPayload).metadata()).width, (await sharp(preview.rawPayload).metadata()).height],
      [500, 100],
    );
    for (const [body, field] of [
      [{ filename: 'p.png', filesize: 1 }, 'body.fileIds'],
      [{ fileIds: [a.fileId], filesize: 1 }, 'body.filename'],
      [{ fileIds: [a.fileId], filename: 'p.png' }, 'body.filesize'],
      [{ fileIds: ['0190a4b2-0000-7000-8000-000000000000'], filename: 'p.png', filesize: 1 }, 'body.fileIds'],
      [{ fileIds: [a.fileId], filename: 'p.docx', filesize: 1 }, 'body.filename'],
    ] as const) {
      const bad = await ctx().inject({
        method: 'POST',
        url: '/v1/asset/content/preview',
        headers: org.admin.headers,
        payload: body,
      });
      assert.equal(bad.statusCode, 400, bad.body);
      assert.equal(json(bad).details[0].field, field);
    }
    // Upload URLs for every file named: at most 10,000 parts in all, whatever the size or count.
    const ids = ['0190a4b2-0000-7000-8000-000000000001', '0190a4b2-0000-7000-8000-000000000002'];
    for (const [fileIds, filesize, message] of [
      [ids.slice(0, 1), 1e15, /must be <= 5497558138880/],
      [ids.slice(0, 1), 2 * 1024 ** 4, /10000 parts/],
      [ids, 600 * 1024 ** 3, /with 2 files, must be at most/],
      [ids.slice(0, 1), '1e999', /out of range/],
    ] as const) {
      const bad = await ctx().inject({
        method: 'POST',
        url: '/v1/asset/content/preview',
        headers: org.admin.headers,
        payload: { fileIds, filename: 'p.png', filesize },
      });
      assert.equal(bad.statusCode, 400, bad.body);
      assert.equal(json(bad).details[0].field, 'body.filesize');
      assert.match(json(bad).details[0].message, message);
    }
  });

  securitySuite(ctx, 'POST /v1/asset/{id}/technical-metadata', {
    method: 'POST',
    resource: true,
    prepare: async (c, o) => ({
      url: `/v1/asset/${(await createAsset(c, o, { filename: 'f.tif', contentPath: 's3://b/f.tif' })).objectId}/technical-metadata`,
      body: { image_metadata: {} },
    }),
  });
  securitySuite(ctx, 'POST /v1/asset/content/preview', {
    method: 'POST',
    privileges: ['replace_mezzanine', 'upload'],
    prepare: async (c, o) => ({
      url: '/v1/asset/content/preview',
      body: {
        fileIds: [(await uploadAsset(c, o, await jpeg(10, 10), 's.jpg')).fileId],
        filename: 'p.png',
        filesize: 10,
      },
    }),
  });
});
