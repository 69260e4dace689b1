import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../../../../../test/helpers/context.ts';
import { createTestOrg, type TestOrg } from '../../../../../test/helpers/factories.ts';
import type { Worker } from '../../../../core/jobs/worker.ts';
import { assetWorker, jpeg, uploadAsset } from '../../../../../test/helpers/assets.ts';
import { createTestOrg as otherOrg } from '../../../../../test/helpers/factories.ts';
import { rasteriseSvg } from '../media/images/svg-raster.ts';

// A few hundred bytes of SVG whose filter takes libvips/librsvg seconds to render (about 2.5 s on an idle core; the issue's
// "filter bomb", scaled down): with TESSERA_RENDITION_TIMEOUT_SECONDS=1 its rendition is abandoned.
const bomb = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" width="1400" height="1400"><filter id="f" x="0" y="0" width="100%" height="100%"><feTurbulence baseFrequency="0.01" numOctaves="4"/><feMorphology radius="6" operator="dilate"/></filter><rect width="1400" height="1400" filter="url(#f)"/></svg>',
);

// The bomb at full strength: one librsvg call that runs for minutes. Only a process that
// can be killed stops it; the time limit does, and the reason is recorded.
const bigBomb = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" width="3000" height="3000"><filter id="f" x="0" y="0" width="100%" height="100%"><feTurbulence baseFrequency="0.01" numOctaves="8"/><feMorphology radius="40" operator="dilate"/><feMorphology radius="40" operator="erode"/></filter><rect width="3000" height="3000" filter="url(#f)"/></svg>',
);

