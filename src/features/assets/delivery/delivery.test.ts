import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import sharp from 'sharp';
import type { Worker } from '../../../core/jobs/worker.ts';
import { forEachEngine, json } from '../../../../test/helpers/context.ts';
import { createTestOrg, createTestUser, type TestOrg } from '../../../../test/helpers/factories.ts';
import { assetWorker, createAsset, uploadAsset } from '../../../../test/helpers/assets.ts';
import { createGroup, createTemplate } from '../../../../test/helpers/permissions.ts';
import { securitySuite } from '../../../../test/helpers/security.ts';
import { makePdf } from '../renditions/media/media.fixtures.ts';

forEachEngine('assets: delivery presets and image renditions on request', (ctx) => {
  let org: TestOrg;
  let worker: Worker;
  let photo: string;
  before(async () => {
    org = await createTestOrg(ctx());
    worker = assetWorker(ctx());
    const picture = await sharp({ create: { width: 1600, height: 1200, channels: 3, background: '#3366aa' } })
      .jpeg()
      .toBuffer();
    photo = (await uploadAsset(ctx(), org, picture, 'photo.jpg')).objectId;
  });
  after(async () => worker.stop());
  const get = (url: string, headers = org.admin.headers) => ctx().inject({ method: 'GET', url, headers });
  const blobKeys = async () => {
    const rows = await ctx()
      .deps.db.selectFrom('assets')
      .select('sha256')
      .where('id', '=', photo)
      .executeTakeFirstOrThrow();
    return rows.sha256!;
  };

  it('makes a rendition by parameters (size, fit, format, quality), stores it once, and serves it with ETag and Range', async () => {
    for (const [query, format, width, height] of [
      ['width=400', 'jpeg', 400, 300],
      ['width=300&height=300&fit=cover&format=webp&quality=60', 'webp', 300, 300],
      ['height=150&format=png', 'png', 200, 150],
      ['width=120&format=avif', 'heif', 120, 90],
      ['width=5000', 'jpeg', 1600, 1200],
    ] as const) {
      const res = await get(`/v1/asset/${photo}/delivery?${query}`);
      assert.equal(res.statusCode, 200, `${query}: ${res.body}`);
      const meta = await sharp(res.rawPayload).metadata();
      assert.equal(meta.format, format, query);
      assert.deepEqual([meta.width, meta.height], [width, height], `${query}: never enlarged`);
    }
    const first = await get(`/v1/asset/${photo}/delivery?width=400`);
    const etag = String(first.headers.etag);
    assert.equal(
      (await get(`/v1/asset/${photo}/delivery?width=400`, { ...org.admin.headers, 'if-none-match': etag })).statusCode,
      304,
    );
    const range = await get(`/v1/asset/${photo}/delivery?width=400`, { ...org.admin.headers, range: 'bytes=0-9' });
    assert.equal(range.statusCode, 206);
    assert.equal(range.rawPayload.length, 10);
    // Cached: the stored file is what later requests get, under the asset's renditions.
    const sha = await blobKeys();
    const head = await ctx().deps.blobs.head(`renditions/${org.orgId}/${sha.slice(0, 2)}/${sha}`);
    assert.equal(head, null, 'a prefix is not an object');
    const again = await get(`/v1/asset/${photo}/delivery?width=400`);
    assert.deepEqual(again.rawPayload, first.rawPayload);
  });

  it('named presets: an administrator defines them, any user lists them, a preset gives the same file as its parameters', async () => {
    const made = await ctx().inject({
      method: 'POST',
      url: '/v1/delivery-presets',
      headers: org.admin.headers,
      payload: { name: 'Social', width: 500, height: 500, fit: 'cover', format: 'webp', quality: 70 },
    });
    assert.equal(made.statusCode, 200, made.body);
    const preset = json(made);
    assert.equal(preset.name, 'Social');
    const web = json(
      await ctx().inject({
        method: 'POST',
        url: '/v1/delivery-presets',
        headers: org.admin.headers,
        payload: { name: 'Web', width: 800, format: 'jpg' },
      }),
    );
    assert.deepEqual([web.format, web.quality, web.fit, web.height], ['jpeg', 80, 'inside', null]);
    const dup = await ctx().inject({
      method: 'POST',
      url: '/v1/delivery-presets',
      headers: org.admin.headers,
      payload: { name: 'social' },
    });
    assert.equal(dup.statusCode, 409);
    assert.equal(json(dup).details[0].field, 'body.name');
    const byPreset = await get(`/v1/asset/${photo}/delivery?preset=social`);
    assert.equal(byPreset.statusCode, 200, byPreset.body);
    assert.equal(byPreset.headers['content-type'], 'image/webp');
    const meta = await sharp(byPreset.rawPayload).metadata();
    assert.deepEqual([meta.width, meta.height], [500, 500]);
    const byParams = await get(`/v1/asset/${photo}/delivery?width=500&height=500&fit=cover&format=webp&quality=70`);
    assert.equal(byParams.headers.etag, byPreset.headers.etag, 'one cached file for both');
    // A plain user (Everyone: View and Download through Default, the Download privilege) lists and uses them.
    const user = await createTestUser(ctx(), org, { privileges: ['download'], groupIds: [org.groups.everyone] });
    const list = json(await get('/v1/delivery-presets', user.headers));
    assert.deepEqual(
      list.presets.map((p: { name: string }) => p.name),
      ['Social', 'Web'],
    );
    assert.equal((await get(`/v1/asset/${photo}/delivery?preset=Web`, user.headers)).statusCode, 200);
    // But may not define them (Content Management).
    assert.equal(
      (
        await ctx().inject({
          method: 'POST',
          url: '/v1/delivery-presets',
          headers: user.headers,
          payload: { name: 'Mine' },
        })
      ).statusCode,
      403,
    );
    assert.equal(
      (
        await ctx().inject({
          method: 'PUT',
          url: `/v1/delivery-presets/${preset.id}`,
          headers: user.headers,
          payload: { width: 10 },
        })
      ).statusCode,
      403,
    );
    // Changing a preset changes what it gives; deleting it makes its name unknown.
    const changed = await ctx().inject({
      method: 'PUT',
      url: `/v1/delivery-presets/${preset.id}`,
      headers: org.admin.headers,
      payload: { width: 250, height: 250 },
    });
    assert.equal(changed.statusCode, 200, changed.body);
    assert.equal(json(changed).format, 'webp', 'unchanged fields stay');
    assert.equal(
      (await sharp((await get(`/v1/asset/${photo}/delivery?preset=Social`)).rawPayload).metadata()).width,
      250,
    );
    assert.equal(
      (await ctx().inject({ method: 'DELETE', url: `/v1/delivery-presets/${preset.id}`, headers: org.admin.headers }))
        .statusCode,
      200,
    );
    const gone = await get(`/v1/asset/${photo}/delivery?preset=Social`);
    assert.equal(gone.statusCode, 400);
    assert.equal(json(gone).details[0].field, 'querystring.preset');
    assert.equal(
      (await ctx().inject({ method: 'DELETE', url: `/v1/delivery-presets/${preset.id}`, headers: org.admin.headers }))
        .statusCode,
      404,
    );
    const other = await createTestOrg(ctx());
    assert.equal(
      (
        await ctx().inject({
          method: 'PUT',
          url: `/v1/delivery-presets/${web.id}`,
          headers: other.admin.headers,
          payload: { width: 1 },
        })
      ).statusCode,
      404,
    );
    assert.deepEqual(json(await get('/v1/delivery-presets', other.admin.headers)).presets, []);
  });

  it('needs View and Download on the asset: without Download a 403, without View a 404', async () => {
    const group = await createGroup(ctx(), org);
    const viewOnly = await createTemplate(ctx(), org, [[group, ['view']]]);
    const viewer = await createTestUser(ctx(), org, { privileges: ['download'], groupIds: [group] });
    const picture = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#aa0000' } })
      .jpeg()
      .toBuffer();
    const seen = (await uploadAsset(ctx(), org, picture, 'seen.jpg', { securityTemplateIds: [viewOnly] })).objectId;
    assert.equal((await get(`/v1/asset/${seen}/delivery?width=10`, viewer.headers)).statusCode, 403);
    assert.equal((await get(`/v1/asset/${photo}/delivery?width=10`, viewer.headers)).statusCode, 404);
  });

  it('a PDF is delivered from its page-1 rendition; an asset without a picture is a 409; bad parameters are 400s naming them', async () => {
    const pdf = (await uploadAsset(ctx(), org, makePdf(['Delivered page']), 'doc.pdf')).objectId;
    assert.equal((await get(`/v1/asset/${pdf}/delivery?width=100`)).statusCode, 409, 'before its renditions');
    await worker.drain();
    const page = await get(`/v1/asset/${pdf}/delivery?width=100&format=png`);
    assert.equal(page.statusCode, 200, page.body);
    assert.equal((await sharp(page.rawPayload).metadata()).width, 100);
    const bare = (await createAsset(ctx(), org)).objectId;
    assert.equal((await get(`/v1/asset/${bare}/delivery?width=100`)).statusCode, 404, 'no content');
    for (const [query, field] of [
      ['width=0', 'width'],
      ['width=9000', 'width'],
      ['format=gif', 'format'],
      ['fit=stretch', 'fit'],
      ['quality=101', 'quality'],
      ['preset=Web&width=10', 'width'],
    ] as const) {
      const res = await get(`/v1/asset/${photo}/delivery?${query}`);
      assert.equal(res.statusCode, 400, `${query}: ${res.body}`);
      assert.match(JSON.stringify(json(res)), new RegExp(field), query);
    }
    for (const payload of [
      { name: '' },
      { name: 'ok', width: -1 },
      { name: 'ok', format: 'bmp' },
      { name: '__proto__' },
    ]) {
      const res = await ctx().inject({
        method: 'POST',
        url: '/v1/delivery-presets',
        headers: org.admin.headers,
        payload,
      });
      assert.equal(res.statusCode, 400, `${JSON.stringify(payload)}: ${res.body}`);
    }
  });

  securitySuite(ctx, 'GET /v1/asset/{id}/delivery', {
    method: 'GET',
    resource: true,
    privileges: ['download'],
    prepare: async (c, o) => ({
      url: `/v1/asset/${
        (
          await uploadAsset(
            c,
            o,
            await sharp({ create: { width: 8, height: 8, channels: 3, background: '#000' } })
              .jpeg()
              .toBuffer(),
          )
        ).objectId
      }/delivery?width=4`,
    }),
  });
  securitySuite(ctx, 'POST /v1/delivery-presets', {
    method: 'POST',
    privileges: ['content_management'],
    prepare: () => ({
      url: '/v1/delivery-presets',
      body: { name: `p${Math.random().toString(36).slice(2, 8)}`, width: 10 },
    }),
  });
  securitySuite(ctx, 'GET /v1/delivery-presets', { method: 'GET', prepare: () => ({ url: '/v1/delivery-presets' }) });
});
