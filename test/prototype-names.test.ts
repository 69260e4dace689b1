// Names a caller sends that JavaScript objects answer to by inheritance (`__proto__`, `constructor`,
// `toString` …) as rendition names, search fields, paths to exclude, attribute types and form
// fields. Each answers like any other unknown name (a 4xx, or a 2xx where the name is merely data),
// and the process lives on: `excludes: ["__proto__.hasOwnProperty"]` once deleted
// Object.prototype.hasOwnProperty and the server ended at its next use.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine, json } from './helpers/context.ts';
import { createTestOrg } from './helpers/factories.ts';
import { PROTOTYPE_NAMES } from '../src/core/lookup.ts';
import { assetWorker, jpeg, uploadAsset } from './helpers/assets.ts';

const crashes: unknown[] = [];
const record = (error: unknown) => crashes.push(error);
before(() => {
  process.on('uncaughtException', record);
  process.on('unhandledRejection', record);
});
after(() => {
  process.off('uncaughtException', record);
  process.off('unhandledRejection', record);
});

/** What the defect damaged: Object.prototype's own members, still there and still themselves. */
const PRISTINE = Object.fromEntries(
  Object.getOwnPropertyNames(Object.prototype).map((n) => [n, Object.getOwnPropertyDescriptor(Object.prototype, n)]),
);
function assertPrototypeIntact(): void {
  const now = Object.fromEntries(
    Object.getOwnPropertyNames(Object.prototype).map((n) => [n, Object.getOwnPropertyDescriptor(Object.prototype, n)]),
  );
  assert.deepEqual(Object.keys(now).sort(), Object.keys(PRISTINE).sort(), 'Object.prototype lost or gained members');
  for (const [name, d] of Object.entries(PRISTINE))
    assert.equal(now[name]!.value ?? now[name]!.get, d!.value ?? d!.get, `Object.prototype.${name} was replaced`);
}