forEachEngine(
  'assets: rendition limits (issue 23, defect 7)',
  (ctx) => {
    let org: TestOrg;
    let worker: Worker;
    before(async () => {
      org = await createTestOrg(ctx());
      worker = assetWorker(ctx());
    });
    after(async () => worker.stop());

    it('abandons a rendition that takes longer than TESSERA_RENDITION_TIMEOUT_SECONDS: failed, named, nothing referenced', async () => {
      const created = await uploadAsset(ctx(), org, bomb, 'bomb.svg', { contentType: 'image/svg+xml' });
      await worker.drain();
      const asset = (
        await ctx().inject({ method: 'GET', url: `/v1/asset/${created.objectId}`, headers: org.admin.headers })
      ).json();
      assert.equal(asset.renditionsState, 'failed');
      assert.match(
        asset.technicalMetadata.renditionError,
        /took longer than 1 s to render \(TESSERA_RENDITION_TIMEOUT_SECONDS\)/,
      );
      assert.deepEqual(
        Object.keys(asset.renditions).filter((k) => k.startsWith('image') || k.startsWith('mezz')),
        [],
      );
    });

    // A test timeout, not a timing assertion: without a killable rasteriser the bomb's job would run
    // for minutes inside one native call and the job would not finish at all within it.
    it("kills an SVG filter bomb that blocks inside one librsvg call: failed with the reason recorded; another organization's renditions proceed", {
      timeout: 120_000,
    }, async () => {
      const other = await otherOrg(ctx());
      const bomb1 = await uploadAsset(ctx(), org, bigBomb, 'bigbomb.svg', { contentType: 'image/svg+xml' });
      const fine = await uploadAsset(ctx(), other, await jpeg(640, 480), 'fine.jpg');
      const fineSvg = await uploadAsset(
        ctx(),
        other,
        Buffer.from(
          '<svg xmlns="http://www.w3.org/2000/svg" width="300" height="200"><rect width="300" height="200" fill="#08f"/></svg>',
        ),
        'fine.svg',
        { contentType: 'image/svg+xml' },
      );
      await worker.drain();
      const get = async (o: TestOrg, id: string) =>
        (await ctx().inject({ method: 'GET', url: `/v1/asset/${id}`, headers: o.admin.headers })).json();
      const bombed = await get(org, bomb1.objectId);
      assert.equal(bombed.renditionsState, 'failed');
      assert.match(
        bombed.technicalMetadata.renditionError,
        /took longer than 1 s to render \(TESSERA_RENDITION_TIMEOUT_SECONDS\)/,
      );
      for (const id of [fine.objectId, fineSvg.objectId]) {
        const ok = await get(other, id);
        assert.equal(ok.renditionsState, 'ready', JSON.stringify(ok.technicalMetadata));
        assert.ok(ok.renditions.imageThumb, 'a thumbnail');
      }
      const thumb = await ctx().inject({
        method: 'GET',
        url: `/v1/asset/${fineSvg.objectId}/rendition/imageThumb`,
        headers: other.admin.headers,
      });
      assert.equal(thumb.statusCode, 200);
    });

    it('the SVG rasteriser process is stopped by an abort signal too, and reports a broken SVG as undecodable', {
      timeout: 120_000,
    }, async () => {
      const abort = new AbortController();
      const pending = rasteriseSvg(bigBomb, 3000, 100_000_000, 3600, abort.signal);
      abort.abort();
      await assert.rejects(pending, /the rendition was stopped/);
      await assert.rejects(rasteriseSvg(Buffer.from('<svg'), 200, 100_000_000, 60), /could not be decoded/);
      const raster = await rasteriseSvg(
        Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="400" height="100"/>'),
        200,
        100_000_000,
        60,
      );
      assert.deepEqual([raster.width, raster.height, raster.channels, raster.data.length], [200, 50, 4, 200 * 50 * 4]);
    });

    // A test timeout, not a timing assertion: decoded in the API process (as the transform service
    // did), the bomb would hold a thread inside librsvg for minutes and the Action would not finish.
    it('a transformation never draws an SVG in-process: a filter bomb (as source or as watermark) is killed at the time limit and named; the other items are made', {
      timeout: 120_000,
    }, async () => {
      const bombAsset = await uploadAsset(ctx(), org, bigBomb, 'bigbomb.svg', { contentType: 'image/svg+xml' });
      const photo = await uploadAsset(ctx(), org, await jpeg(200, 100), 'photo.jpg');
      const drawing = await uploadAsset(
        ctx(),
        org,
        Buffer.from(
          '<svg xmlns="http://www.w3.org/2000/svg" width="300" height="200"><rect width="300" height="200" fill="#08f"/></svg>',
        ),
        'drawing.svg',
        { contentType: 'image/svg+xml' },
      );
      await worker.drain();
      const res = await ctx().inject({
        method: 'POST',
        url: '/v1/asset/transform',
        headers: org.admin.headers,
        payload: {
          transformations: [
            { objectId: bombAsset.objectId, source: 'original', transformations: [{ type: 'resize', width: 100 }] },
            {
              objectId: photo.objectId,
              source: 'original',
              transformations: [{ type: 'watermark', objectId: bombAsset.objectId, gravity: 'center', scale: 0.5 }],
            },
            { objectId: photo.objectId, source: 'original', transformations: [{ type: 'resize', width: 50 }] },
            { objectId: drawing.objectId, source: 'original', transformations: [{ type: 'resize', width: 150 }] },
          ],
        },
      });
      assert.equal(res.statusCode, 202, res.body);
      await worker.drain();
      const action = (
        await ctx().inject({ method: 'GET', url: `/v1/action/${res.json().jobId}`, headers: org.admin.headers })
      ).json();
      const text = JSON.stringify(action);
      assert.equal(
        text.match(/took longer than 1 s to render \(TESSERA_RENDITION_TIMEOUT_SECONDS\)/g)?.length,
        2,
        `the bomb as source and as watermark, each named: ${text}`,
      );
      const files = action.result.files as { objectId: string; url: string | null; width: number; height: number }[];
      assert.deepEqual(
        files.map((f) => f.url === null),
        [true, true, false, false],
        'the two bombed items have no file',
      );
      assert.deepEqual(
        files.filter((f) => f.url !== null).map((f) => [f.objectId, f.width, f.height]),
        [
          [photo.objectId, 50, 25],
          [drawing.objectId, 150, 100],
        ],
        'the photo, and an ordinary SVG drawn by the child process',
      );
    });
  },
  { env: { TESSERA_RENDITION_TIMEOUT_SECONDS: '1' } },
);
