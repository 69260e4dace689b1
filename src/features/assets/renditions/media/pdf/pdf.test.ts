import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import sharp from 'sharp';
import { forEachEngine } from '../../../../../../test/helpers/context.ts';
import { createTestOrg, createTestUser, type TestOrg } from '../../../../../../test/helpers/factories.ts';
import type { Worker } from '../../../../../core/jobs/worker.ts';
import { assetWorker, pathOf, uploadAsset } from '../../../../../../test/helpers/assets.ts';
import { makePdf } from '../media.fixtures.ts';

forEachEngine('assets: PDF renditions, properties, pages and text', (ctx) => {
  let org: TestOrg;
  let worker: Worker;
  before(async () => {
    org = await createTestOrg(ctx());
    worker = assetWorker(ctx());
  });
  after(async () => worker.stop());
  const get = (id: string) =>
    ctx()
      .inject({ method: 'GET', url: `/v1/asset/${id}`, headers: org.admin.headers })
      .then((r) => r.json());
  const search = (term: string, field?: string) =>
    ctx()
      .inject({
        method: 'POST',
        url: '/v1/search/keyword',
        headers: org.admin.headers,
        payload: { searchTerm: [term], ...(field ? { keywordSearchField: field } : {}) },
      })
      .then((r) => r.json() as { result: { objectId: string }[] });

  it('renders page 1 as the image renditions, records page count and properties, and makes the text searchable as content', async () => {
    const pdf = makePdf(['Quarterly harbour report', 'Second page about lighthouses', 'Third page zebracrossing'], {
      Title: 'Harbour Q3',
      Author: 'Ada Lovelace',
    });
    const created = await uploadAsset(ctx(), org, pdf, 'report.pdf');
    await worker.drain();
    const asset = await get(created.objectId);
    assert.equal(asset.renditionsState, 'ready', JSON.stringify(asset.technicalMetadata));
    const expected = { imageThumb: 200, imagePreview: 700, imagePreviewLarge: 1000, mezzaninePreview: 3000 } as const;
    for (const [name, box] of Object.entries(expected)) {
      const res = await ctx().inject({
        method: 'GET',
        url: pathOf(asset.renditions[name]),
        headers: org.admin.headers,
      });
      assert.equal(res.statusCode, 200, `${name}: ${res.body}`);
      assert.equal(res.headers['content-type'], 'image/jpeg');
      const meta = await sharp(res.rawPayload).metadata();
      assert.equal(meta.height, box, `${name} fits its box (A4 portrait: the height is the long side)`);
      assert.equal(meta.width, Math.round((box * 595) / 842));
    }
    const doc = asset.technicalMetadata.document_metadata;
    assert.equal(doc.pageCount, 3);
    assert.equal(doc.title, 'Harbour Q3');
    assert.equal(doc.author, 'Ada Lovelace');
    assert.match(doc.format, /^PDF/);
    assert.equal(asset.technicalMetadata.extractedText, undefined, 'the full text stays out of the record');
    assert.ok(doc.textCharacters > 50);
    // Text on every page is found through the content field, and only there.
    assert.deepEqual(
      (await search('zebracrossing', 'content')).result.map((r) => r.objectId),
      [created.objectId],
    );
    assert.deepEqual(
      (await search('lighthouses')).result.map((r) => r.objectId),
      [created.objectId],
    );
    assert.deepEqual((await search('zebracrossing', 'filename')).result, []);

    // Per-page previews on request, stored after the first.
    const page2 = await ctx().inject({
      method: 'GET',
      url: `/v1/asset/${created.objectId}/page/2?size=thumbnail`,
      headers: org.admin.headers,
    });
    assert.equal(page2.statusCode, 200, page2.body);
    assert.equal(page2.headers['content-type'], 'image/jpeg');
    assert.equal((await sharp(page2.rawPayload).metadata()).height, 200);
    const again = await ctx().inject({
      method: 'GET',
      url: `/v1/asset/${created.objectId}/page/2?size=thumbnail`,
      headers: { ...org.admin.headers, 'if-none-match': String(page2.headers.etag) },
    });
    assert.equal(again.statusCode, 304);
    const page1 = await ctx().inject({
      method: 'GET',
      url: `/v1/asset/${created.objectId}/page/1`,
      headers: org.admin.headers,
    });
    assert.equal((await sharp(page1.rawPayload).metadata()).height, 700);
    assert.notDeepEqual(page1.rawPayload, page2.rawPayload);
    const missing = await ctx().inject({
      method: 'GET',
      url: `/v1/asset/${created.objectId}/page/4`,
      headers: org.admin.headers,
    });
    assert.equal(missing.statusCode, 404);
    // The View permission, like renditions: a user whose groups the templates do not grant sees a 404.
    const stranger = await createTestUser(ctx(), org, { groupIds: [] });
    assert.equal(
      (await ctx().inject({ method: 'GET', url: `/v1/asset/${created.objectId}/page/1`, headers: stranger.headers }))
        .statusCode,
      404,
    );
    const badSize = await ctx().inject({
      method: 'GET',
      url: `/v1/asset/${created.objectId}/page/1?size=huge`,
      headers: org.admin.headers,
    });
    assert.equal(badSize.statusCode, 400);
    const zero = await ctx().inject({
      method: 'GET',
      url: `/v1/asset/${created.objectId}/page/0`,
      headers: org.admin.headers,
    });
    assert.equal(zero.statusCode, 400);
    // Signed page URLs for an <img> (the web app's page viewer): page-{n}-{size} up to the page count.
    const signed = await ctx().inject({
      method: 'POST',
      url: '/v1/asset/rendition-urls',
      headers: org.admin.headers,
      payload: { ids: [created.objectId], renditions: ['page-2-thumbnail', 'page-3-large', 'page-4-preview'] },
    });
    assert.equal(signed.statusCode, 200, signed.body);
    const links = signed.json().urls[created.objectId] as Record<string, string>;
    assert.deepEqual(Object.keys(links).sort(), ['page-2-thumbnail', 'page-3-large']);
    const local = (u: string) => {
      const url = new URL(u);
      return url.pathname + url.search;
    };
    const thumb = await ctx().inject({ method: 'GET', url: local(links['page-2-thumbnail']!) });
    assert.equal(thumb.statusCode, 200, thumb.body);
    assert.equal(thumb.headers['content-type'], 'image/jpeg');
    assert.deepEqual(thumb.rawPayload, page2.rawPayload, 'the same stored page as the authenticated route');
    const large = await ctx().inject({ method: 'GET', url: local(links['page-3-large']!) });
    assert.equal((await sharp(large.rawPayload).metadata()).height, 1000);
    const tampered = await ctx().inject({
      method: 'GET',
      url: local(links['page-3-large']!).replace('page-3-large', 'page-1-large'),
    });
    assert.equal(tampered.statusCode, 403, 'the signature covers the page');
    const strangerLinks = await ctx().inject({
      method: 'POST',
      url: '/v1/asset/rendition-urls',
      headers: stranger.headers,
      payload: { ids: [created.objectId], renditions: ['page-1-preview'] },
    });
    assert.deepEqual(strangerLinks.json().urls, {}, 'no page URLs without View');
  });

  it('fails a corrupt PDF cleanly: renditionsState failed, the reason recorded, the job dead, nothing referenced', async () => {
    const pdf = makePdf(['Whole page']);
    const corrupt = Buffer.concat([pdf.subarray(0, 40), Buffer.alloc(300, 0x41)]);
    const created = await uploadAsset(ctx(), org, corrupt, 'broken.pdf');
    await worker.drain();
    const asset = await get(created.objectId);
    assert.equal(asset.renditionsState, 'failed');
    assert.match(asset.technicalMetadata.renditionError, /PDF/);
    assert.deepEqual(
      Object.keys(asset.renditions).filter((k) => k !== 'width' && k !== 'height'),
      [],
    );
    const job = await ctx()
      .deps.db.selectFrom('jobs')
      .select(['status'])
      .where('payload', 'like', `%${created.objectId}%`)
      .where('type', '=', 'assets.renditions')
      .executeTakeFirst();
    assert.equal(job?.status, 'dead');
    const page = await ctx().inject({
      method: 'GET',
      url: `/v1/asset/${created.objectId}/page/1`,
      headers: org.admin.headers,
    });
    assert.equal(page.statusCode, 409);
  });
});
