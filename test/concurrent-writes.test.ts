// Two requests for the same change at once: the one that made it answers success and tells the
// subscribers once; the other gets the answer it would get a moment later (404 or 409), never a
// 500, a second event or a lost update.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { it } from 'node:test';
import { forEachEngine, json } from './helpers/context.ts';
import { createTestOrg, type TestOrg } from './helpers/factories.ts';
import { createAsset, jpeg, pathOf } from './helpers/assets.ts';

const rnd = () => randomBytes(4).toString('hex');

forEachEngine('concurrent writes of the same change', (ctx) => {
  const send = (org: TestOrg, method: 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
    ctx().inject({ method, url, headers: org.admin.headers, ...(payload === undefined ? {} : { payload }) });
  const events = async (org: TestOrg, type: string) =>
    (
      await ctx()
        .deps.db.selectFrom('events')
        .select('id')
        .where('org_id', '=', org.orgId)
        .where('type', '=', type)
        .execute()
    ).length;
  const statuses = (responses: { statusCode: number }[]) => responses.map((r) => r.statusCode).sort();

  it('two deletes of one collection: one succeeds, one 404, one collection.deleted', async () => {
    const org = await createTestOrg(ctx());
    const id = json(
      await send(org, 'POST', '/v1/collection', { collectionType: 'private', name: `C ${rnd()}` }),
    ).collectionId;
    const both = await Promise.all([
      send(org, 'DELETE', `/v1/collection/${id}`),
      send(org, 'DELETE', `/v1/collection/${id}`),
    ]);
    assert.deepEqual(statuses(both), [200, 404], both.map((r) => r.body).join('\n'));
    assert.equal(await events(org, 'collection.deleted'), 1);
  });

  it('adding to a collection while it is deleted: a 404 or a success before the delete, never a 500', async () => {
    const org = await createTestOrg(ctx());
    const asset = await createAsset(ctx(), org, { filename: 'x.tif', contentPath: 's3://bucket/x.tif' });
    for (let round = 0; round < 5; round++) {
      const id = json(
        await send(org, 'POST', '/v1/collection', { collectionType: 'private', name: `C ${rnd()}` }),
      ).collectionId;
      const [update, remove] = await Promise.all([
        send(org, 'PATCH', `/v1/collections/${id}`, {
          collectionUpdates: { operation: 'add', fileIds: [asset.fileId] },
        }),
        send(org, 'DELETE', `/v1/collection/${id}`),
      ]);
      assert.equal(remove.statusCode, 200, remove.body);
      assert.ok([200, 404, 409].includes(update.statusCode), update.body);
      const left = await ctx()
        .deps.db.selectFrom('collection_members')
        .select('file_id')
        .where('collection_id', '=', id)
        .execute();
      assert.deepEqual(left, []);
    }
  });

  it('two deletes of one story board: one succeeds, one 404, one storyboard.deleted', async () => {
    const org = await createTestOrg(ctx());
    const id = json(await send(org, 'POST', '/v1/storyboards', { title: 'Twice' })).id;
    const both = await Promise.all([
      send(org, 'DELETE', `/v1/storyboards/${id}`),
      send(org, 'DELETE', `/v1/storyboards/${id}`),
    ]);
    assert.deepEqual(statuses(both), [204, 404], both.map((r) => r.body).join('\n'));
    assert.equal(await events(org, 'storyboard.deleted'), 1);
  });

  it('two deletes of one webhook endpoint: one succeeds, one 404, one audit entry', async () => {
    const org = await createTestOrg(ctx());
    const created = json(
      await send(org, 'POST', '/webhooks/endpoint', [
        { description: 'Twice', url: 'http://127.0.0.1:9/hook', eventTypes: ['asset.*'] },
      ]),
    );
    const id = created[0]?.id ?? created.id;
    const both = await Promise.all([
      send(org, 'DELETE', `/webhooks/endpoint/${id}`),
      send(org, 'DELETE', `/webhooks/endpoint/${id}`),
    ]);
    assert.deepEqual(
      statuses(both).map((s) => (s < 300 ? 'ok' : s)),
      ['ok', 404],
      both.map((r) => r.body).join('\n'),
    );
    const audits = await ctx()
      .deps.db.selectFrom('audit_log')
      .select('id')
      .where('org_id', '=', org.orgId)
      .where('action', '=', 'webhook_endpoint.deleted')
      .execute();
    assert.equal(audits.length, 1);
  });

  it('two rotations of one endpoint secret at once: the last key is current and the other is the previous one', async () => {
    const org = await createTestOrg(ctx());
    const created = json(
      await send(org, 'POST', '/webhooks/endpoint', [
        { description: 'Rotate', url: 'http://127.0.0.1:9/hook', eventTypes: ['asset.*'] },
      ]),
    );
    const id = created[0]?.id ?? created.id;
    const both = await Promise.all([
      send(org, 'POST', `/webhooks/endpoint/${id}/secret/rotate`, { overlapSeconds: 3600 }),
      send(org, 'POST', `/webhooks/endpoint/${id}/secret/rotate`, { overlapSeconds: 3600 }),
    ]);
    for (const r of both) assert.equal(r.statusCode, 200, r.body);
    const row = await ctx()
      .deps.db.selectFrom('webhook_endpoints')
      .select(['secret', 'previous_secret'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    const stored = [ctx().deps.keys.decrypt(row.secret), ctx().deps.keys.decrypt(row.previous_secret!)].sort();
    // Each key handed out still signs: receivers configured with either keep verifying during the overlap.
    assert.deepEqual(stored, both.map((r) => json(r).key).sort());
  });

  it('two restores of one asset from the recycle bin: one succeeds, one 409, one asset.restored', async () => {
    const org = await createTestOrg(ctx());
    const asset = await createAsset(ctx(), org, { filename: 'y.tif', contentPath: 's3://bucket/y.tif' });
    assert.equal((await send(org, 'POST', `/v1/asset/${asset.objectId}/delete`, { action: 'delete' })).statusCode, 200);
    const both = await Promise.all([
      send(org, 'POST', `/v1/asset/${asset.objectId}/delete`, { action: 'undelete' }),
      send(org, 'POST', `/v1/asset/${asset.objectId}/delete`, { action: 'undelete' }),
    ]);
    assert.deepEqual(statuses(both), [200, 409], both.map((r) => r.body).join('\n'));
    assert.equal(await events(org, 'asset.restored'), 1);
  });

  it('an upload sent while it is cancelled: one of them wins, and the other says so (never two successes, never a 500); a cancelled upload keeps the record without content', async () => {
    const org = await createTestOrg(ctx());
    const bytes = await jpeg(30, 20);
    const outcomes = new Set<string>();
    for (let round = 0; round < 6; round++) {
      const created = await createAsset(ctx(), org, { filename: 'p.jpg' });
      const [put, cancel] = await Promise.all([
        ctx().inject({
          method: 'PUT',
          url: pathOf(created.url!),
          payload: bytes,
          headers: { 'content-type': 'application/octet-stream' },
        }),
        send(org, 'POST', '/v1/asset/complete', { action: 'cancel', fileId: created.fileId }),
      ]);
      const asset = await ctx()
        .deps.db.selectFrom('assets')
        .select('content_state')
        .where('id', '=', created.objectId)
        .executeTakeFirst();
      if (put.statusCode === 200) {
        assert.equal(cancel.statusCode, 409, cancel.body);
        assert.equal(asset?.content_state, 'available');
      } else {
        assert.ok([409, 410].includes(put.statusCode), put.body);
        assert.equal(cancel.statusCode, 200, cancel.body);
        // An asset exists from its creation (issue 24 item 1): the cancel leaves the record, without content.
        assert.equal(asset?.content_state, 'none');
      }
      outcomes.add(`${put.statusCode}/${cancel.statusCode}`);
    }
    assert.ok(outcomes.size >= 1);
  });

  it('the same upload sent twice at once: one stores it, the other is a 409, and the asset has its content', async () => {
    const org = await createTestOrg(ctx());
    const bytes = await jpeg(32, 20);
    const created = await createAsset(ctx(), org, { filename: 'twice.jpg' });
    const put = () =>
      ctx().inject({
        method: 'PUT',
        url: pathOf(created.url!),
        payload: bytes,
        headers: { 'content-type': 'application/octet-stream' },
      });
    const both = await Promise.all([put(), put()]);
    assert.deepEqual(statuses(both), [200, 409], both.map((r) => r.body).join('\n'));
    const asset = await ctx()
      .deps.db.selectFrom('assets')
      .select(['content_state', 'size'])
      .where('id', '=', created.objectId)
      .executeTakeFirstOrThrow();
    assert.deepEqual(asset, { content_state: 'available', size: bytes.length });
    assert.equal(await events(org, 'asset.created'), 1);
  });

  it('an asset created with a metadata template while the template is deleted: never both (no asset left with a deleted template)', async () => {
    const org = await createTestOrg(ctx());
    const outcomes = new Set<string>();
    for (let round = 0; round < 6; round++) {
      const template = json(await send(org, 'POST', '/v1/metadata/template', { name: `T ${rnd()}`, groupIds: [] }));
      const templateId = template.id ?? template.templateId;
      const [create, remove] = await Promise.all([
        send(org, 'POST', '/v1/asset', {
          metadataTemplateId: templateId,
          metadata: [],
          securityTemplateIds: [org.defaultTemplateId],
        }),
        send(org, 'DELETE', `/v1/metadata/template/${templateId}`),
      ]);
      const pair = `${create.statusCode}/${remove.statusCode}`;
      assert.ok(['200/409', '400/204'].includes(pair), `${pair}: ${create.body} ${remove.body}`);
      outcomes.add(pair);
    }
  });

  it('a new version while the asset goes to the recycle bin: the chain moves whole (never one version live, another in the bin)', async () => {
    const org = await createTestOrg(ctx());
    for (let round = 0; round < 6; round++) {
      const first = await createAsset(ctx(), org, {
        filename: `v${round}.tif`,
        contentPath: `s3://bucket/v${round}.tif`,
      });
      const [version, remove] = await Promise.all([
        send(org, 'POST', '/v1/asset', { originalFileId: first.originalFileId }),
        send(org, 'POST', `/v1/asset/${first.objectId}/delete`, { action: 'delete' }),
      ]);
      assert.equal(remove.statusCode, 200, remove.body);
      assert.ok([200, 409].includes(version.statusCode), version.body);
      const chain = await ctx()
        .deps.db.selectFrom('assets')
        .select('deleted_at')
        .where('original_file_id', '=', first.originalFileId)
        .execute();
      assert.equal(chain.length, version.statusCode === 200 ? 2 : 1);
      assert.ok(
        chain.every((v) => v.deleted_at !== null),
        JSON.stringify(chain),
      );
    }
  });
});
