import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import sharp from 'sharp';
import { thumbHashToAverageRGBA, thumbHashToRGBA } from 'thumbhash';
import { forEachEngine } from '../../../../../test/helpers/context.ts';
import { createTestOrg, type TestOrg } from '../../../../../test/helpers/factories.ts';
import { assetWorker, uploadAsset } from '../../../../../test/helpers/assets.ts';
import type { Worker } from '../../../../core/jobs/worker.ts';
import { makeDocx, makePdf, videoClip } from '../media/media.fixtures.ts';

const rgb = (hex: string) => [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16)) as [number, number, number];

forEachEngine('assets: placeholder (ThumbHash and dominant colour) for every visual asset', (ctx) => {
  let org: TestOrg;
  let worker: Worker;
  before(async () => {
    org = await createTestOrg(ctx());
    worker = assetWorker(ctx());
  });
  after(async () => worker.stop());
  const get = async (id: string) =>
    (await ctx().inject({ method: 'GET', url: `/v1/asset/${id}`, headers: org.admin.headers })).json();

  it('an image gets a ThumbHash of its picture and its dominant colour, in both asset encodings', async () => {
    // Mostly orange with a blue band: the dominant colour is the orange.
    const picture = await sharp({ create: { width: 400, height: 300, channels: 3, background: '#e07020' } })
      .composite([
        { input: { create: { width: 400, height: 60, channels: 3, background: '#1040c0' } }, top: 240, left: 0 },
      ])
      .jpeg()
      .toBuffer();
    const created = await uploadAsset(ctx(), org, picture, 'orange.jpg');
    await worker.drain();
    const asset = await get(created.objectId);
    assert.equal(asset.renditionsState, 'ready');
    const { thumbhash, dominantColor } = asset.placeholder;
    assert.match(dominantColor, /^#[0-9a-f]{6}$/);
    const [r, g, b] = rgb(dominantColor);
    assert.ok(r > 180 && g > 80 && g < 150 && b < 80, `dominant colour ${dominantColor} is the orange`);
    const hash = Buffer.from(thumbhash, 'base64');
    const decoded = thumbHashToRGBA(hash);
    assert.ok(Math.abs(decoded.w / decoded.h - 4 / 3) < 0.2, 'the ThumbHash keeps the aspect ratio');
    const avg = thumbHashToAverageRGBA(hash);
    assert.ok(avg.r > avg.b, 'the ThumbHash average leans to the orange');
    const simple = (
      await ctx().inject({ method: 'GET', url: `/v1/assets/asset/${created.objectId}`, headers: org.admin.headers })
    ).json();
    assert.deepEqual(simple.data.placeholder, asset.placeholder);
  });

  it('a PDF (page 1) and a video (poster frame) get one; an office file without a preview and a metadata-only asset do not', async () => {
    const pdf = await uploadAsset(ctx(), org, makePdf(['A white page with a line of text']), 'page.pdf');
    const video = await uploadAsset(ctx(), org, await videoClip(), 'clip.mp4');
    const docx = await uploadAsset(ctx(), org, makeDocx(['No LibreOffice here']), 'memo.docx');
    await worker.drain();
    const pdfAsset = await get(pdf.objectId);
    assert.equal(pdfAsset.renditionsState, 'ready');
    const [r, g, b] = rgb(pdfAsset.placeholder.dominantColor);
    assert.ok(r > 200 && g > 200 && b > 200, `a mostly white page is white (${pdfAsset.placeholder.dominantColor})`);
    const videoAsset = await get(video.objectId);
    assert.equal(videoAsset.renditionsState, 'ready');
    assert.ok(Buffer.from(videoAsset.placeholder.thumbhash, 'base64').length >= 5);
    const docxAsset = await get(docx.objectId);
    if (docxAsset.renditionsState === 'placeholder')
      assert.equal(docxAsset.placeholder, undefined, 'a grey label has no placeholder of its own');
    const bare = await ctx().inject({ method: 'POST', url: '/v1/asset', headers: org.admin.headers, payload: {} });
    assert.equal((await get(bare.json().objectId)).placeholder, undefined);
  });

  it('a failed rendition leaves no placeholder and no perceptual hash', async () => {
    const good = await sharp({ create: { width: 50, height: 50, channels: 3, background: '#00ff00' } })
      .jpeg()
      .toBuffer();
    const broken = Buffer.concat([good.subarray(0, 200), Buffer.alloc(100, 0)]);
    const created = await uploadAsset(ctx(), org, broken, 'broken.jpg');
    await worker.drain();
    const asset = await get(created.objectId);
    assert.equal(asset.renditionsState, 'failed');
    assert.equal(asset.placeholder, undefined);
    const row = await ctx()
      .deps.db.selectFrom('asset_visual_hashes')
      .select('asset_id')
      .where('asset_id', '=', created.objectId)
      .executeTakeFirst();
    assert.equal(row, undefined);
  });
});
