// Test support for story boards: a published board over real uploaded assets (screenshots and view tests).
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { json, type TestContext } from './context.ts';
import type { TestOrg } from './factories.ts';
import { assetWorker, uploadAsset } from './assets.ts';
import { docInput, indexDocs } from './search.ts';

const COLOURS = [
  { r: 214, g: 94, b: 48 },
  { r: 46, g: 125, b: 112 },
  { r: 233, g: 196, b: 106 },
  { r: 38, g: 70, b: 83 },
  { r: 160, g: 82, b: 45 },
];

/** A landscape picture with a diagonal band, so the screenshots show real, distinct images. */
async function picture(i: number, width = 1200, height = 800): Promise<Buffer> {
  const c = COLOURS[i % COLOURS.length]!;
  const band = `<svg width="${width}" height="${height}"><polygon points="0,${height} ${width * 0.6},0 ${width},0 ${width * 0.4},${height}" fill="rgba(255,255,255,0.35)"/></svg>`;
  return sharp({ create: { width, height, channels: 3, background: c } })
    .composite([{ input: Buffer.from(band) }])
    .jpeg({ quality: 80 })
    .toBuffer();
}

/**
 * A published story board of every block type over real uploaded assets with their renditions
 * made by the assets worker; the collection's members are also put in the search index (which
 * collections read).
 */
export async function boardWithAssets(
  ctx: TestContext,
  org: TestOrg,
): Promise<{ board: any; assetCount: number; assetIds: string[] }> {
  const worker = assetWorker(ctx);
  const assets: { objectId: string; fileId: string; filename: string }[] = [];
  try {
    for (let i = 0; i < 5; i++) {
      const filename = `look-${i + 1}.jpg`;
      const created = await uploadAsset(ctx, org, await picture(i), filename, {
        securityTemplateIds: [org.defaultTemplateId],
      });
      assets.push({ objectId: created.objectId, fileId: created.fileId, filename });
    }
    await worker.drain();
  } finally {
    await worker.stop();
  }
  const records = await Promise.all(
    assets.map(async (a) =>
      json(await ctx.inject({ method: 'GET', url: `/v1/asset/${a.objectId}`, headers: org.admin.headers })),
    ),
  );
  for (const r of records) assert.ok(r.renditions.imagePreview, `renditions made: ${JSON.stringify(r.renditions)}`);
  await indexDocs(
    ctx,
    records.slice(2).map((r) =>
      docInput(org.orgId, {
        assetId: r.objectId,
        fileId: r.fileId,
        filename: r.filename,
        securityTemplateIds: [org.defaultTemplateId],
        record: r,
      }),
    ),
  );
  const collection = await ctx.inject({
    method: 'POST',
    url: '/v1/collection',
    headers: org.admin.headers,
    payload: {
      collectionType: 'secured',
      name: `Autumn picks ${Math.random().toString(36).slice(2, 6)}`,
      securityTemplateIds: [org.defaultTemplateId],
      collectionDocument: records.slice(2).map((r) => r.objectId),
    },
  });
  assert.ok(collection.statusCode < 300, collection.body);
  const res = await ctx.inject({
    method: 'POST',
    url: '/v1/storyboards',
    headers: org.admin.headers,
    payload: {
      title: 'Autumn lookbook',
      description: 'Colours, textures and the people behind them',
      status: 'published',
      coverAssetId: assets[0]!.objectId,
      blocks: [
        { type: 'heading', text: 'The collection', level: 1 },
        {
          type: 'richText',
          html: '<p>Twelve pieces, made <strong>slowly</strong> in small workshops. <a href="https://example.com">Read more</a>.</p>',
        },
        { type: 'asset', assetId: assets[1]!.objectId, caption: 'The wool coat, in moss' },
        { type: 'gallery', assetIds: assets.slice(2).map((a) => a.objectId), caption: 'Three more looks' },
        { type: 'collection', collectionId: json(collection).collectionId, title: 'Autumn picks', limit: 6 },
        {
          type: 'link',
          url: 'https://example.com/press-kit-with-a-very-long-address-that-must-wrap-on-a-phone/and/more/segments',
          label: 'Press kit',
        },
        { type: 'divider' },
        { type: 'heading', text: 'Credits', level: 2 },
      ],
    },
  });
  assert.equal(res.statusCode, 201, res.body);
  // cover + single asset + gallery (3) + collection (3)
  return { board: json(res), assetCount: 1 + 1 + 3 + 3, assetIds: assets.map((a) => a.objectId) };
}
