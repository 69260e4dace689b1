import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, it } from 'node:test';
import sharp from 'sharp';
import { forEachEngine, json } from '../../../../../test/helpers/context.ts';
import { createTestOrg, createTestUser, type TestOrg } from '../../../../../test/helpers/factories.ts';
import { securitySuite } from '../../../../../test/helpers/security.ts';
import type { Worker } from '../../../../core/jobs/worker.ts';
import { assetWorker, createAsset, image, jpeg, pathOf, uploadAsset } from '../../../../../test/helpers/assets.ts';

const get = (ctx: any, org: TestOrg, id: string) =>
  ctx.inject({ method: 'GET', url: `/v1/asset/${id}`, headers: org.admin.headers }).then((r: any) => r.json());

forEachEngine(
  'assets: renditions, technical metadata and downloads',
  (ctx) => {
    let org: TestOrg;
    let worker: Worker;
    before(async () => {
      org = await createTestOrg(ctx());
      worker = assetWorker(ctx());
    });
    after(async () => worker.stop());

    it('makes the four renditions from JPEG, PNG, WebP and TIFF with the right sizes, never upscaled', async () => {
      const cases = [
        {
          bytes: await jpeg(1200, 800),
          name: 'a.jpg',
          expect: {
            imageThumb: [200, 133],
            imagePreview: [700, 467],
            imagePreviewLarge: [1000, 667],
            mezzaninePreview: [1200, 800],
          },
          type: 'image/jpeg',
        },
        {
          bytes: await image('png', 300, 600),
          name: 'b.png',
          expect: {
            imageThumb: [100, 200],
            imagePreview: [300, 600],
            imagePreviewLarge: [300, 600],
            mezzaninePreview: [300, 600],
          },
          type: 'image/png',
        },
        {
          bytes: await image('webp', 800, 400),
          name: 'c.webp',
          expect: {
            imageThumb: [200, 100],
            imagePreview: [700, 350],
            imagePreviewLarge: [800, 400],
            mezzaninePreview: [800, 400],
          },
          type: 'image/png',
        },
        {
          bytes: await image('tiff', 250, 250),
          name: 'd.tiff',
          expect: {
            imageThumb: [200, 200],
            imagePreview: [250, 250],
            imagePreviewLarge: [250, 250],
            mezzaninePreview: [250, 250],
          },
          type: 'image/jpeg',
        },
      ];
      for (const c of cases) {
        const created = await uploadAsset(ctx(), org, c.bytes, c.name);
        await worker.drain();
        const asset = await get(ctx(), org, created.objectId);
        assert.equal(asset.renditionsState, 'ready', `${c.name}: ${JSON.stringify(asset.technicalMetadata)}`);
        for (const [name, [w, h]] of Object.entries(c.expect)) {
          const res = await ctx().inject({
            method: 'GET',
            url: pathOf(asset.renditions[name]),
            headers: org.admin.headers,
          });
          assert.equal(res.statusCode, 200, `${c.name} ${name}: ${res.body}`);
          assert.equal(res.headers['content-type'], c.type);
          const meta = await sharp(res.rawPayload).metadata();
          assert.deepEqual([meta.width, meta.height], [w, h], `${c.name} ${name}`);
        }
        assert.equal(asset.renditions.width, c.expect.mezzaninePreview[0]);
      }
    });

    it('applies EXIF orientation and extracts technical metadata (size, dimensions, format, colour space, MD5, SHA-256, EXIF, XMP)', async () => {
      const bytes = await sharp({ create: { width: 80, height: 40, channels: 3, background: '#336699' } })
        .withExif({ IFD0: { Make: 'Tessera Camera', Model: 'T-1', Copyright: 'CC0' } })
        .withXmp(
          '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title><rdf:Alt><rdf:li xml:lang="x-default">Harbour</rdf:li></rdf:Alt></dc:title></rdf:Description></rdf:RDF></x:xmpmeta>',
        )
        .jpeg()
        .toBuffer();
      const rotated = await sharp(bytes).withMetadata({ orientation: 6 }).jpeg().toBuffer();
      const created = await uploadAsset(ctx(), org, rotated, 'rotated.jpg');
      await worker.drain();
      const asset = await get(ctx(), org, created.objectId);
      assert.deepEqual([asset.renditions.width, asset.renditions.height], [40, 80]);
      const thumb = await ctx().inject({
        method: 'GET',
        url: pathOf(asset.renditions.imageThumb),
        headers: org.admin.headers,
      });
      const meta = await sharp(thumb.rawPayload).metadata();
      assert.deepEqual([meta.width, meta.height], [40, 80]);
      const t = asset.technicalMetadata;
      assert.equal(t.tenovos_metadata.fileSizeInBytes, rotated.length);
      assert.equal(t.tenovos_metadata.MD5Checksum, createHash('md5').update(rotated).digest('hex'));
      assert.equal(t.tenovos_metadata.SHA256Checksum, createHash('sha256').update(rotated).digest('hex'));
      assert.equal(t.image_metadata.fileType, 'JPEG');
      assert.equal(t.image_metadata.colorSpaceData, 'RGB');
      assert.equal(t.image_metadata.interpretation, 'srgb');
      assert.equal(t.image_metadata.imageWidth, 40);
      assert.equal(t.image_metadata.orientation, 6);
      assert.equal(t.image_metadata.exif.make, 'Tessera Camera');
      assert.equal(t.image_metadata.exif.copyright, 'CC0');
      assert.equal(t.image_metadata.xmp.title, 'Harbour');
    });

    it('fails a corrupt image cleanly: the job is dead, the asset says failed, no rendition is referenced', async () => {
      const good = await jpeg(300, 300);
      const corrupt = Buffer.concat([good.subarray(0, 400), Buffer.alloc(2000, 0x55)]);
      const created = await uploadAsset(ctx(), org, corrupt, 'broken.jpg');
      await worker.drain();
      const asset = await get(ctx(), org, created.objectId);
      assert.equal(asset.renditionsState, 'failed');
      assert.deepEqual(
        Object.keys(asset.renditions).filter((k) => k.startsWith('image') || k.startsWith('mezz')),
        [],
      );
      assert.match(asset.technicalMetadata.renditionError, /decoded|readable/);
      const job = await ctx()
        .deps.db.selectFrom('jobs')
        .select(['status'])
        .where('payload', 'like', `%${created.objectId}%`)
        .where('type', '=', 'assets.renditions')
        .executeTakeFirst();
      assert.equal(job?.status, 'dead');
    });

    it('refuses an image above the pixel limit from its header, before decoding', async () => {
      const created = await uploadAsset(ctx(), org, await jpeg(2500, 2100), 'huge.jpg');
      await worker.drain();
      const asset = await get(ctx(), org, created.objectId);
      assert.equal(asset.renditionsState, 'failed');
      assert.match(asset.technicalMetadata.renditionError, /more than the limit of 5000000/);
    });

    it('gives files no converter reads (a zip) a placeholder rendition', async () => {
      const created = await uploadAsset(
        ctx(),
        org,
        Buffer.concat([Buffer.from('PK\u0005\u0006', 'latin1'), Buffer.alloc(18)]),
        'bundle.zip',
      );
      await worker.drain();
      const asset = await get(ctx(), org, created.objectId);
      assert.equal(asset.renditionsState, 'placeholder');
      assert.equal(asset.contentType, 'application/zip');
      const thumb = await ctx().inject({
        method: 'GET',
        url: pathOf(asset.renditions.imageThumb),
        headers: org.admin.headers,
      });
      assert.equal(thumb.statusCode, 200);
      assert.equal(thumb.headers['content-type'], 'image/png');
    });

    it('serves renditions with ETag, Last-Modified, 304, Range and Cache-Control, to viewers only', async () => {
      const created = await uploadAsset(ctx(), org, await jpeg(400, 300), 'served.jpg');
      await worker.drain();
      const asset = await get(ctx(), org, created.objectId);
      const url = pathOf(asset.renditions.imagePreview);
      const full = await ctx().inject({ method: 'GET', url, headers: org.admin.headers });
      assert.equal(full.statusCode, 200);
      assert.ok(full.headers.etag);
      assert.ok(full.headers['last-modified']);
      assert.match(String(full.headers['cache-control']), /private, max-age=\d+/);
      assert.equal(
        (
          await ctx().inject({
            method: 'GET',
            url,
            headers: { ...org.admin.headers, 'if-none-match': String(full.headers.etag) },
          })
        ).statusCode,
        304,
      );
      const part = await ctx().inject({ method: 'GET', url, headers: { ...org.admin.headers, range: 'bytes=0-9' } });
      assert.equal(part.statusCode, 206);
      assert.equal(part.headers['content-range'], `bytes 0-9/${full.rawPayload.length}`);
      assert.ok(part.rawPayload.equals(full.rawPayload.subarray(0, 10)));
      assert.equal(
        (await ctx().inject({ method: 'GET', url, headers: { ...org.admin.headers, range: 'bytes=999999-' } }))
          .statusCode,
        416,
      );
      const outsider = await createTestUser(ctx(), org, { groupIds: [] });
      assert.equal((await ctx().inject({ method: 'GET', url, headers: outsider.headers })).statusCode, 404);
      assert.equal(
        (
          await ctx().inject({
            method: 'GET',
            url: `/v1/asset/${created.objectId}/rendition/nope`,
            headers: org.admin.headers,
          })
        ).statusCode,
        404,
      );
      const events = await ctx()
        .deps.db.selectFrom('events')
        .select('type')
        .where('org_id', '=', org.orgId)
        .where('body', 'like', `%${created.objectId}%`)
        .execute();
      assert.ok(events.some((e) => e.type === 'asset.renditions.created'));
    });

    it('hands out a download link of the original (Download) and time-limited URLs (expose); asset.downloaded fires when their bytes are served', async () => {
      const bytes = await jpeg(100, 100);
      const created = await uploadAsset(ctx(), org, bytes, 'dl.jpg');
      await worker.drain();
      const link = await ctx().inject({
        method: 'GET',
        url: `/v1/asset/${created.objectId}/content`,
        headers: org.admin.headers,
      });
      assert.equal(link.statusCode, 200, link.body);
      const file = await ctx().inject({ method: 'GET', url: pathOf(json(link).presignedURL) });
      assert.equal(file.statusCode, 200);
      assert.ok(file.rawPayload.equals(bytes));
      assert.match(String(file.headers['content-disposition']), /attachment; filename="dl.jpg"/);
      const exposed = await ctx().inject({
        method: 'POST',
        url: '/v1/asset/expose',
        headers: org.admin.headers,
        payload: [
          {
            id: created.objectId,
            identifier: 'objectId',
            components: [
              { componentType: 'rendition', componentRef: ['imageThumb', 'imagePreview'], expiration: 60 },
              { componentType: 'object', componentRef: 'original', expiration: 60 },
            ],
          },
        ],
      });
      assert.equal(exposed.statusCode, 200, exposed.body);
      const comps = json(exposed)[0].components;
      assert.deepEqual(
        comps.map((c: { componentRef: string }) => c.componentRef),
        ['imageThumb', 'imagePreview', 'original'],
      );
      assert.equal((await ctx().inject({ method: 'GET', url: pathOf(comps[0].url) })).statusCode, 200);
      assert.equal((await ctx().inject({ method: 'HEAD', url: pathOf(comps[2].url) })).statusCode, 200);
      assert.equal((await ctx().inject({ method: 'GET', url: pathOf(comps[2].url) })).statusCode, 200);
      ctx().clock.advance(61_000);
      assert.equal((await ctx().inject({ method: 'GET', url: pathOf(comps[0].url) })).statusCode, 403);
      const none = await ctx().inject({
        method: 'POST',
        url: '/v1/asset/expose',
        headers: org.admin.headers,
        payload: [
          {
            id: '0190a4b2-0000-7000-8000-000000000000',
            components: [{ componentType: 'object', componentRef: 'original' }],
          },
        ],
      });
      assert.equal(none.statusCode, 400);
      assert.equal(json(none).message, 'No assets found');
      const viewerOnly = await createTestUser(ctx(), org, { privileges: ['download'], groupIds: [] });
      assert.equal(
        (
          await ctx().inject({
            method: 'GET',
            url: `/v1/asset/${created.objectId}/content`,
            headers: viewerOnly.headers,
          })
        ).statusCode,
        404,
      );
      const events = await ctx()
        .deps.db.selectFrom('events')
        .select('type')
        .where('org_id', '=', org.orgId)
        .where('type', '=', 'asset.downloaded')
        .where('body', 'like', `%${created.objectId}%`)
        .execute();
      assert.equal(events.length, 2);
    });

    securitySuite(ctx, 'GET /v1/asset/{id}/content', {
      method: 'GET',
      resource: true,
      prepare: async (c, o) => ({
        url: `/v1/asset/${(await uploadAsset(c, o, await jpeg(20, 20), 's.jpg')).objectId}/content`,
      }),
    });
    securitySuite(ctx, 'GET /v1/asset/{id}/rendition/{name}', {
      method: 'GET',
      resource: true,
      prepare: async (c, o) => ({ url: `/v1/asset/${(await createAsset(c, o)).objectId}/rendition/imageThumb` }),
    });
    securitySuite(ctx, 'POST /v1/asset/expose', {
      method: 'POST',
      privileges: ['download'],
      readScope: true,
      prepare: async (c, o) => ({
        url: '/v1/asset/expose',
        body: [
          {
            id: (await uploadAsset(c, o, await jpeg(20, 20), 's.jpg')).objectId,
            components: [{ componentType: 'object', componentRef: 'original' }],
          },
        ],
      }),
    });
  },
  { env: { TESSERA_RENDITION_MAX_PIXELS: '5000000' } },
);
