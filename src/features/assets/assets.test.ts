import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { before, it } from 'node:test';
import { forEachEngine, json } from '../../../test/helpers/context.ts';
import { createTestOrg, createTestUser, type TestOrg } from '../../../test/helpers/factories.ts';
import { securitySuite } from '../../../test/helpers/security.ts';
import { createAsset, defaultTemplate, jpeg, pathOf, uploadAsset } from '../../../test/helpers/assets.ts';

forEachEngine('assets: create, read, update', (ctx) => {
  let org: TestOrg;
  let TEMPLATE: string;
  let attr: (searchField: string) => string;
  before(async () => {
    org = await createTestOrg(ctx());
    ({ id: TEMPLATE, attr } = await defaultTemplate(ctx(), org));
  });

  it('creates a metadata-only asset that is visible at once (legacy and 1.5 shapes)', async () => {
    const created = await createAsset(ctx(), org, {
      metadata: [{ metadataDefinitionId: attr('title'), metadataDefinitionValue: 'Photo' }],
    });
    assert.equal(created.url, undefined);
    assert.equal(created.fileId, created.originalFileId);
    const res = await ctx().inject({
      method: 'GET',
      url: `/v1/asset/${created.objectId}`,
      headers: { ...org.admin.headers, 'content-type': 'application/json' },
    });
    assert.equal(res.statusCode, 200, res.body);
    const asset = json(res);
    assert.equal(asset.objectType, 'Asset');
    assert.equal(asset.currentVersion, 'Y');
    assert.equal(asset.versionNumber, 1);
    assert.equal(asset.fileState, 'available');
    assert.equal(asset.customerId, org.customerId);
    assert.equal(asset.metadataTemplateId, TEMPLATE);
    assert.deepEqual(asset.securityTemplateIds, [org.defaultTemplateId]);
    assert.deepEqual(asset.metadata, [{ metadataDefinitionId: attr('title'), metadataDefinitionValue: 'Photo' }]);
    assert.deepEqual(asset.metadataDenormalized, { title: 'Photo' });
    assert.ok(asset.securityDenormalized.some((g: { groupId: string }) => g.groupId === org.groups.everyone));
    // by fileId too, and with a trailing slash
    assert.equal(
      (await ctx().inject({ method: 'GET', url: `/v1/asset/${created.fileId}/`, headers: org.admin.headers }))
        .statusCode,
      200,
    );
    const simple = await ctx().inject({
      method: 'GET',
      url: `/v1/assets/asset/${created.objectId}`,
      headers: org.admin.headers,
    });
    assert.equal(simple.statusCode, 200, simple.body);
    const data = json(simple).data;
    assert.equal(json(simple).status, 'success');
    assert.equal(data.objectId, created.objectId);
    assert.deepEqual(data.securityTemplates, [{ id: org.defaultTemplateId, name: 'Default' }]);
    assert.ok(data.metadata.some((m: { name: string }) => m.name === 'system_created_by'));
    const bare = json(
      await ctx().inject({
        method: 'GET',
        url: `/v1/assets/asset/${created.objectId}?system=false&empty=false`,
        headers: org.admin.headers,
      }),
    ).data;
    assert.deepEqual(bare.metadata, [{ name: 'Title', value: 'Photo' }]);
    assert.deepEqual(data.metadataTemplate, { id: TEMPLATE, name: json(simple).data.metadataTemplate.name });
    assert.ok(data.metadataTemplate.name.length > 0);
  });

  it('refuses bad create bodies with 400 naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ metadataTemplateId: undefined }, 'body.metadataTemplateId'],
      [{ securityTemplateIds: [] }, 'body.securityTemplateIds'],
      [{ securityTemplateIds: ['0190a4b2-0000-7000-8000-000000000000'] }, 'body.securityTemplateIds'],
      [{ filename: 'a/b.jpg' }, 'body.filename'],
      [{ metadata: 'nope' }, 'body.metadata'],
      [{ metadata: [{ metadataDefinitionValue: 'x' }] }, 'body.metadata'],
      [{ metadata: [{ name: 'No Such Attribute', value: 'x' }] }, 'body.metadata'],
      [{ metadataTemplateId: '0190a4b2-0000-7000-8000-000000000000' }, 'body.metadataTemplateId'],
      [{ originalFileId: '0190a4b2-0000-7000-8000-000000000000' }, 'body.originalFileId'],
      [{ filename: 'x.jpg', checksum: 'abc' }, 'body.checksum'],
      [{ filesize: -1, filename: 'x.jpg' }, 'body.filesize'],
      // More than 10,000 parts of the part size (100 MB): refused, not planned as millions of URLs.
      [{ filesize: 2 * 1024 ** 4, filename: 'x.bin' }, 'body.filesize'],
      [{ filesize: 6 * 1024 ** 4, filename: 'x.bin' }, 'body.filesize'],
      [{ filesize: '1e999', filename: 'x.bin' }, 'body.filesize'],
      [{ fileSize: 1e15, filename: 'x.bin' }, 'body.fileSize'],
    ];
    for (const [body, field] of cases) {
      const payload = {
        metadataTemplateId: TEMPLATE,
        metadata: [],
        securityTemplateIds: [org.defaultTemplateId],
        ...body,
      };
      const res = await ctx().inject({ method: 'POST', url: '/v1/asset', headers: org.admin.headers, payload });
      assert.equal(res.statusCode, 400, `${field}: ${res.body}`);
      assert.ok(
        json(res).details?.some((d: { field: string }) => d.field.startsWith(field)),
        `${field}: ${res.body}`,
      );
    }
  });

  it("gives a new asset the organization's Default security template when a caller who may not list security templates leaves them out", async () => {
    const editor = await createTestUser(ctx(), org, { roleId: org.roles.editor });
    const listed = await ctx().inject({ method: 'GET', url: '/v1/security/template', headers: editor.headers });
    assert.equal(listed.statusCode, 403, 'an Editor may not list security templates');
    for (const url of ['/v1/asset', '/v1/assets/asset']) {
      const res = await ctx().inject({
        method: 'POST',
        url,
        headers: editor.headers,
        payload: { metadataTemplateId: TEMPLATE, filename: 'from-the-app.jpg' },
      });
      assert.equal(res.statusCode, 200, res.body);
      const objectId = json(res).objectId ?? json(res).data.objectId;
      const asset = json(
        await ctx().inject({ method: 'GET', url: `/v1/asset/${objectId}`, headers: org.admin.headers }),
      );
      assert.deepEqual(asset.securityTemplateIds, [org.defaultTemplateId]);
    }
    // Naming them still works, and an empty list is still refused on its field.
    const empty = await ctx().inject({
      method: 'POST',
      url: '/v1/asset',
      headers: editor.headers,
      payload: { metadataTemplateId: TEMPLATE, securityTemplateIds: [] },
    });
    assert.equal(empty.statusCode, 400, empty.body);
    assert.equal(json(empty).details[0].field, 'body.securityTemplateIds');
    // A caller who can list them (an administrator) must name them, as the reference requires.
    const admin = await ctx().inject({
      method: 'POST',
      url: '/v1/asset',
      headers: org.admin.headers,
      payload: { metadataTemplateId: TEMPLATE, metadata: [] },
    });
    assert.equal(admin.statusCode, 400, admin.body);
    assert.equal(json(admin).details[0].field, 'body.securityTemplateIds');
  });

  it('shows an asset with content at once, contentState pending (content routes 409) until its bytes arrive, then stores and describes them', async () => {
    const bytes = await jpeg();
    const created = await createAsset(ctx(), org, { filename: 'apples.jpg' });
    assert.ok(created.url?.includes(`/v1/uploads/`));
    // Reference §7.2: until content arrives the asset is a metadata-only asset (it exists).
    const before = await ctx().inject({
      method: 'GET',
      url: `/v1/asset/${created.objectId}`,
      headers: org.admin.headers,
    });
    assert.equal(before.statusCode, 200, before.body);
    assert.equal(json(before).contentState, 'pending');
    assert.equal(json(before).fileState, 'available');
    assert.equal(
      (await ctx().inject({ method: 'GET', url: `/v1/asset/${created.objectId}/content`, headers: org.admin.headers }))
        .statusCode,
      409,
    );
    const put = await ctx().inject({
      method: 'PUT',
      url: pathOf(created.url!),
      payload: bytes,
      headers: { 'content-type': 'image/jpeg' },
    });
    assert.equal(put.statusCode, 200, put.body);
    const asset = json(
      await ctx().inject({ method: 'GET', url: `/v1/asset/${created.objectId}`, headers: org.admin.headers }),
    );
    assert.equal(asset.contentState, 'available');
    assert.equal(asset.fileSizeInBytes, bytes.length);
    assert.equal(asset.contentType, 'image/jpeg');
    assert.equal(asset.filename, 'apples.jpg');
    // a second PUT to a finished upload is refused
    assert.equal((await ctx().inject({ method: 'PUT', url: pathOf(created.url!), payload: bytes })).statusCode, 409);
  });

  it('refuses tampered, expired or unknown upload URLs', async () => {
    const created = await createAsset(ctx(), org, { filename: 'x.jpg' });
    const url = new URL(created.url!);
    const tampered = `${url.pathname}?expires=${url.searchParams.get('expires')}&signature=${'A'.repeat(43)}`;
    assert.equal((await ctx().inject({ method: 'PUT', url: tampered, payload: Buffer.from('x') })).statusCode, 403);
    const later = `${url.pathname}?expires=${Number(url.searchParams.get('expires')) + 1}&signature=${url.searchParams.get('signature')}`;
    assert.equal((await ctx().inject({ method: 'PUT', url: later, payload: Buffer.from('x') })).statusCode, 403);
    assert.equal((await ctx().inject({ method: 'PUT', url: url.pathname, payload: Buffer.from('x') })).statusCode, 400);
  });

  it('verifies declared size, checksum and content type; a mismatch keeps nothing', async () => {
    const bytes = await jpeg();
    // A declared filesize means part URLs (reference: training/large-upload.md); the size is checked on completion.
    const sized = await createAsset(ctx(), org, { filename: 'a.jpg', filesize: bytes.length + 1 });
    const part = await ctx().inject({ method: 'PUT', url: pathOf(sized.urls![0]!.url), payload: bytes });
    assert.equal(part.statusCode, 200, part.body);
    const r1 = await ctx().inject({
      method: 'POST',
      url: '/v1/asset/complete',
      headers: org.admin.headers,
      payload: { action: 'complete', uploadId: sized.uploadId, parts: [{ partNumber: 1, etag: part.headers.etag }] },
    });
    assert.equal(r1.statusCode, 400, r1.body);
    assert.equal(json(r1).details[0].field, 'body.filesize');
    const summed = await createAsset(ctx(), org, { filename: 'a.jpg', checksum: 'a'.repeat(64) });
    const r2 = await ctx().inject({ method: 'PUT', url: pathOf(summed.url!), payload: bytes });
    assert.equal(r2.statusCode, 400, r2.body);
    assert.equal(json(r2).details[0].field, 'body.checksum');
    const typed = await createAsset(ctx(), org, { filename: 'a.png' });
    const r3 = await ctx().inject({ method: 'PUT', url: pathOf(typed.url!), payload: bytes });
    assert.equal(r3.statusCode, 400, r3.body);
    assert.match(json(r3).message, /image\/jpeg/);
    for (const c of [sized, summed, typed]) {
      // The asset exists (reference §7.2), its content still pending.
      assert.equal(
        json(await ctx().inject({ method: 'GET', url: `/v1/asset/${c.objectId}`, headers: org.admin.headers }))
          .contentState,
        'pending',
      );
    }
    const rows = await ctx()
      .deps.db.selectFrom('assets')
      .select(['content_state', 'blob_key'])
      .where('id', 'in', [sized.objectId, summed.objectId, typed.objectId])
      .execute();
    assert.ok(rows.every((r) => r.content_state === 'pending' && r.blob_key === null));
  });

  it('stops writing a body that grows past its declared size (no Content-Length) and answers 400, keeping nothing', async () => {
    const bytes = await jpeg();
    // A declared filesize means part URLs (reference: training/large-upload.md); the one part may hold 100 bytes.
    const created = await createAsset(ctx(), org, { filename: 'a.jpg', filesize: 100 });
    const body = Readable.from([bytes.subarray(0, 60), bytes.subarray(60)]);
    const res = await ctx().inject({
      method: 'PUT',
      url: pathOf(created.urls![0]!.url),
      payload: body,
      headers: { 'content-type': 'image/jpeg' },
    });
    assert.equal(res.statusCode, 400, res.body);
    assert.equal(json(res).details[0].field, 'body.filesize');
    assert.match(
      json(res).message,
      new RegExp(`at most 100 bytes \\(the asset was declared as 100 bytes\\) but ${bytes.length} arrived`),
    );
    assert.equal(
      json(await ctx().inject({ method: 'GET', url: `/v1/asset/${created.objectId}`, headers: org.admin.headers }))
        .contentState,
      'pending',
    );
    const row = await ctx()
      .deps.db.selectFrom('assets')
      .select(['content_state', 'blob_key'])
      .where('id', '=', created.objectId)
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, { content_state: 'pending', blob_key: null });
    const uploadId = created.uploadId!;
    const staged = join(ctx().dataDir, 'blobs', 'uploads', org.orgId, uploadId);
    assert.ok(!existsSync(staged) || readdirSync(staged).length === 0, 'nothing was kept');
  });

  it('stores identical content once', async () => {
    const bytes = await jpeg(30, 30);
    const a = await uploadAsset(ctx(), org, bytes, 'one.jpg');
    const b = await uploadAsset(ctx(), org, bytes, 'two.jpg');
    const rows = await ctx()
      .deps.db.selectFrom('assets')
      .select(['blob_key', 'sha256'])
      .where('id', 'in', [a.objectId, b.objectId])
      .execute();
    assert.equal(rows.length, 2);
    assert.equal(rows[0]!.blob_key, rows[1]!.blob_key);
    assert.match(rows[0]!.blob_key!, new RegExp(rows[0]!.sha256!));
  });

  it('updates only what is sent (legacy and 1.5) and publishes metadata and security events', async () => {
    const created = await createAsset(ctx(), org, {
      metadata: [
        { metadataDefinitionId: attr('title'), metadataDefinitionValue: '1' },
        { metadataDefinitionId: attr('creator'), metadataDefinitionValue: '2' },
      ],
    });
    const patch = await ctx().inject({
      method: 'PATCH',
      url: `/v1/asset/${created.objectId}`,
      headers: org.admin.headers,
      payload: { metadata: [{ metadataDefinitionId: attr('creator'), metadataDefinitionValue: 'two' }] },
    });
    assert.equal(patch.statusCode, 200, patch.body);
    assert.deepEqual(json(patch), { status: 'success', message: 'Asset update was successful' });
    let asset = json(
      await ctx().inject({ method: 'GET', url: `/v1/asset/${created.objectId}`, headers: org.admin.headers }),
    );
    assert.deepEqual(asset.metadataDenormalized, { title: '1', creator: 'two' });
    const tpl = await ctx().inject({
      method: 'POST',
      url: '/v1/security/template',
      headers: org.admin.headers,
      payload: {
        templateName: `t-${Date.now()}`,
        securityDenormalized: [
          { groupId: org.groups.administrators, permissions: ['6c1f0c1e-5b1a-4e1a-9a51-000000000001'] },
        ],
      },
    });
    assert.equal(tpl.statusCode, 201, tpl.body);
    const simple = await ctx().inject({
      method: 'PATCH',
      url: `/v1/assets/asset/${created.objectId}`,
      headers: org.admin.headers,
      payload: {
        securityTemplateIds: [org.defaultTemplateId, json(tpl).templateId],
        metadata: [{ name: 'Description', value: 'by name' }],
      },
    });
    assert.equal(simple.statusCode, 200, simple.body);
    asset = json(
      await ctx().inject({ method: 'GET', url: `/v1/asset/${created.objectId}`, headers: org.admin.headers }),
    );
    assert.equal(asset.securityTemplateIds.length, 2);
    assert.deepEqual(asset.metadataDenormalized, { title: '1', creator: 'two', description: 'by name' });
    const events = await ctx()
      .deps.db.selectFrom('events')
      .select(['type', 'body'])
      .where('org_id', '=', org.orgId)
      .execute();
    const mine = events.filter((e) => e.body.includes(created.objectId)).map((e) => e.type);
    assert.ok(mine.includes('asset.created'));
    assert.ok(mine.includes('asset.metadata.updated'));
    assert.ok(mine.includes('asset.security.updated'));
    const empty = await ctx().inject({
      method: 'PATCH',
      url: `/v1/asset/${created.objectId}`,
      headers: org.admin.headers,
      payload: {},
    });
    assert.equal(empty.statusCode, 400);
  });

  it('hides assets from callers whose groups the templates do not grant View (404), and refuses edits without Edit Metadata (403)', async () => {
    const created = await createAsset(ctx(), org);
    const outsider = await createTestUser(ctx(), org, { privileges: ['upload'], groupIds: [] });
    assert.equal(
      (await ctx().inject({ method: 'GET', url: `/v1/asset/${created.objectId}`, headers: outsider.headers }))
        .statusCode,
      404,
    );
    assert.equal(
      (await ctx().inject({ method: 'GET', url: `/v1/assets/asset/${created.objectId}`, headers: outsider.headers }))
        .statusCode,
      404,
    );
    const viewer = await createTestUser(ctx(), org, { privileges: ['upload'] });
    assert.equal(
      (await ctx().inject({ method: 'GET', url: `/v1/asset/${created.objectId}`, headers: viewer.headers })).statusCode,
      200,
    );
    const edit = await ctx().inject({
      method: 'PATCH',
      url: `/v1/asset/${created.objectId}`,
      headers: viewer.headers,
      payload: { metadata: [] },
    });
    assert.equal(edit.statusCode, 403, edit.body);
  });

  securitySuite(ctx, 'POST /v1/asset', {
    method: 'POST',
    privileges: ['upload'],
    prepare: async (c, o) => ({
      url: '/v1/asset',
      body: {
        metadataTemplateId: (await defaultTemplate(c, o)).id,
        metadata: [],
        securityTemplateIds: [o.defaultTemplateId],
      },
    }),
  });
  securitySuite(ctx, 'POST /v1/assets/asset', {
    method: 'POST',
    privileges: ['upload'],
    prepare: async (c, o) => ({
      url: '/v1/assets/asset',
      body: {
        metadataTemplateId: (await defaultTemplate(c, o)).id,
        metadata: [],
        securityTemplateIds: [o.defaultTemplateId],
      },
    }),
  });
  for (const [method, suffix, body] of [
    ['GET', '', undefined],
    ['PATCH', '', { metadata: [] }],
    ['GET', '/latest', undefined],
    ['GET', '/version', undefined],
  ] as const) {
    securitySuite(ctx, `${method} /v1/asset/{id}${suffix}`, {
      method,
      resource: true,
      prepare: async (c, o) => ({ url: `/v1/asset/${(await createAsset(c, o)).objectId}${suffix}`, body }),
    });
  }
  for (const [method, body] of [
    ['GET', undefined],
    ['PATCH', { metadata: [] }],
  ] as const) {
    securitySuite(ctx, `${method} /v1/assets/asset/{id}`, {
      method,
      resource: true,
      prepare: async (c, o) => ({ url: `/v1/assets/asset/${(await createAsset(c, o)).objectId}`, body }),
    });
  }
});
