import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import sharp from 'sharp';
import { ALL_PERMISSIONS } from '../../../core/authz/catalog.ts';
import type { Worker } from '../../../core/jobs/worker.ts';
import { forEachEngine, json } from '../../../../test/helpers/context.ts';
import { createTestOrg, createTestUser, type TestOrg, type TestUser } from '../../../../test/helpers/factories.ts';
import { assetWorker, createAsset, uploadAsset } from '../../../../test/helpers/assets.ts';
import { createGroup, createTemplate } from '../../../../test/helpers/permissions.ts';
import { securitySuite } from '../../../../test/helpers/security.ts';

/** A picture with structure (gradient, shapes), rendered from SVG: `variant` picks a different scene. */
function scene(variant: 'harbour' | 'stripes' | 'checks'): Promise<Buffer> {
  const body = {
    harbour:
      '<defs><linearGradient id="g"><stop offset="0" stop-color="#102040"/><stop offset="1" stop-color="#f0e0a0"/></linearGradient></defs><rect width="800" height="600" fill="url(#g)"/><circle cx="560" cy="180" r="110" fill="#ffffff"/><rect x="60" y="380" width="420" height="160" fill="#803010"/>',
    stripes:
      '<rect width="800" height="600" fill="#ffffff"/>' +
      Array.from({ length: 8 }, (_, i) => `<rect x="${i * 100}" y="0" width="50" height="600" fill="#202020"/>`).join(
        '',
      ),
    checks:
      '<defs><linearGradient id="v" x2="0" y2="1"><stop offset="0" stop-color="#f8f8f8"/><stop offset="1" stop-color="#000000"/></linearGradient></defs><rect width="800" height="600" fill="url(#v)"/>' +
      Array.from(
        { length: 4 },
        (_, i) =>
          `<rect x="${600 - i * 170}" y="${i * 140}" width="120" height="120" fill="#${i % 2 ? 'f0f0f0' : '101010'}"/>`,
      ).join(''),
  }[variant];
  return sharp(Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="800" height="600">${body}</svg>`))
    .jpeg({ quality: 92 })
    .toBuffer();
}

forEachEngine('search: near-duplicates by perceptual hash (POST /v1/search/similar)', (ctx) => {
  let org: TestOrg;
  let worker: Worker;
  let reader: TestUser;
  const ids: Record<string, string> = {};
  before(async () => {
    org = await createTestOrg(ctx());
    worker = assetWorker(ctx());
    const original = await scene('harbour');
    // Real near-duplicates: resized and recompressed hard, and re-encoded as WebP at another size.
    const smaller = await sharp(original).resize(400, 300).jpeg({ quality: 35 }).toBuffer();
    const webp = await sharp(original).resize(640, 480).webp({ quality: 50 }).toBuffer();
    const group = await createGroup(ctx(), org);
    reader = await createTestUser(ctx(), org, { groupIds: [group] });
    const readable = await createTemplate(ctx(), org, [
      [group, ['view']],
      [org.groups.administrators, ALL_PERMISSIONS],
    ]);
    const files: [string, Buffer, string[]][] = [
      ['original', original, [readable]],
      ['smaller', smaller, [readable]],
      ['webp', webp, [org.defaultTemplateId]],
      ['stripes', await scene('stripes'), [readable]],
      ['checks', await scene('checks'), [readable]],
    ];
    for (const [name, bytes, templates] of files)
      ids[name] = (
        await uploadAsset(ctx(), org, bytes, `${name}.${name === 'webp' ? 'webp' : 'jpg'}`, {
          securityTemplateIds: templates,
        })
      ).objectId;
    await worker.drain();
  });
  after(async () => worker.stop());
  const similar = (payload: unknown, headers = org.admin.headers) =>
    ctx().inject({ method: 'POST', url: '/v1/search/similar', headers, payload: payload as Record<string, unknown> });
  type Answer = {
    results: { objectId: string; distance: number; similarity: number; renditions: Record<string, string> }[];
    nextOffset: number | null;
    hash: string;
  };

  it('finds the resized and recompressed copies of an asset, nearest first, and not different pictures nor the asset itself', async () => {
    const res = await similar({ assetId: ids.original });
    assert.equal(res.statusCode, 200, res.body);
    const answer = json(res) as Answer;
    assert.deepEqual(new Set(answer.results.map((r) => r.objectId)), new Set([ids.smaller, ids.webp]));
    for (const r of answer.results) {
      assert.ok(r.distance <= 10 && r.similarity >= 1 - 10 / 64, JSON.stringify(r));
      assert.ok(r.renditions.imageThumb);
    }
    assert.ok(answer.results[0]!.distance <= answer.results[1]!.distance);
    assert.equal(answer.nextOffset, null);
    assert.match(answer.hash, /^[0-9a-f]{16}$/);
    // The different pictures are far apart: even a generous threshold does not join them.
    const far = json(await similar({ assetId: ids.stripes, threshold: 12 })) as Answer;
    assert.deepEqual(far.results, []);
  });

  it('an uploaded picture (multipart, part `file`) finds the same copies; a different picture finds only its own kind', async () => {
    const probe = await sharp(await scene('harbour'))
      .resize(300, 225)
      .png()
      .toBuffer();
    const form = (file: Buffer, extra: Record<string, string> = {}) => {
      const boundary = '----tessera-similar';
      const parts = [
        ...Object.entries(extra).map(
          ([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`,
        ),
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="probe.png"\r\nContent-Type: image/png\r\n\r\n`,
      ].join('');
      return {
        payload: Buffer.concat([Buffer.from(parts), file, Buffer.from(`\r\n--${boundary}--\r\n`)]),
        headers: { ...org.admin.headers, 'content-type': `multipart/form-data; boundary=${boundary}` },
      };
    };
    const byImage = await ctx().inject({ method: 'POST', url: '/v1/search/similar', ...form(probe) });
    assert.equal(byImage.statusCode, 200, byImage.body);
    assert.deepEqual(
      new Set((json(byImage) as Answer).results.map((r) => r.objectId)),
      new Set([ids.original, ids.smaller, ids.webp]),
    );
    const stripes = await ctx().inject({
      method: 'POST',
      url: '/v1/search/similar',
      ...form(
        await sharp(await scene('stripes'))
          .resize(200, 150)
          .jpeg({ quality: 40 })
          .toBuffer(),
        { threshold: '8' },
      ),
    });
    assert.deepEqual(
      (json(stripes) as Answer).results.map((r) => r.objectId),
      [ids.stripes],
    );
    const notImage = await ctx().inject({
      method: 'POST',
      url: '/v1/search/similar',
      ...form(Buffer.from('plain text, not a picture')),
    });
    assert.equal(notImage.statusCode, 400, notImage.body);
    assert.equal(json(notImage).details[0].field, 'body.file');
    const both = await ctx().inject({
      method: 'POST',
      url: '/v1/search/similar',
      ...form(probe, { assetId: ids.original }),
    });
    assert.equal(both.statusCode, 400);
    assert.equal(json(both).details[0].field, 'body.assetId');
  });

  it('answers only what the caller may view, and pages by offset', async () => {
    // The WebP copy is under the Default template, which the reader's group is not granted.
    const mine = json(await similar({ assetId: ids.original }, reader.headers)) as Answer;
    assert.deepEqual(
      mine.results.map((r) => r.objectId),
      [ids.smaller],
    );
    // An asset the caller may not view is a 404, like a missing one.
    const hidden = await similar({ assetId: ids.webp }, reader.headers);
    assert.equal(hidden.statusCode, 404, hidden.body);
    const stranger = await createTestUser(ctx(), org, { groupIds: [] });
    assert.equal((await similar({ assetId: ids.original }, stranger.headers)).statusCode, 404);
    const first = json(await similar({ assetId: ids.original, limit: 1 })) as Answer;
    assert.equal(first.results.length, 1);
    assert.equal(first.nextOffset, 1);
    const second = json(await similar({ assetId: ids.original, limit: 1, offset: 1 })) as Answer;
    assert.equal(second.results.length, 1);
    assert.equal(second.nextOffset, null);
    assert.notEqual(first.results[0]!.objectId, second.results[0]!.objectId);
  });

  it('refuses bad requests with a 400 naming the field; an asset without a hash is a 409; another organization sees a 404', async () => {
    const cases: [unknown, string][] = [
      [{}, 'body.assetId'],
      [{ assetId: ids.original, threshold: 65 }, 'body.threshold'],
      [{ assetId: ids.original, threshold: 'ten' }, 'body.threshold'],
      [{ assetId: ids.original, limit: 0 }, 'body.limit'],
      [{ assetId: ids.original, offset: -1 }, 'body.offset'],
      [{ assetId: ids.original, colour: 'red' }, 'body.colour'],
      [{ assetId: 42 }, 'body.assetId'],
    ];
    for (const [payload, field] of cases) {
      const res = await similar(payload);
      assert.equal(res.statusCode, 400, `${JSON.stringify(payload)}: ${res.body}`);
      assert.equal(json(res).details[0].field, field, res.body);
    }
    const proto = await ctx().inject({
      method: 'POST',
      url: '/v1/search/similar',
      headers: { ...org.admin.headers, 'content-type': 'application/json' },
      payload: `{"assetId":"${ids.original}","__proto__":{"x":1}}`,
    });
    assert.equal(proto.statusCode, 400, proto.body);
    const bare = await createAsset(ctx(), org);
    const noHash = await similar({ assetId: bare.objectId });
    assert.equal(noHash.statusCode, 409, noHash.body);
    const other = await createTestOrg(ctx());
    assert.equal((await similar({ assetId: ids.original }, other.admin.headers)).statusCode, 404);
  });

  securitySuite(ctx, 'POST /v1/search/similar', {
    method: 'POST',
    readScope: true,
    prepare: async (c, o) => ({ url: '/v1/search/similar', body: { assetId: (await createAsset(c, o)).objectId } }),
  });
});
