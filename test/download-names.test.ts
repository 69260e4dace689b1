// File names beyond Latin-1 on every route that names a download, and content types that are no
// media type (issue 23, defect 5). A header value holds Latin-1 only: `Отчёт.pdf` written into
// Content-Disposition raw was a 500 on every download and on collection-share zips; a stored
// `text/plain\r\nX-Evil: 1` was a 500 on its download.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { unzipSync } from 'fflate';
import { forEachEngine, json } from './helpers/context.ts';
import { createTestOrg, type TestOrg } from './helpers/factories.ts';
import { startWorker, type Worker } from '../src/core/jobs/worker.ts';
import { asciiFallback, contentDisposition } from '../src/core/http/content-disposition.ts';
import { createAsset, image, jpeg, pathOf, uploadAsset } from './helpers/assets.ts';
import { assetJobHandlers } from '../src/features/assets/index.ts';
import { collectionJobHandlers } from '../src/features/collections/index.ts';
import { defaultTemplateId } from '../src/features/metadata/index.ts';

const NAMES = ['Отчёт.pdf', '写真.jpg', '🎉 party.png', 'naïve "quoted" name.jpg', 'plain.jpg'];

/** The header as RFC 6266 wants it: an ASCII fallback, and the exact name in filename*. */
function assertDisposition(header: unknown, name: string): void {
  assert.equal(typeof header, 'string', `a Content-Disposition for ${name}`);
  const value = header as string;
  assert.match(value, /^attachment; filename="[\x20-\x7e]*"; filename\*=UTF-8''[A-Za-z0-9!#$&+.^_`|~%-]+$/, value);
  const fallback = /filename="([^"]*)"/.exec(value)![1]!;
  assert.doesNotMatch(fallback, /["\\]/);
  const encoded = /filename\*=UTF-8''(.+)$/.exec(value)![1]!;
  assert.equal(decodeURIComponent(encoded), name.normalize('NFC'));
}

it('contentDisposition: ASCII fallback keeps the extension and drops only what ASCII cannot say', () => {
  assert.equal(asciiFallback('Café menu.pdf'), 'Cafe menu.pdf');
  assert.equal(asciiFallback('Отчёт.pdf'), 'download.pdf');
  assert.equal(asciiFallback('写真.jpg'), 'download.jpg');
  assert.equal(asciiFallback('a"b\\c/d.txt'), 'a_b_c_d.txt');
  assert.equal(
    contentDisposition("it's (1).txt"),
    `attachment; filename="it's (1).txt"; filename*=UTF-8''it%27s%20%281%29.txt`,
  );
});

forEachEngine('download names beyond Latin-1 and media types (issue 23, defect 5)', (ctx) => {
  let org: TestOrg;
  let worker: Worker;
  before(async () => {
    org = await createTestOrg(ctx());
    worker = startWorker({
      db: ctx().deps.db,
      engine: ctx().deps.engine,
      clock: ctx().deps.clock,
      log: ctx().deps.log,
      signal: ctx().deps.jobs,
      handlers: { ...collectionJobHandlers(ctx().deps), ...assetJobHandlers(ctx().deps) },
      pollMs: 3_600_000,
    });
  });
  after(async () => worker.stop());

  it('every download route sends RFC 6266 filename* with an ASCII fallback: content link, exposed original, collection-share zip', async () => {
    const ids: string[] = [];
    for (const name of NAMES) {
      const bytes = name.endsWith('.pdf')
        ? Buffer.from('%PDF-1.4\n%%EOF\n')
        : name.endsWith('.png')
          ? await image('png')
          : await jpeg();
      const { objectId, fileId } = await uploadAsset(ctx(), org, bytes, name);
      ids.push(fileId);
      const link = await ctx().inject({
        method: 'GET',
        url: `/v1/asset/${objectId}/content`,
        headers: org.admin.headers,
      });
      assert.equal(link.statusCode, 200, link.body);
      const got = await ctx().inject({ method: 'GET', url: pathOf(json(link).presignedURL) });
      assert.equal(got.statusCode, 200, `${name}: ${got.body.slice(0, 200)}`);
      assertDisposition(got.headers['content-disposition'], name);
      assert.equal(got.rawPayload.length, bytes.length);
      const exposed = await ctx().inject({
        method: 'POST',
        url: '/v1/asset/expose',
        headers: org.admin.headers,
        payload: [{ id: objectId, components: [{ componentType: 'object', componentRef: 'original' }] }],
      });
      assert.equal(exposed.statusCode, 200, exposed.body);
      const viaExpose = await ctx().inject({ method: 'GET', url: pathOf(json(exposed)[0].components[0].url) });
      assert.equal(viaExpose.statusCode, 200, `${name} (expose): ${viaExpose.body.slice(0, 200)}`);
      assertDisposition(viaExpose.headers['content-disposition'], name);
    }
    const collectionName = 'Отчёты 写真 🎉';
    const created = await ctx().inject({
      method: 'POST',
      url: '/v1/collection',
      headers: org.admin.headers,
      payload: { collectionType: 'private', name: collectionName, collectionDocument: ids },
    });
    assert.equal(created.statusCode, 200, created.body);
    const shared = await ctx().inject({
      method: 'POST',
      url: `/v1/collection/${json(created).collectionId}/share`,
      headers: org.admin.headers,
      payload: { sender: { name: 'Admin' }, shareUsers: [{ email: 'out@example.test' }] },
    });
    assert.equal(shared.statusCode, 202, shared.body);
    await worker.drain();
    const zip = await ctx().inject({ method: 'GET', url: pathOf(json(shared).links[0].url) });
    assert.equal(zip.statusCode, 200, zip.body.slice(0, 200));
    assertDisposition(zip.headers['content-disposition'], `${collectionName}.zip`);
    assert.deepEqual(
      Object.keys(unzipSync(new Uint8Array(zip.rawPayload))).sort(),
      NAMES.map((n) => n.replace(/"/g, '_')).sort(),
    );
  });

  it('contentType must be a media type on every create route (400 naming the field); a bad stored type downloads as octet-stream', async () => {
    const bad = [
      'text/plain\r\nX-Evil: 1',
      'text/plain\nX-Evil: 1',
      'nonsense',
      'image/',
      '/jpeg',
      'image/jpeg; charset',
      'imäge/jpeg',
      'image/jpeg; a=b c',
      'text/plain\u0085',
    ];
    const { objectId } = await createAsset(ctx(), org, { filename: 'v1.jpg' });
    const metadataTemplateId = await defaultTemplateId(ctx().deps.db, org.orgId);
    const single = (body: object) =>
      ctx().inject({
        method: 'POST',
        url: '/v1/asset',
        headers: org.admin.headers,
        payload: {
          metadataTemplateId,
          securityTemplateIds: [org.defaultTemplateId],
          metadata: [],
          filename: 'x.jpg',
          ...body,
        },
      });
    for (const contentType of bad) {
      for (const [route, res] of [
        ['POST /v1/asset', await single({ contentType })],
        ['POST /v1/asset (new version)', await single({ contentType, originalFileId: objectId })],
        [
          'POST /v1/assets/asset',
          await ctx().inject({
            method: 'POST',
            url: '/v1/assets/asset',
            headers: org.admin.headers,
            payload: {
              metadataTemplateId,
              securityTemplateIds: [org.defaultTemplateId],
              filename: 'x.jpg',
              contentType,
            },
          }),
        ],
        [
          'POST /v1/assets/bulk',
          await ctx().inject({
            method: 'POST',
            url: '/v1/assets/bulk',
            headers: org.admin.headers,
            payload: { assets: [{ metadataTemplateId, securityTemplateIds: [org.defaultTemplateId], contentType }] },
          }),
        ],
      ] as const) {
        assert.equal(
          res.statusCode,
          400,
          `${route} with ${JSON.stringify(contentType)}: ${res.statusCode} ${res.body}`,
        );
        assert.match(res.body, /contentType/, `${route} names the field`);
      }
    }
    for (const contentType of [
      'image/jpeg',
      'text/plain; charset=utf-8',
      'application/vnd.api+json',
      'text/plain; charset="utf-8"',
      'multipart/mixed; boundary="a b"',
    ]) {
      const res = await single({ contentType });
      assert.equal(res.statusCode, 200, `${contentType}: ${res.body}`);
    }
    // A type stored before the check (written straight to the table) never reaches a header.
    const old = await uploadAsset(ctx(), org, await jpeg(), 'old.jpg');
    await ctx()
      .deps.db.updateTable('assets')
      .set({ content_type: 'text/plain\r\nX-Evil: 1' })
      .where('id', '=', old.objectId)
      .execute();
    const link = json(
      await ctx().inject({ method: 'GET', url: `/v1/asset/${old.objectId}/content`, headers: org.admin.headers }),
    ).presignedURL;
    const got = await ctx().inject({ method: 'GET', url: pathOf(link) });
    assert.equal(got.statusCode, 200, got.body.slice(0, 200));
    assert.equal(got.headers['content-type'], 'application/octet-stream');
    assert.equal(got.headers['x-evil'], undefined);
  });
});
