import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, it } from 'node:test';
import { forEachEngine, json, type TestContext } from '../../../test/helpers/context.ts';
import { createTestOrg, createTestUser, type TestOrg } from '../../../test/helpers/factories.ts';
import { securitySuite } from '../../../test/helpers/security.ts';
import type { Worker } from '../../core/jobs/worker.ts';
import { assetWorker, createAsset, defaultTemplate, jpeg, pathOf, uploadAsset } from '../../../test/helpers/assets.ts';

const PART = 5 * 1024 * 1024;
const get = async (ctx: TestContext, org: TestOrg, url: string) =>
  ctx.inject({ method: 'GET', url, headers: org.admin.headers });
const types = async (ctx: TestContext, org: TestOrg, id: string) =>
  (
    await ctx.deps.db
      .selectFrom('events')
      .select('type')
      .where('org_id', '=', org.orgId)
      .where('body', 'like', `%${id}%`)
      .orderBy('created_at')
      .execute()
  ).map((e) => e.type);

forEachEngine(
  'assets: versions, recycle bin, relationships, multipart, bulk edit and purge',
  (ctx) => {
    let org: TestOrg;
    let worker: Worker;
    before(async () => {
      org = await createTestOrg(ctx());
      worker = assetWorker(ctx());
    });
    after(async () => worker.stop());

    it('creates versions through originalFileId: the new version is the latest at once (content pending), latest and history follow', async () => {
      const v1 = await uploadAsset(ctx(), org, await jpeg(40, 40), 'v.jpg');
      const v2 = await createAsset(ctx(), org, { filename: 'v2.jpg', originalFileId: v1.originalFileId });
      assert.equal(v2.originalFileId, v1.originalFileId);
      assert.equal(v2.versionNumber, 2);
      // Reference §7.2/§7.19: the version exists at once (metadata-only until its bytes arrive) and is the latest.
      const pending = json(await get(ctx(), org, `/v1/asset/${v1.objectId}/latest`));
      assert.equal(pending.objectId, v2.objectId);
      assert.equal(pending.contentState, 'pending');
      assert.equal(json(await get(ctx(), org, `/v1/asset/${v1.originalFileId}/version`)).length, 2);
      assert.ok(
        !(await types(ctx(), org, v2.objectId)).includes('version.created'),
        'version.created waits for the content',
      );
      const put = await ctx().inject({ method: 'PUT', url: pathOf(v2.url!), payload: await jpeg(50, 50) });
      assert.equal(put.statusCode, 200, put.body);
      const latest = json(await get(ctx(), org, `/v1/asset/${v1.objectId}/latest`));
      assert.equal(latest.objectId, v2.objectId);
      assert.equal(latest.currentVersion, 'Y');
      assert.equal(json(await get(ctx(), org, `/v1/asset/${v1.objectId}`)).currentVersion, 'N');
      const history = json(await get(ctx(), org, `/v1/asset/${v1.originalFileId}/version`));
      assert.deepEqual(
        history.map((a: { versionNumber: number }) => a.versionNumber),
        [2, 1],
      );
      assert.ok((await types(ctx(), org, v2.objectId)).includes('version.created'));
      assert.ok(!(await types(ctx(), org, v2.objectId)).includes('asset.created'));
    });

    it('sends an asset to the recycle bin and back; deleted assets cannot be edited or downloaded; errors are clear', async () => {
      const a = await uploadAsset(ctx(), org, await jpeg(20, 20), 'bin.jpg');
      const del = await ctx().inject({
        method: 'POST',
        url: `/v1/asset/${a.objectId}/delete`,
        headers: org.admin.headers,
        payload: { action: 'delete', deleteType: 'full' },
      });
      assert.equal(del.statusCode, 200, del.body);
      assert.equal(json(del).message, 'Master Object update was successful');
      assert.ok(JSON.parse(json(del).data).metadataDeletedEpoch > 0);
      const asset = json(await get(ctx(), org, `/v1/asset/${a.objectId}`));
      assert.equal(asset.fileState, 'recycle bin');
      assert.equal(
        (
          await ctx().inject({
            method: 'PATCH',
            url: `/v1/asset/${a.objectId}`,
            headers: org.admin.headers,
            payload: { metadata: [] },
          })
        ).statusCode,
        409,
      );
      assert.equal((await get(ctx(), org, `/v1/asset/${a.objectId}/content`)).statusCode, 409);
      assert.equal(
        (
          await ctx().inject({
            method: 'POST',
            url: `/v1/asset/${a.objectId}/delete`,
            headers: org.admin.headers,
            payload: { action: 'delete' },
          })
        ).statusCode,
        409,
      );
      assert.equal(
        (
          await ctx().inject({
            method: 'POST',
            url: `/v1/asset/${a.objectId}/delete`,
            headers: org.admin.headers,
            payload: {},
          })
        ).statusCode,
        400,
      );
      const undo = await ctx().inject({
        method: 'POST',
        url: `/v1/asset/${a.objectId}/delete`,
        headers: org.admin.headers,
        payload: { action: 'undelete' },
      });
      assert.equal(undo.statusCode, 200);
      assert.equal(json(await get(ctx(), org, `/v1/asset/${a.objectId}`)).fileState, 'available');
      assert.equal(
        (
          await ctx().inject({
            method: 'POST',
            url: `/v1/asset/${a.objectId}/delete`,
            headers: org.admin.headers,
            payload: { action: 'undelete' },
          })
        ).statusCode,
        409,
      );
      const viewer = await createTestUser(ctx(), org, { privileges: ['delete'] });
      assert.equal(
        (
          await ctx().inject({
            method: 'POST',
            url: `/v1/asset/${a.objectId}/delete`,
            headers: viewer.headers,
            payload: { action: 'delete' },
          })
        ).statusCode,
        403,
      );
      const ev = await types(ctx(), org, a.objectId);
      assert.ok(ev.includes('asset.deleted') && ev.includes('asset.restored'));
    });

    it('purges recycle-bin assets as an Action (Purge): rows, bytes and renditions go, asset.purged fires', async () => {
      const bytes = randomBytes(5000);
      const a = await uploadAsset(ctx(), org, bytes, 'purge.bin');
      await worker.drain();
      const row = await ctx()
        .deps.db.selectFrom('assets')
        .select('blob_key')
        .where('id', '=', a.objectId)
        .executeTakeFirstOrThrow();
      assert.ok(await ctx().deps.blobs.head(row.blob_key!));
      // not in the bin: nothing to purge
      await ctx().inject({
        method: 'POST',
        url: `/v1/asset/${a.objectId}/delete`,
        headers: org.admin.headers,
        payload: { action: 'delete' },
      });
      const started = await ctx().inject({
        method: 'POST',
        url: '/v1/asset/purge',
        headers: org.admin.headers,
        payload: { objectIds: [a.objectId] },
      });
      assert.equal(started.statusCode, 200, started.body);
      await worker.drain();
      const action = json(await get(ctx(), org, `/v1/action/${json(started).actionId}`));
      assert.equal(action.status, 'succeeded', JSON.stringify(action));
      assert.deepEqual(action.result, { purged: 1 });
      assert.equal((await get(ctx(), org, `/v1/asset/${a.objectId}`)).statusCode, 404);
      assert.equal(await ctx().deps.blobs.head(row.blob_key!), null);
      assert.ok((await types(ctx(), org, a.objectId)).includes('asset.purged'));
      const editor = await createTestUser(ctx(), org, { privileges: ['delete'] });
      assert.equal(
        (
          await ctx().inject({
            method: 'POST',
            url: '/v1/asset/purge',
            headers: editor.headers,
            payload: { all: true },
          })
        ).statusCode,
        403,
      );
    });

    it('relates assets: per-item results, duplicates and same-type cycles refused, both sides listed, removal', async () => {
      const [a, b, c] = [await createAsset(ctx(), org), await createAsset(ctx(), org), await createAsset(ctx(), org)];
      const link = (from: string, items: unknown[], method: 'POST' | 'PATCH' = 'POST') =>
        ctx().inject({
          method,
          url: `/v1/asset/${from}/link`,
          headers: org.admin.headers,
          payload: { secondaryIds: items },
        });
      const r1 = json(
        await link(a.objectId, [
          { id: b.objectId, linkType: 'child' },
          { id: b.objectId, linkType: 'child' },
          { id: c.objectId, linkType: 'placed_graphic' },
        ]),
      );
      assert.deepEqual(
        r1.map((r: { status: string; message: string }) => [r.status, r.message]),
        [
          ['success', 'Relationship created successfully'],
          ['error', 'Item already exists'],
          ['success', 'Relationship created successfully'],
        ],
      );
      assert.equal(r1[0].relationshipId, `${a.objectId}-${b.objectId}`);
      const r2 = json(await link(b.objectId, [{ id: c.objectId, linkType: 'child' }]));
      assert.equal(r2[0].status, 'success');
      const cycle = json(
        await link(c.objectId, [
          { id: a.objectId, linkType: 'child' },
          { id: a.objectId, linkType: 'derivative' },
        ]),
      );
      assert.deepEqual(
        cycle.map((r: { message: string }) => r.message),
        ['Circular dependency', 'Relationship created successfully'],
      );
      const listed = json(await get(ctx(), org, `/v1/asset/${b.objectId}/link`));
      assert.equal(listed.length, 2);
      assert.ok(listed.every((l: { customerId: string }) => l.customerId === org.customerId));
      const bad = await link(a.objectId, [{ id: b.objectId }]);
      assert.equal(bad.statusCode, 400);
      assert.equal(
        json(bad).message,
        'Invalid Request: ["Missing Secondary Object ID or Link Type for Relationship 0"]',
      );
      assert.equal((await link(a.objectId, [])).statusCode, 400);
      const removed = json(await link(a.objectId, [{ id: b.objectId }, { id: b.objectId }], 'PATCH'));
      assert.deepEqual(
        removed.map((r: { status: string }) => r.status),
        ['success', 'error'],
      );
      assert.match(removed[1].message, /relationship retrieval failed/);
      const ev = await types(ctx(), org, b.objectId);
      assert.ok(ev.includes('relationship.created') && ev.includes('relationship.deleted'));
      const noRel = await createTestUser(ctx(), org, { privileges: ['upload'] });
      assert.equal(
        (
          await ctx().inject({
            method: 'POST',
            url: `/v1/asset/${a.objectId}/link`,
            headers: noRel.headers,
            payload: { secondaryIds: [{ id: c.objectId, linkType: 'child' }] },
          })
        ).statusCode,
        403,
      );
    });

    it('uploads in parts on local disk: uploadId and one URL per part, completed with the ETags; wrong parts are refused', async () => {
      const content = randomBytes(PART * 2 + 1234);
      const created = await createAsset(ctx(), org, {
        filename: 'big.bin',
        filesize: content.length,
        checksum: createHash('sha256').update(content).digest('hex'),
      });
      assert.ok(created.uploadId);
      assert.equal(created.urls!.length, 3);
      const parts = [];
      for (const { partNumber, url } of created.urls!) {
        const res = await ctx().inject({
          method: 'PUT',
          url: pathOf(url),
          payload: content.subarray((partNumber - 1) * PART, partNumber * PART),
        });
        assert.equal(res.statusCode, 200, res.body);
        parts.push({ partNumber, etag: String(res.headers.etag) });
      }
      const complete = (body: Record<string, unknown>) =>
        ctx().inject({
          method: 'POST',
          url: '/v1/asset/complete',
          headers: org.admin.headers,
          payload: {
            action: 'complete',
            uploadId: created.uploadId,
            fileId: created.fileId,
            filename: 'big.bin',
            filesize: content.length,
            ...body,
          },
        });
      assert.equal((await complete({ parts: parts.slice(0, 2) })).statusCode, 400);
      assert.equal(
        (await complete({ parts: [parts[0], parts[1], { partNumber: 3, etag: '"nope"' }] })).statusCode,
        400,
      );
      const stranger = await createTestUser(ctx(), org, { privileges: ['upload'] });
      assert.equal(
        (
          await ctx().inject({
            method: 'POST',
            url: '/v1/asset/complete',
            headers: stranger.headers,
            payload: { action: 'complete', uploadId: created.uploadId, parts },
          })
        ).statusCode,
        404,
      );
      const done = await complete({ parts });
      assert.equal(done.statusCode, 200, done.body);
      assert.equal(json(done).action, 'Complete');
      assert.equal(json(done).s3Key, `masters/${created.fileId}/big.bin`);
      const link = json(await get(ctx(), org, `/v1/asset/${created.objectId}/content`)).presignedURL;
      const file = await ctx().inject({ method: 'GET', url: pathOf(link) });
      assert.ok(file.rawPayload.equals(content));
      // the parts are gone
      assert.equal(await ctx().deps.blobs.head(`uploads/${org.orgId}/${created.uploadId}/part-1`), null);
    });

    it('cancels a multipart upload: the asset stays without content, parts cleaned up; an abandoned upload expires the same way', async () => {
      const created = await createAsset(ctx(), org, { filename: 'gone.bin', filesize: PART + 10 });
      const first = await ctx().inject({
        method: 'PUT',
        url: pathOf(created.urls![0]!.url),
        payload: randomBytes(PART),
      });
      assert.equal(first.statusCode, 200);
      const cancel = await ctx().inject({
        method: 'POST',
        url: '/v1/asset/complete',
        headers: org.admin.headers,
        payload: { action: 'cancel', uploadId: created.uploadId },
      });
      assert.equal(cancel.statusCode, 200, cancel.body);
      assert.equal(json(cancel).action, 'Cancel');
      assert.equal(await ctx().deps.blobs.head(`uploads/${org.orgId}/${created.uploadId}/part-1`), null);
      // Reference §7.19: a cancelled upload leaves the asset metadata-only.
      const kept = await get(ctx(), org, `/v1/asset/${created.objectId}`);
      assert.equal(kept.statusCode, 200, kept.body);
      assert.equal(json(kept).contentState, 'none');
      assert.equal((await get(ctx(), org, `/v1/asset/${created.objectId}/content`)).statusCode, 404);
      assert.equal(
        (await ctx().inject({ method: 'PUT', url: pathOf(created.urls![1]!.url), payload: Buffer.alloc(10) }))
          .statusCode,
        410,
      );

      const abandoned = await createAsset(ctx(), org, { filename: 'late.bin', filesize: PART + 10 });
      await ctx().inject({ method: 'PUT', url: pathOf(abandoned.urls![0]!.url), payload: randomBytes(PART) });
      ctx().clock.advance(25 * 3600_000);
      await worker.drain();
      assert.equal(
        (
          await ctx()
            .deps.db.selectFrom('assets')
            .select('content_state')
            .where('id', '=', abandoned.objectId)
            .executeTakeFirstOrThrow()
        ).content_state,
        'none',
      );
      assert.equal(await ctx().deps.blobs.head(`uploads/${org.orgId}/${abandoned.uploadId}/part-1`), null);
      const upload = await ctx()
        .deps.db.selectFrom('asset_uploads')
        .select('status')
        .where('id', '=', abandoned.uploadId!)
        .executeTakeFirstOrThrow();
      assert.equal(upload.status, 'expired');
    });

    it("bulk-edits as an Action: progress, per-item errors, events; listed among the caller's actions; cancel", async () => {
      const { id: templateId, attr } = await defaultTemplate(ctx(), org);
      const mine = [
        await createAsset(ctx(), org, {
          metadata: [{ metadataDefinitionId: attr('title'), metadataDefinitionValue: 'old' }],
        }),
        await createAsset(ctx(), org),
      ];
      const bad = await ctx().inject({
        method: 'PATCH',
        url: '/v1/asset',
        headers: org.admin.headers,
        payload: {
          metadataTemplateId: templateId,
          objectIds: [mine[0]!.objectId],
          metadataDocument: [
            {
              metadataDefinitionId: attr('expiration_date'),
              metadataDefinitionValue: 'not a date',
              operation: 'replace',
            },
          ],
        },
      });
      assert.equal(bad.statusCode, 400, bad.body);
      const res = await ctx().inject({
        method: 'PATCH',
        url: '/v1/asset',
        headers: org.admin.headers,
        payload: {
          metadataTemplateId: templateId,
          objectIds: [...mine.map((m) => m.objectId), '0190a4b2-0000-7000-8000-000000000000'],
          metadataDocument: [
            { metadataDefinitionId: attr('title'), metadataDefinitionValue: 'new', operation: 'append' },
            { metadataDefinitionId: attr('creator'), metadataDefinitionValue: 'Ann', operation: 'replace' },
          ],
          securityTemplateIds: [org.defaultTemplateId],
          securityTemplateOp: 'append',
        },
      });
      assert.equal(res.statusCode, 200, res.body);
      const { jobId } = json(res);
      // The request wakes the suite's worker, which may have claimed the job by the time this reads it.
      assert.ok(['queued', 'running'].includes(json(await get(ctx(), org, `/v1/action/${jobId}`)).status));
      await worker.drain();
      const action = json(await get(ctx(), org, `/v1/action/${jobId}`));
      assert.equal(action.status, 'succeeded');
      assert.equal(action.progress, 100);
      assert.deepEqual(action.result, { updated: 2, failed: 1, total: 3 });
      assert.equal(action.errors[0].item, '0190a4b2-0000-7000-8000-000000000000');
      const first = json(await get(ctx(), org, `/v1/asset/${mine[0]!.objectId}`));
      assert.equal(first.metadataDenormalized.title, 'old new');
      assert.equal(first.metadataDenormalized.creator, 'Ann');
      assert.ok((await types(ctx(), org, mine[1]!.objectId)).includes('asset.metadata.updated'));
      const list = json(await get(ctx(), org, '/v1/actions'));
      assert.ok(list.actions.some((a: { id: string }) => a.id === jobId));
      // cancel a queued action (no worker running meanwhile, so it is still queued)
      await worker.stop();
      const again = json(
        await ctx().inject({
          method: 'PATCH',
          url: '/v1/asset',
          headers: org.admin.headers,
          payload: { metadataTemplateId: templateId, objectIds: [mine[0]!.objectId], metadataDocument: [] },
        }),
      );
      const cancelled = await ctx().inject({
        method: 'POST',
        url: `/v1/action/${again.jobId}/cancel`,
        headers: org.admin.headers,
      });
      assert.equal(cancelled.statusCode, 200, cancelled.body);
      assert.equal(json(cancelled).status, 'cancelled');
      worker = assetWorker(ctx());
      await worker.drain();
      assert.equal(json(await get(ctx(), org, `/v1/action/${again.jobId}`)).status, 'cancelled');
      assert.equal(
        (await ctx().inject({ method: 'POST', url: `/v1/action/${again.jobId}/cancel`, headers: org.admin.headers }))
          .statusCode,
        409,
      );
      // another user does not see it
      const other = await createTestUser(ctx(), org, { privileges: ['upload'] });
      assert.equal(
        (await ctx().inject({ method: 'GET', url: `/v1/action/${jobId}`, headers: other.headers })).statusCode,
        404,
      );
    });

    it('bulk edit removes values (operation remove): one keyword of many, a vocabulary value by name, a security template; never the last template', async () => {
      const { id: templateId, attr } = await defaultTemplate(ctx(), org);
      const extra = await ctx().inject({
        method: 'POST',
        url: '/v1/security/template',
        headers: org.admin.headers,
        payload: { templateName: `Partners ${Math.random().toString(36).slice(2, 8)}` },
      });
      assert.ok(extra.statusCode < 300, extra.body);
      const extraId = (json(extra).templateId ?? json(extra).data?.templateId) as string;
      assert.ok(extraId, extra.body);
      const made = async (keywords: string[]) =>
        (
          await createAsset(ctx(), org, {
            metadata: [
              { metadataDefinitionId: attr('keywords'), metadataDefinitionValue: keywords },
              { metadataDefinitionId: attr('usage_rights'), metadataDefinitionValue: { valueName: 'Royalty Free' } },
            ],
            securityTemplateIds: [org.defaultTemplateId, extraId],
          })
        ).objectId;
      const a = await made(['sea', 'draft', 'sunset']);
      const b = await made(['draft']);
      const c = await made(['city']);
      const res = await ctx().inject({
        method: 'PATCH',
        url: '/v1/asset',
        headers: org.admin.headers,
        payload: {
          metadataTemplateId: templateId,
          objectIds: [a, b, c],
          metadataDocument: [
            { metadataDefinitionId: attr('keywords'), metadataDefinitionValue: ['draft'], operation: 'remove' },
            {
              metadataDefinitionId: attr('usage_rights'),
              metadataDefinitionValue: { valueName: 'Royalty Free' },
              operation: 'remove',
            },
          ],
          securityTemplateIds: [extraId],
          securityTemplateOp: 'remove',
        },
      });
      assert.equal(res.statusCode, 200, res.body);
      await worker.drain();
      const action = json(await get(ctx(), org, `/v1/action/${json(res).jobId}`));
      assert.deepEqual(action.result, { updated: 3, failed: 0, total: 3 }, JSON.stringify(action));
      const read = async (id: string) => json(await get(ctx(), org, `/v1/asset/${id}`)).metadataDenormalized;
      assert.deepEqual((await read(a)).keywords, ['sea', 'sunset'], 'the others stay, in order');
      assert.ok(
        [undefined, null, ''].includes((await read(a)).usage_rights) || (await read(a)).usage_rights?.length === 0,
      );
      assert.ok([undefined, null].includes((await read(b)).keywords) || (await read(b)).keywords.length === 0);
      assert.deepEqual((await read(c)).keywords, ['city'], 'an asset without the value keeps its own');
      const security = await ctx()
        .deps.db.selectFrom('asset_security')
        .select(['asset_id', 'template_id'])
        .where('asset_id', 'in', [a, b, c])
        .execute();
      assert.equal(security.length, 3, 'each asset keeps the default template');
      assert.ok(
        security.every((r) => r.template_id === org.defaultTemplateId),
        'the removed template left every asset',
      );

      // Removing the last security template is an item error; the asset keeps it.
      const last = await ctx().inject({
        method: 'PATCH',
        url: '/v1/asset',
        headers: org.admin.headers,
        payload: {
          metadataTemplateId: templateId,
          objectIds: [a],
          securityTemplateIds: [org.defaultTemplateId],
          securityTemplateOp: 'remove',
        },
      });
      assert.equal(last.statusCode, 200, last.body);
      await worker.drain();
      const refused = json(await get(ctx(), org, `/v1/action/${json(last).jobId}`));
      assert.deepEqual(refused.result, { updated: 0, failed: 1, total: 1 });
      assert.match(refused.errors[0].message, /at least one security template/);
      // A value that is not a value of the attribute's vocabulary is a 400 naming it, before any work.
      const bad = await ctx().inject({
        method: 'PATCH',
        url: '/v1/asset',
        headers: org.admin.headers,
        payload: {
          metadataTemplateId: templateId,
          objectIds: [a],
          metadataDocument: [
            {
              metadataDefinitionId: attr('usage_rights'),
              metadataDefinitionValue: { valueName: 'No such' },
              operation: 'remove',
            },
          ],
        },
      });
      assert.equal(bad.statusCode, 400, bad.body);
    });

    it('brings assets in line when metadata definition changes are applied (POST /v1/metadata/apply)', async () => {
      const { attr } = await defaultTemplate(ctx(), org);
      const a = await createAsset(ctx(), org, {
        metadata: [{ metadataDefinitionId: attr('title'), metadataDefinitionValue: 'kept' }],
      });
      await ctx()
        .deps.db.updateTable('assets')
        .set({ metadata_denormalized: '{}' })
        .where('id', '=', a.objectId)
        .execute();
      const res = await ctx().inject({ method: 'POST', url: '/v1/metadata/apply', headers: org.admin.headers });
      assert.equal(res.statusCode, 202, res.body);
      const { startWorkers } = await import('../../workers.ts');
      const all = startWorkers(ctx().deps);
      await all.drain();
      await all.stop();
      assert.deepEqual(json(await get(ctx(), org, `/v1/asset/${a.objectId}`)).metadataDenormalized, { title: 'kept' });
    });

    for (const [method, suffix, body] of [
      ['POST', '/delete', { action: 'delete' }],
      ['GET', '/link', undefined],
      ['POST', '/link', { secondaryIds: [{ id: '0190a4b2-0000-7000-8000-000000000000', linkType: 'child' }] }],
      ['PATCH', '/link', { secondaryIds: [{ id: '0190a4b2-0000-7000-8000-000000000000' }] }],
    ] as const) {
      securitySuite(ctx, `${method} /v1/asset/{id}${suffix}`, {
        method,
        resource: true,
        prepare: async (c, o) => ({ url: `/v1/asset/${(await createAsset(c, o)).objectId}${suffix}`, body }),
      });
    }
    securitySuite(ctx, 'PATCH /v1/asset', {
      method: 'PATCH',
      prepare: async (c, o) => ({
        url: '/v1/asset',
        body: {
          metadataTemplateId: (await defaultTemplate(c, o)).id,
          objectIds: [(await createAsset(c, o)).objectId],
          metadataDocument: [],
        },
      }),
    });
    securitySuite(ctx, 'POST /v1/asset/purge', {
      method: 'POST',
      privileges: ['purge'],
      prepare: () => ({ url: '/v1/asset/purge', body: { all: true } }),
    });
    securitySuite(ctx, 'POST /v1/asset/renditions', {
      method: 'POST',
      privileges: ['content_management'],
      prepare: async (c, o) => ({
        url: '/v1/asset/renditions',
        body: { objectIds: [(await createAsset(c, o)).objectId] },
      }),
    });
    securitySuite(ctx, 'POST /v1/asset/complete', {
      method: 'POST',
      prepare: () => ({
        url: '/v1/asset/complete',
        body: { action: 'cancel', uploadId: '0190a4b2-0000-7000-8000-000000000000' },
      }),
    });
    securitySuite(ctx, 'GET /v1/actions', { method: 'GET', prepare: () => ({ url: '/v1/actions' }) });
  },
  { env: { TESSERA_UPLOAD_PART_SIZE: String(PART) } },
);
