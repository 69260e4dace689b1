import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { forEachEngine, json } from './helpers/context.ts';
import { createTestOrg, type TestOrg } from './helpers/factories.ts';
import { login } from './helpers/auth.ts';
import { randomBytes } from 'node:crypto';
import { createAsset, defaultTemplate, pathOf } from './helpers/assets.ts';

/** Issue 24: what the reference's own client code still tripped on, asset side. */
forEachEngine('compatibility: assets (issue 24)', (ctx) => {
  let org: TestOrg;
  let attr: (searchField: string) => string;
  before(async () => {
    org = await createTestOrg(ctx());
    ({ attr } = await defaultTemplate(ctx(), org));
  });

  it("GET /v1/assets/{id} (the 1.5 change log's path) answers as GET /v1/assets/asset/{id}", async () => {
    const created = await createAsset(ctx(), org, {
      metadata: [{ metadataDefinitionId: attr('title'), metadataDefinitionValue: 'Photo' }],
    });
    const session = await login(ctx(), org.admin);
    // The live page's request: X-API-Key, Authorization (a bearer token), Content-Type; query empty, system.
    const headers = {
      'x-api-key': 'customer-gateway-key',
      authorization: `Bearer ${session.session.authorization}`,
      'content-type': 'application/json',
    };
    for (const query of ['', '?empty=false&system=false']) {
      const alias = await ctx().inject({ method: 'GET', url: `/v1/assets/${created.objectId}${query}`, headers });
      const canonical = await ctx().inject({
        method: 'GET',
        url: `/v1/assets/asset/${created.objectId}${query}`,
        headers,
      });
      assert.equal(alias.statusCode, 200, alias.body);
      assert.deepEqual(json(alias), json(canonical));
      assert.equal(json(alias).data.objectId, created.objectId);
    }
    const byFileId = await ctx().inject({ method: 'GET', url: `/v1/assets/${created.fileId}`, headers });
    assert.equal(json(byFileId).data.objectId, created.objectId);
    const missing = await ctx().inject({
      method: 'GET',
      url: '/v1/assets/00000000-0000-4000-8000-000000000000',
      headers,
    });
    assert.equal(missing.statusCode, 404);
    const doc = json(await ctx().inject({ method: 'GET', url: '/openapi.json' }));
    assert.equal(doc.paths['/v1/assets/{id}'].get.operationId, 'GetAssetSimplifiedAlias');
  });

  it('a create request carrying filesize gets part URLs whatever the size (training/large-upload.md, createAssetService, with a 1 MiB file)', async () => {
    const session = await login(ctx(), org.admin);
    const headers = {
      authorization: session.session.authorization,
      accesstoken: session.session.accessToken,
      accept: 'application/json',
      'content-type': 'application/json',
      'x-api-key': 'customer-key',
    };
    const file = randomBytes(1024 * 1024);
    const { id: metadataTemplateId } = await defaultTemplate(ctx(), org);
    // initiateUpload: {metadataTemplateId, securityTemplateIds, metadata, filename, filesize}
    const created = await ctx().inject({
      method: 'POST',
      url: '/v1/asset',
      headers,
      payload: {
        metadataTemplateId,
        securityTemplateIds: [org.defaultTemplateId],
        filename: 'filename.mp4',
        filesize: file.length,
        metadata: [
          { metadataDefinitionId: attr('title'), metadataDefinitionValue: 'Testing 1 MiB File via Rest API' },
          { metadataDefinitionId: attr('description') },
        ],
      },
    });
    assert.equal(created.statusCode, 200, created.body);
    const body = json(created);
    assert.equal(body.url, undefined, 'no single url');
    assert.equal(typeof body.uploadId, 'string');
    assert.deepEqual(
      body.urls.map((u: { partNumber: number }) => u.partNumber),
      [1],
    );
    // uploadAssetFile: bufferSize = min(size, MAX_PART_SIZE); PUT each part, keep its ETag.
    const MAX_PART_SIZE = 1024 * 1024 * 100;
    const bufferSize = Math.min(file.length, MAX_PART_SIZE);
    const parts = [];
    for (const { url, partNumber } of body.urls as { url: string; partNumber: number }[]) {
      const put = await ctx().inject({
        method: 'PUT',
        url: pathOf(url),
        payload: file.subarray((partNumber - 1) * bufferSize, partNumber * bufferSize),
      });
      assert.equal(put.statusCode, 200, put.body);
      parts.push({ etag: String(put.headers.etag), partNumber });
    }
    // sendAssetCompleteRequest: {filename, fileId, filesize, uploadId, parts, action: 'complete'}
    const complete = await ctx().inject({
      method: 'POST',
      url: '/v1/asset/complete',
      headers,
      payload: {
        filename: 'filename.mp4',
        fileId: body.fileId,
        filesize: file.length,
        uploadId: body.uploadId,
        parts,
        action: 'complete',
      },
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

  it('an asset exists from the moment it is created (training upload.md body): read, edit, link, collect, search, version; content routes 409 until the bytes arrive', async () => {
    const session = await login(ctx(), org.admin);
    const headers = {
      accept: 'application/json',
      authorization: session.session.authorization,
      'content-type': 'application/json',
      'x-api-key': 'customer-key',
    };
    const call = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown) =>
      ctx().inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) });
    const { id: metadataTemplateId } = await defaultTemplate(ctx(), org);
    // The reference's create request (§7.2 example skeleton / training upload.md): a filename, no upload yet.
    const create = (filename: string, extra: Record<string, unknown> = {}) =>
      call('POST', '/v1/asset', {
        metadataTemplateId,
        securityTemplateIds: [org.defaultTemplateId],
        filename,
        ...extra,
        metadata: [{ metadataDefinitionId: attr('title'), metadataDefinitionValue: `Photo ${filename}` }],
      });
    const a = json(await create('apples-orchard.jpg'));
    const b = json(await create('pears-orchard.jpg'));
    assert.equal(typeof a.url, 'string');

    // Read at once (legacy and 1.5 shapes): metadata-only for the reference (fileState available), contentState pending.
    const got = await call('GET', `/v1/asset/${a.objectId}`);
    assert.equal(got.statusCode, 200, got.body);
    assert.equal(json(got).fileState, 'available');
    assert.equal(json(got).contentState, 'pending');
    assert.equal(json(await call('GET', `/v1/assets/asset/${a.objectId}`)).data.objectId, a.objectId);
    // Content routes answer 409 until the bytes arrive.
    assert.equal((await call('GET', `/v1/asset/${a.objectId}/content`)).statusCode, 409);
    assert.equal((await call('GET', `/v1/asset/${a.objectId}/rendition/imageThumb`)).statusCode, 409);

    // Metadata updates, links (training relationships.md: {secondaryIds: [{id, linkType}]}), collections (training collections.md body).
    const patch = await call('PATCH', `/v1/asset/${a.objectId}`, {
      metadata: [{ metadataDefinitionId: attr('description'), metadataDefinitionValue: 'before upload' }],
    });
    assert.equal(patch.statusCode, 200, patch.body);
    const link = await call('POST', `/v1/asset/${a.objectId}/link`, {
      secondaryIds: [{ id: b.objectId, linkType: 'child' }],
    });
    assert.equal(link.statusCode, 200, link.body);
    assert.equal(json(link)[0].status, 'success', link.body);
    assert.equal(json(await call('GET', `/v1/asset/${b.objectId}/link`)).length, 1);
    const collection = await call('POST', '/v1/collection', {
      collectionType: 'private',
      name: 'Orchards',
      metadataDocument: '[]',
      collectionDocument: [a.fileId, b.fileId],
    });
    assert.equal(collection.statusCode, 200, collection.body);
    const members = json(await call('GET', `/v1/collection/${json(collection).collectionId}/assets`));
    assert.deepEqual(
      members.result.map((r: { objectId: string }) => r.objectId).sort(),
      [a.objectId, b.objectId].sort(),
    );

    // Search (training search.md body) finds them.
    const found = json(
      await call('POST', '/v1/search/keyword', { from: 0, searchTerm: ['orchard'], operation: 'AND', limit: 10 }),
    );
    assert.deepEqual(found.result.map((r: { objectId: string }) => r.objectId).sort(), [a.objectId, b.objectId].sort());

    // A new version through originalFileId is visible and the latest at once.
    const v2 = json(await create('apples-orchard-v2.jpg', { originalFileId: a.originalFileId }));
    const latest = json(await call('GET', `/v1/asset/${a.objectId}/latest`));
    assert.equal(latest.objectId, v2.objectId);
    assert.equal(latest.contentState, 'pending');
    assert.deepEqual(
      json(await call('GET', `/v1/asset/${a.originalFileId}/version`)).map(
        (v: { versionNumber: number }) => v.versionNumber,
      ),
      [2, 1],
    );

    // The bytes arrive: content is served.
    const put = await ctx().inject({
      method: 'PUT',
      url: pathOf(a.url),
      payload: randomBytes(64),
      headers: { 'content-type': 'application/octet-stream' },
    });
    assert.equal(put.statusCode, 200, put.body);
    assert.equal(json(await call('GET', `/v1/asset/${a.objectId}`)).contentState, 'available');
    assert.equal((await call('GET', `/v1/asset/${a.objectId}/content`)).statusCode, 200);

    // A cancelled upload leaves the record, without content (reference §7.19).
    const c = json(await create('plums.bin', { filesize: 10 }));
    const cancel = await call('POST', '/v1/asset/complete', { action: 'cancel', uploadId: c.uploadId });
    assert.equal(cancel.statusCode, 200, cancel.body);
    const kept = json(await call('GET', `/v1/asset/${c.objectId}`));
    assert.equal(kept.contentState, 'none');
    assert.equal(kept.fileState, 'available');
    assert.equal((await call('GET', `/v1/asset/${c.objectId}/content`)).statusCode, 404);
  });

  it("version.created carries the reference's version object (webhooks/schemas/version.yaml) beside Tessera's fields", async () => {
    const v1 = await createAsset(ctx(), org, { metadata: [] });
    const v2 = await createAsset(ctx(), org, { originalFileId: v1.originalFileId });
    const rows = await ctx()
      .deps.db.selectFrom('events')
      .select(['type', 'body'])
      .where('org_id', '=', org.orgId)
      .where('type', '=', 'version.created')
      .execute();
    const event = rows.map((r) => JSON.parse(r.body)).find((b) => b.asset.id === v2.objectId);
    assert.ok(event, 'version.created published');
    // The reference's payload: {eventType, asset{id}, version{number, latest, previous{assetId, versionNumber, createdBy{userId, firstName, lastName, time}}}}
    assert.equal(event.eventType, 'version.created');
    assert.equal(event.asset.id, v2.objectId);
    assert.equal(event.version.number, 2);
    assert.equal(event.version.latest, true);
    assert.equal(event.version.previous.assetId, v1.objectId);
    assert.equal(event.version.previous.versionNumber, 1);
    assert.equal(event.version.previous.createdBy.userId, org.admin.userId);
    assert.equal(typeof event.version.previous.createdBy.firstName, 'string');
    assert.equal(typeof event.version.previous.createdBy.lastName, 'string');
    assert.ok(!Number.isNaN(Date.parse(event.version.previous.createdBy.time)));
    // Tessera's own fields stay.
    assert.equal(event.version.versionNumber, 2);
    assert.equal(event.version.previousVersionNumber, 1);
  });

  it("asset.downloaded carries the reference's top-level asset{id} beside Tessera's assets[]", async () => {
    const a = await createAsset(ctx(), org, { filename: 'dl.bin' });
    const put = await ctx().inject({
      method: 'PUT',
      url: pathOf(a.url!),
      payload: randomBytes(32),
      headers: { 'content-type': 'application/octet-stream' },
    });
    assert.equal(put.statusCode, 200, put.body);
    const link = await ctx().inject({
      method: 'GET',
      url: `/v1/asset/${a.objectId}/content`,
      headers: org.admin.headers,
    });
    assert.equal(link.statusCode, 200);
    // Fired when the bytes are served (test/compat-webhook-payloads.test.ts shows the rest).
    assert.equal((await ctx().inject({ method: 'GET', url: pathOf(json(link).presignedURL) })).statusCode, 200);
    const rows = await ctx()
      .deps.db.selectFrom('events')
      .select('body')
      .where('org_id', '=', org.orgId)
      .where('type', '=', 'asset.downloaded')
      .execute();
    const event = rows.map((r) => JSON.parse(r.body)).find((b) => b.asset?.id === a.objectId);
    assert.ok(event, 'asset.downloaded with asset.id');
    assert.deepEqual(event.assets, [{ id: a.objectId, filename: 'dl.bin' }]);
  });
});
