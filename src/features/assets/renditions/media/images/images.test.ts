import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, it } from 'node:test';
import { writePsdBuffer } from 'ag-psd';
import sharp from 'sharp';
import { forEachEngine } from '../../../../../../test/helpers/context.ts';
import { createTestOrg, type TestOrg } from '../../../../../../test/helpers/factories.ts';
import type { Worker } from '../../../../../core/jobs/worker.ts';
import { assetWorker, pathOf, uploadAsset } from '../../../../../../test/helpers/assets.ts';

/** A TIFF-headed file with a small and a large JPEG inside, as cameras write RAW files. */
async function fakeRaw(): Promise<Buffer> {
  const small = await sharp({ create: { width: 160, height: 120, channels: 3, background: '#ff0000' } })
    .jpeg()
    .toBuffer();
  const large = await sharp({ create: { width: 900, height: 600, channels: 3, background: '#00aa00' } })
    .jpeg()
    .toBuffer();
  const header = Buffer.from([0x49, 0x49, 0x2a, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00]);
  return Buffer.concat([
    header,
    Buffer.alloc(100, 0x11),
    small,
    Buffer.alloc(300, 0x22),
    large,
    Buffer.alloc(500, 0x33),
  ]);
}

forEachEngine('assets: HEIC, camera RAW, PSD, animated and SVG images', (ctx) => {
  let org: TestOrg;
  let worker: Worker;
  let server: Server;
  let hits = 0;
  before(async () => {
    org = await createTestOrg(ctx());
    worker = assetWorker(ctx());
    server = createServer((_req, res) => {
      hits += 1;
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  after(async () => {
    await worker.stop();
    await new Promise((resolve) => server.close(resolve));
  });
  const get = (id: string) =>
    ctx()
      .inject({ method: 'GET', url: `/v1/asset/${id}`, headers: org.admin.headers })
      .then((r) => r.json());
  const rendition = (url: string) => ctx().inject({ method: 'GET', url: pathOf(url), headers: org.admin.headers });
  const upload = async (bytes: Buffer, name: string) => {
    const created = await uploadAsset(ctx(), org, bytes, name);
    await worker.drain();
    return { id: created.objectId, asset: await get(created.objectId) };
  };

  it('decodes HEIC through heic-decode into the image renditions', async () => {
    const { asset } = await upload(
      await readFile(new URL('../../../../../../test/fixtures/media/sample-64x48.heic', import.meta.url)),
      'photo.heic',
    );
    assert.equal(asset.renditionsState, 'ready', JSON.stringify(asset.technicalMetadata));
    assert.equal(asset.contentType, 'image/heic');
    assert.deepEqual([asset.renditions.width, asset.renditions.height], [64, 48]);
    const thumb = await rendition(asset.renditions.imageThumb);
    const { data, info } = await sharp(thumb.rawPayload).raw().toBuffer({ resolveWithObject: true });
    assert.deepEqual([info.width, info.height], [64, 48]);
    // Left half red, right half blue in the fixture.
    const at = (x: number) => [
      ...data.subarray((24 * info.width + x) * info.channels, (24 * info.width + x) * info.channels + 3),
    ];
    assert.ok(at(5)[0]! > 150 && at(5)[2]! < 100, `left ${at(5)}`);
    assert.ok(at(58)[2]! > 150 && at(58)[0]! < 100, `right ${at(58)}`);
    assert.equal(asset.technicalMetadata.image_metadata.fileType, 'HEIC');
    const broken = await upload(
      Buffer.concat([Buffer.from('\0\0\0\x1cftypheic\0\0\0\0mif1heicmiaf', 'latin1'), Buffer.alloc(200, 7)]),
      'broken.heic',
    );
    assert.equal(broken.asset.renditionsState, 'failed');
    assert.match(broken.asset.technicalMetadata.renditionError, /HEIC/);
  });

  it('previews a camera RAW file from its largest embedded JPEG', async () => {
    const { asset } = await upload(await fakeRaw(), 'shot.dng');
    assert.equal(asset.renditionsState, 'ready', JSON.stringify(asset.technicalMetadata));
    assert.equal(asset.technicalMetadata.image_metadata.previewWidth, 900);
    const preview = await rendition(asset.renditions.imagePreview);
    const meta = await sharp(preview.rawPayload).metadata();
    assert.deepEqual([meta.width, meta.height], [700, 467]);
    const none = await upload(
      Buffer.concat([Buffer.from([0x49, 0x49, 0x2a, 0x00]), Buffer.alloc(400, 1)]),
      'empty.nef',
    );
    assert.equal(none.asset.renditionsState, 'failed');
    assert.match(none.asset.technicalMetadata.renditionError, /embedded JPEG/);
  });

  it('previews a PSD from its composite image (ag-psd)', async () => {
    const width = 120;
    const height = 80;
    const data = new Uint8ClampedArray(width * height * 4);
    for (let i = 0; i < width * height; i++) data.set([30, 90, 200, 255], i * 4);
    const psd = writePsdBuffer({ width, height, imageData: { width, height, data } as never, children: [] });
    const { asset } = await upload(Buffer.from(psd), 'layout.psd');
    assert.equal(asset.renditionsState, 'ready', JSON.stringify(asset.technicalMetadata));
    assert.deepEqual([asset.renditions.width, asset.renditions.height], [120, 80]);
    const thumb = await rendition(asset.renditions.imageThumb);
    const { data: px } = await sharp(thumb.rawPayload).raw().toBuffer({ resolveWithObject: true });
    assert.ok(px[2]! > 150 && px[0]! < 80, `composite colour ${[...px.subarray(0, 3)]}`);
    const broken = await upload(Buffer.from('8BPS not really a photoshop file at all'), 'broken.psd');
    assert.equal(broken.asset.renditionsState, 'failed');
  });

  it('keeps animated GIF and WebP animated in every rendition', async () => {
    const frames = Buffer.concat(
      [
        [255, 0, 0],
        [0, 255, 0],
        [0, 0, 255],
      ].map((rgb) => Buffer.concat(Array.from({ length: 300 * 200 }, () => Buffer.from([...rgb, 255])))),
    );
    const raw = { width: 300, height: 200, channels: 4 as const };
    for (const format of ['gif', 'webp'] as const) {
      const bytes = await sharp(frames, { raw: { ...raw, height: 600, pageHeight: 200 } as never })
        .toFormat(format, { loop: 0, delay: [100, 100, 100] } as never)
        .toBuffer();
      assert.equal((await sharp(bytes, { animated: true }).metadata()).pages, 3);
      const { asset } = await upload(bytes, `anim.${format}`);
      assert.equal(asset.renditionsState, 'ready', JSON.stringify(asset.technicalMetadata));
      for (const name of ['imageThumb', 'imagePreview']) {
        const res = await rendition(asset.renditions[name]);
        assert.equal(res.headers['content-type'], `image/${format}`);
        const meta = await sharp(res.rawPayload, { animated: true }).metadata();
        assert.equal(meta.pages, 3, `${format} ${name} keeps its frames`);
        assert.equal(meta.width, name === 'imageThumb' ? 200 : 300);
      }
    }
  });

  it('rasterises SVG without fetching or reading anything it references', async () => {
    const port = (server.address() as AddressInfo).port;
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="300" height="150"><rect width="300" height="150" fill="#0a0"/><image href="http://127.0.0.1:${port}/tracker.png" width="10" height="10"/><image xlink:href="file:///etc/hostname" width="10" height="10"/><use href="http://127.0.0.1:${port}/defs.svg#x"/></svg>`;
    hits = 0;
    const { asset } = await upload(Buffer.from(svg), 'drawing.svg');
    assert.equal(asset.renditionsState, 'ready', JSON.stringify(asset.technicalMetadata));
    const thumb = await rendition(asset.renditions.imageThumb);
    assert.deepEqual(
      await sharp(thumb.rawPayload)
        .metadata()
        .then((m) => [m.width, m.height]),
      [200, 100],
    );
    assert.equal(hits, 0, 'no request reached the referenced server');
  });
});
