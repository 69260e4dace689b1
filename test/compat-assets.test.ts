import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { forEachEngine, json } from './helpers/context.ts';
import { createTestOrg, type TestOrg } from './helpers/factories.ts';
import { login } from './helpers/auth.ts';
import { randomBytes } from 'node:crypto';
import { createAsset, defaultTemplate, pathOf } from '../src/features/assets/assets.fixtures.ts';

/** Issue 24: what the reference's own client code still tripped on, asset side. */
forEachEngine('compatibility: assets (issue 24)', (ctx) => {
  let org: TestOrg;
  let attr: (searchField: string) => string;
  before(async () => {
    org = await createTestOrg(ctx());
    ({ attr } = await defaultTemplate(ctx(), org));
  });

  it('GET /v1/assets/{id} (the 1.5 change log\'s path) answers as GET /v1/assets/asset/{id}', async () => {
    const created = await createAsset(ctx(), org, { metadata: [{ metadataDefinitionId: attr('title'), metadataDefinitionValue: 'Photo' }] });
    const session = await login(ctx(), org.admin);
    // The live page's request: X-API-Key, Authorization (a bearer token), Content-Type; query empty, system.
    const headers = { 'x-api-key': 'customer-gateway-key', authorization: `Bearer ${session.session.authorization}`, 'content-type': 'application/json' };
    for (const query of ['', '?empty=false&system=false']) {
      const alias = await ctx().inject({ method: 'GET', url: `/v1/assets/${created.objectId}${query}`, headers });
      const canonical = await ctx().inject({ method: 'GET', url: `/v1/assets/asset/${created.objectId}${query}`, headers });
      assert.equal(alias.statusCode, 200, alias.body);
      assert.deepEqual(json(alias), json(canonical));
      assert.equal(json(alias).data.objectId, created.objectId);
    }
    const byFileId = await ctx().inject({ method: 'GET', url: `/v1/assets/${created.fileId}`, headers });
    assert.equal(json(byFileId).data.objectId, created.objectId);
    const missing = await ctx().inject({ method: 'GET', url: '/v1/assets/00000000-0000-4000-8000-000000000000', headers });
    assert.equal(missing.statusCode, 404);
    const doc = json(await ctx().inject({ method: 'GET', url: '/openapi.json' }));
    assert.equal(doc.paths['/v1/assets/{id}'].get.operationId, 'GetAssetSimplifiedAlias');
  });

  it('a create request carrying filesize gets part URLs whatever the size (training/large-upload.md, createAssetService, with a 1 MiB file)', async () => {
    const session = await login(ctx(), org.admin);
    const headers = { authorization: session.session.authorization, accesstoken: session.session.accessToken, accept: 'application/json', 'content-type': 'application/json', 'x-api-key': 'customer-key' };
    const file = randomBytes(1024 * 1024);
    const { id: metadataTemplateId } = await defaultTemplate(ctx(), org);
    // initiateUpload: {metadataTemplateId, securityTemplateIds, metadata, filename, filesize}
    const created = await ctx().inject({
      method: 'POST', url: '/v1/asset', headers,
      payload: {
        metadataTemplateId, securityTemplateIds: [org.defaultTemplateId], filename: 'filename.mp4', filesize: file.length,
        metadata: [{ metadataDefinitionId: attr('title'), metadataDefinitionValue: 'Testing 1 MiB File via Rest API' }, { metadataDefinitionId: attr('description') }],
      },
    });
    assert.equal(created.statusCode, 200, created.body);
    const body = json(created);
    assert.equal(body.url, undefined, 'no single url');
    assert.equal(typeof body.uploadId, 'string');
    assert.deepEqual(body.urls.map((u: { partNumber: number }) => u.partNumber), [1]);
    // uploadAssetFile: bufferSize = min(size, MAX_PART_SIZE); PUT each part, keep its ETag.
    const MAX_PART_SIZE = 1024 * 1024 * 100;
    const bufferSize = Math.min(file.length, MAX_PART_SIZE);
    const parts = [];
    for (const { url, partNumber } of body.urls as { url: string; partNumber: number }[]) {
      const put = await ctx().inject({ method: 'PUT', url: pathOf(url), payload: file.subarray((partNumber - 1) * bufferSize, partNumber * bufferSize) });
      assert.equal(put.statusCode, 200, put.body);
      parts.push({ etag: String(put.headers.etag), partNumber });
    }
    // sendAssetCompleteRequest: {filename, fileId, filesize, uploadId, parts, action: 'complete'}
    const complete = await ctx().inject({
      method: 'POST', url: '/v1/asset/complete', headers,
      payload: { filename: 'filename.mp4', fileId: body.fileId, filesize: file.length, uploadId: body.uploadId, parts, action: 'complete' },
    });
    assert.equal(complete.statusCode, 200, complete.body);
    assert.equal(json(complete).action, 'Complete');
    const link = await ctx().inject({ method: 'GET', url: `/v1/asset/${body.objectId}/content`, headers });
    assert.equal(link.statusCode, 200, link.body);
    assert.ok((await ctx().inject({ method: 'GET', url: pathOf(json(link).presignedURL) })).rawPayload.equals(file));
    // The example payload's spelling `fileSize` selects parts too; without a size the answer is one url (as the training says).
    const spelled = await createAsset(ctx(), org, { filename: 'b.bin', fileSize: 10 });
    assert.equal(spelled.urls?.length, 1);
    const single = await createAsset(ctx(), org, { filename: 'c.bin' });
    assert.equal(typeof single.url, 'string');
    assert.equal(single.urls, undefined);
    // A part that grows past what the declared size leaves for it is refused, nothing kept.
    const small = await createAsset(ctx(), org, { filename: 'd.bin', filesize: 100 });
    const over = await ctx().inject({ method: 'PUT', url: pathOf(small.urls![0]!.url), payload: randomBytes(101) });
    assert.equal(over.statusCode, 400, over.body);
    assert.equal(json(over).details[0].field, 'body.filesize');
  });
});
