import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine, json } from '../helpers/context.ts';
import { createTestOrg } from '../helpers/factories.ts';
import { createTemplate, holder } from '../helpers/permissions.ts';
import { assetWorker, createAsset, defaultTemplate } from '../helpers/assets.ts';

// Issue 23, defect 2: changing an asset's security templates needs Apply Security Template on it,
// and may add only templates that grant nothing beyond what the caller holds on it.
forEachEngine('security: Apply Security Template guards every change of securityTemplateIds', (ctx) => {
  const templatesOf = async (headers: Record<string, string>, id: string) => {
    const res = await ctx().inject({ method: 'GET', url: `/v1/asset/${id}`, headers });
    assert.equal(res.statusCode, 200, res.body);
    return (json(res).securityTemplateIds as string[]).sort();
  };

  it('refuses an editor with only View + Edit Metadata on both PATCH routes and in a new version; the same templates sent back still work', async () => {
    const org = await createTestOrg(ctx());
    const editor = await holder(ctx(), org, ['upload'], ['view', 'edit_metadata']);
    const everything = await createTemplate(ctx(), org, [
      [editor.groupId, ['view', 'edit_metadata', 'download', 'delete', 'share']],
    ]);
    const asset = await createAsset(ctx(), org, { securityTemplateIds: [editor.templateId] });
    for (const url of [`/v1/asset/${asset.objectId}`, `/v1/assets/asset/${asset.objectId}`]) {
      for (const securityTemplateIds of [[editor.templateId, everything], [everything], [org.defaultTemplateId]]) {
        const res = await ctx().inject({
          method: 'PATCH',
          url,
          headers: editor.user.headers,
          payload: { securityTemplateIds },
        });
        assert.equal(res.statusCode, 403, `${url} ${res.body}`);
        assert.match(json(res).message, /Apply Security Template/);
      }
      const same = await ctx().inject({
        method: 'PATCH',
        url,
        headers: editor.user.headers,
        payload: { securityTemplateIds: [editor.templateId], metadata: [] },
      });
      assert.equal(same.statusCode, 200, same.body);
    }
    const version = await ctx().inject({
      method: 'POST',
      url: '/v1/asset',
      headers: editor.user.headers,
      payload: { originalFileId: asset.originalFileId, securityTemplateIds: [everything] },
    });
    assert.equal(version.statusCode, 403, version.body);
    assert.deepEqual(await templatesOf(org.admin.headers, asset.objectId), [editor.templateId]);
  });

  it('lets a holder of Apply Security Template add templates within what they hold, never beyond (to themselves or another group)', async () => {
    const org = await createTestOrg(ctx());
    const applier = await holder(ctx(), org, ['upload'], ['view', 'edit_metadata', 'apply_security_template']);
    const asset = await createAsset(ctx(), org, { securityTemplateIds: [applier.templateId] });
    const url = `/v1/asset/${asset.objectId}`;
    const selfDelete = await createTemplate(ctx(), org, [[applier.groupId, ['view', 'delete']]]);
    const othersDownload = await createTemplate(ctx(), org, [[org.groups.everyone, ['view', 'download']]]);
    const within = await createTemplate(ctx(), org, [[org.groups.everyone, ['view']]]);
    for (const extra of [selfDelete, othersDownload]) {
      const res = await ctx().inject({
        method: 'PATCH',
        url,
        headers: applier.user.headers,
        payload: { securityTemplateIds: [applier.templateId, extra] },
      });
      assert.equal(res.statusCode, 403, res.body);
      assert.match(json(res).message, /Delete|Download/);
    }
    const ok = await ctx().inject({
      method: 'PATCH',
      url,
      headers: applier.user.headers,
      payload: { securityTemplateIds: [applier.templateId, within] },
    });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.deepEqual(await templatesOf(org.admin.headers, asset.objectId), [applier.templateId, within].sort());
    // The administrator holds everything on Default, so may apply any template.
    const admin = await ctx().inject({
      method: 'PATCH',
      url: `/v1/asset/${(await createAsset(ctx(), org)).objectId}`,
      headers: org.admin.headers,
      payload: { securityTemplateIds: [org.defaultTemplateId, selfDelete, othersDownload] },
    });
    assert.equal(admin.statusCode, 200, admin.body);
  });

  it('bulk edit: refused up front without Apply Security Template anywhere, and per asset beyond what the caller holds', async () => {
    const org = await createTestOrg(ctx());
    const { id: metadataTemplateId } = await defaultTemplate(ctx(), org);
    const editor = await holder(ctx(), org, ['upload'], ['view', 'edit_metadata']);
    const grant = await createTemplate(ctx(), org, [[editor.groupId, ['view', 'download', 'delete']]]);
    const asset = await createAsset(ctx(), org, { securityTemplateIds: [editor.templateId] });
    for (const securityTemplateOp of ['append', 'replace']) {
      const res = await ctx().inject({
        method: 'PATCH',
        url: '/v1/asset',
        headers: editor.user.headers,
        payload: {
          metadataTemplateId,
          objectIds: [asset.objectId],
          metadataDocument: [],
          securityTemplateIds: [grant],
          securityTemplateOp,
        },
      });
      assert.equal(res.statusCode, 403, res.body);
    }
    // Someone holding Apply Security Template on one asset cannot use it to widen another.
    const applier = await holder(ctx(), org, ['upload'], ['view', 'edit_metadata', 'apply_security_template']);
    const theirs = await createAsset(ctx(), org, { securityTemplateIds: [applier.templateId] });
    const shared = await createTemplate(ctx(), org, [[applier.groupId, ['view', 'edit_metadata']]]);
    const notTheirs = await createAsset(ctx(), org, { securityTemplateIds: [shared] });
    const widen = await createTemplate(ctx(), org, [[applier.groupId, ['view', 'delete']]]);
    const worker = assetWorker(ctx());
    try {
      const started = await ctx().inject({
        method: 'PATCH',
        url: '/v1/asset',
        headers: applier.user.headers,
        payload: {
          metadataTemplateId,
          objectIds: [theirs.objectId, notTheirs.objectId],
          metadataDocument: [],
          securityTemplateIds: [widen],
          securityTemplateOp: 'append',
        },
      });
      assert.equal(started.statusCode, 200, started.body);
      await worker.drain();
      const action = json(
        await ctx().inject({ method: 'GET', url: `/v1/action/${json(started).jobId}`, headers: applier.user.headers }),
      );
      assert.deepEqual(action.result, { updated: 0, failed: 2, total: 2 }, JSON.stringify(action));
      assert.deepEqual(await templatesOf(org.admin.headers, theirs.objectId), [applier.templateId]);
      assert.deepEqual(await templatesOf(applier.user.headers, notTheirs.objectId), [shared]);
    } finally {
      await worker.stop();
    }
  });
});