forEachEngine('prototype names as lookup keys (issue 23, defect 1)', (ctx) => {
  let org: Awaited<ReturnType<typeof createTestOrg>>;
  let assetId: string;
  let token: string;
  before(async () => {
    org = await createTestOrg(ctx());
    const worker = assetWorker(ctx());
    try {
      assetId = (await uploadAsset(ctx(), org, await jpeg(), 'proto.jpg')).objectId;
      await worker.drain();
    } finally {
      await worker.stop();
    }
    const board = await ctx().inject({
      method: 'POST',
      url: '/v1/storyboards',
      headers: org.admin.headers,
      payload: { title: 'Proto', status: 'published', coverAssetId: assetId, blocks: [] },
    });
    assert.equal(board.statusCode, 201, board.body);
    const link = await ctx().inject({
      method: 'POST',
      url: `/v1/storyboards/${json(board).id}/links`,
      headers: { ...org.admin.headers, 'content-type': 'application/json' },
      payload: {},
    });
    assert.equal(link.statusCode, 201, link.body);
    token = json(link).token;
  });

  const post = (url: string, payload: unknown) =>
    ctx().inject({ method: 'POST', url, headers: org.admin.headers, payload });

  it('excludes and includes walk own properties only: a path through __proto__ deletes nothing from Object.prototype', async () => {
    for (const path of [
      '__proto__.hasOwnProperty',
      '__proto__.toString',
      'constructor.prototype.valueOf',
      '__proto__',
      'renditions.__proto__.constructor',
      'hasOwnProperty',
    ]) {
      const res = await post('/v1/search/keyword', { searchTerm: '*', excludes: [path] });
      assert.equal(res.statusCode, 200, `${path}: ${res.body}`);
      assert.ok(json(res).result.length > 0, 'the asset is a result, so the exclude was applied to a record');
      assertPrototypeIntact();
    }
    const slim = await post('/v1/search', {
      searchTerm: '*',
      includes: ['constructor', '__proto__', 'toString', 'metadataDocument.constructor', 'metadataDocument.__proto__'],
    });
    assert.equal(slim.statusCode, 200, slim.body);
    const first = json(slim).result[0];
    for (const name of ['constructor', 'toString'])
      assert.equal(Object.hasOwn(first, name), false, `${name} is no field of a record`);
    assert.equal(first.metadataDocument, undefined);
    assertPrototypeIntact();
    assert.equal((await ctx().inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
  });

  it('a prototype name as a rendition name is a 404: asset route, signed expose, story-board share (no sign-in)', async () => {
    for (const name of PROTOTYPE_NAMES) {
      const direct = await ctx().inject({
        method: 'GET',
        url: `/v1/asset/${assetId}/rendition/${name}`,
        headers: org.admin.headers,
      });
      assert.equal(direct.statusCode, 404, `rendition ${name}: ${direct.body}`);
      const shared = await ctx().inject({
        method: 'GET',
        url: `/shared/storyboards/${token}/assets/${assetId}/${name}`,
      });
      assert.equal(shared.statusCode, 404, `shared rendition ${name}: ${shared.body}`);
      const exposed = await post('/v1/asset/expose', [
        { id: assetId, components: [{ componentType: 'rendition', componentRef: name }] },
      ]);
      assert.equal(exposed.statusCode, 200, `expose ${name}: ${exposed.body}`);
      assert.deepEqual(json(exposed)[0].components, [], `expose ${name} makes no link`);
    }
    // The real ones still work.
    assert.equal(
      (
        await ctx().inject({
          method: 'GET',
          url: `/v1/asset/${assetId}/rendition/imageThumb`,
          headers: org.admin.headers,
        })
      ).statusCode,
      200,
    );
    assert.equal(
      (await ctx().inject({ method: 'GET', url: `/shared/storyboards/${token}/assets/${assetId}/imageThumb` }))
        .statusCode,
      200,
    );
  });

  it('a prototype name as a search field: keywordSearchField 400; sortBy / dateRanges a metadata field (search) or a 400 (scan, collection search)', async () => {
    for (const name of PROTOTYPE_NAMES) {
      for (const url of ['/v1/search/keyword', '/v1/search', '/v1/asset/scan']) {
        const keyword = await post(url, { searchTerm: 'proto', keywordSearchField: name });
        assert.equal(keyword.statusCode, 400, `${url} keywordSearchField ${name}: ${keyword.body}`);
        assert.match(keyword.body, /body\.keywordSearchField/);
      }
      for (const url of ['/v1/search/keyword', '/v1/search']) {
        const sorted = await post(url, {
          searchTerm: '*',
          sortBy: [{ metadataDefinitionSearchField: name, order: 'asc' }],
        });
        assert.equal(sorted.statusCode, 200, `${url} sortBy ${name}: ${sorted.body}`);
        const ranged = await post(url, { searchTerm: '*', dateRanges: [{ field: name, from: 0, to: 1 }] });
        assert.equal(ranged.statusCode, 200, `${url} dateRanges ${name}: ${ranged.body}`);
        assert.equal(json(ranged).totalCount, 0, 'no asset has a metadata field of that name');
      }
      const scan = await post('/v1/asset/scan', { searchTerm: '*', sortBy: [{ metadataDefinitionSearchField: name }] });
      assert.equal(scan.statusCode, 400, `scan sortBy ${name}: ${scan.body}`);
      const scanRange = await post('/v1/asset/scan', {
        searchTerm: '*',
        dateRanges: [{ field: name, from: 0, to: 1 }],
      });
      assert.equal(scanRange.statusCode, 200, `scan dateRanges ${name}: ${scanRange.body}`);
      const collections = await post('/v1/search/collection', {
        searchTerm: '*',
        sortBy: [{ metadataDefinitionSearchField: name }],
      });
      assert.equal(collections.statusCode, 400, `collection search sortBy ${name}: ${collections.body}`);
      assert.match(collections.body, /body\.sortBy/);
    }
  });

  it('a prototype name as an attribute type, template sort field or multipart field is refused or ignored, never a 500', async () => {
    for (const name of PROTOTYPE_NAMES) {
      const attrs = await ctx().inject({
        method: 'GET',
        url: `/v1/metadata/attributes?type=${name}`,
        headers: org.admin.headers,
      });
      assert.equal(attrs.statusCode, 400, `attributes?type=${name}: ${attrs.body}`);
      const templates = await post('/v1/template', {
        searchTerm: '*',
        sortBy: [{ metadataDefinitionSearchField: name }],
      });
      assert.equal(templates.statusCode, 400, `template sortBy ${name}: ${templates.body}`);
    }
    const boundary = 'protoBoundary';
    const field = (name: string, value: string) =>
      `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
    const metadataTemplateId = json(
      await ctx().inject({ method: 'GET', url: `/v1/asset/${assetId}`, headers: org.admin.headers }),
    ).metadataTemplateId;
    const body = Buffer.concat([
      Buffer.from(
        field('__proto__', '{"polluted":1}') +
          field('constructor', 'x') +
          field('metadataTemplateId', metadataTemplateId) +
          field('securityTemplateIds', JSON.stringify([org.defaultTemplateId])) +
          field('metadata', '[]'),
      ),
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="p.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`,
      ),
      await jpeg(),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const upload = await ctx().inject({
      method: 'POST',
      url: '/v1/asset/upload',
      headers: { ...org.admin.headers, 'content-type': `multipart/form-data; boundary=${boundary}` },
      payload: body,
    });
    assert.ok(upload.statusCode < 500, `multipart with prototype field names: ${upload.statusCode} ${upload.body}`);
    assert.equal(({} as { polluted?: number }).polluted, undefined);
    assertPrototypeIntact();
  });

  it('left the process whole: no uncaught exception or unhandled rejection, /healthz answers', async () => {
    assert.equal((await ctx().inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
    assertPrototypeIntact();
    assert.deepEqual(crashes, []);
  });
});
