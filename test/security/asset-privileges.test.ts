import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ALL_PERMISSIONS, ALL_PRIVILEGES, type Privilege } from '../../src/core/authz/catalog.ts';
import { assetWorker, createAsset, jpeg, uploadAsset } from '../helpers/assets.ts';
import { forEachEngine, json } from '../helpers/context.ts';
import { createTestOrg, createTestUser } from '../helpers/factories.ts';
import { createGroup, createTemplate } from '../helpers/permissions.ts';

// Issue 23, defect 3: role privileges are enforced on assets as the permission table says.
forEachEngine('security: role privileges on assets (Delete, Download, Share, Collection, Purge)', (ctx) => {
  const without = (p: Privilege) => ALL_PRIVILEGES.filter((q) => q !== p);

  it('Delete: without the Delete privilege nobody sends an asset to the recycle bin or restores it, whatever the template grants', async () => {
    const org = await createTestOrg(ctx());
    const groupId = await createGroup(ctx(), org);
    const template = await createTemplate(ctx(), org, [
      [groupId, ALL_PERMISSIONS],
      [org.groups.administrators, ALL_PERMISSIONS],
    ]);
    const noDelete = await createTestUser(ctx(), org, { privileges: without('delete'), groupIds: [groupId] });
    const { objectId } = await createAsset(ctx(), org, { securityTemplateIds: [template] });
    const refused = await ctx().inject({
      method: 'POST',
      url: `/v1/asset/${objectId}/delete`,
      headers: noDelete.headers,
      payload: { action: 'delete' },
    });
    assert.equal(refused.statusCode, 403, refused.body);
    assert.match(json(refused).message, /Delete/);
    assert.equal(
      (
        await ctx().inject({
          method: 'POST',
          url: `/v1/asset/${objectId}/delete`,
          headers: org.admin.headers,
          payload: { action: 'delete' },
        })
      ).statusCode,
      200,
    );
    const restore = await ctx().inject({
      method: 'POST',
      url: `/v1/asset/${objectId}/delete`,
      headers: noDelete.headers,
      payload: { action: 'undelete' },
    });
    assert.equal(restore.statusCode, 403, restore.body);
  });

  it('Download: the content link and sharing need the Download privilege; sharing also needs the Share permission', async () => {
    const org = await createTestOrg(ctx());
    const groupId = await createGroup(ctx(), org);
    const viewDownload = await createTemplate(ctx(), org, [
      [groupId, ['view', 'download']],
      [org.groups.administrators, ALL_PERMISSIONS],
    ]);
    const all = await createTemplate(ctx(), org, [
      [groupId, ALL_PERMISSIONS],
      [org.groups.administrators, ALL_PERMISSIONS],
    ]);
    const noDownload = await createTestUser(ctx(), org, { privileges: without('download'), groupIds: [groupId] });
    const downloader = await createTestUser(ctx(), org, { privileges: ['download'], groupIds: [groupId] });
    const a = await uploadAsset(ctx(), org, await jpeg(8, 8), 'a.jpg', { securityTemplateIds: [viewDownload] });
    const b = await uploadAsset(ctx(), org, await jpeg(8, 8), 'b.jpg', { securityTemplateIds: [all] });
    const share = (headers: Record<string, string>, id: string) =>
      ctx().inject({
        method: 'POST',
        url: '/v1/asset/share',
        headers,
        payload: { sender: { name: 'S' }, shareUsers: [{ email: 'r@example.test' }], assets: [id] },
      });
    assert.equal(
      (await ctx().inject({ method: 'GET', url: `/v1/asset/${a.objectId}/content`, headers: noDownload.headers }))
        .statusCode,
      403,
    );
    assert.equal((await share(noDownload.headers, b.objectId)).statusCode, 403);
    assert.equal(
      (await ctx().inject({ method: 'GET', url: `/v1/asset/${a.objectId}/content`, headers: downloader.headers }))
        .statusCode,
      200,
    );
    const noShare = await share(downloader.headers, a.objectId);
    assert.equal(noShare.statusCode, 403, noShare.body);
    assert.match(json(noShare).message, /Share/);
    assert.equal((await share(downloader.headers, b.objectId)).statusCode, 200);
  });

  it('POST /v1/search/collection needs the Collection privilege', async () => {
    const org = await createTestOrg(ctx());
    const name = `only-${Math.random().toString(36).slice(2, 8)}`;
    assert.equal(
      (
        await ctx().inject({
          method: 'POST',
          url: '/v1/collection',
          headers: org.admin.headers,
          payload: { collectionType: 'secured', name, securityTemplateIds: [org.defaultTemplateId] },
        })
      ).statusCode,
      200,
    );
    const viewer = await createTestUser(ctx(), org, { roleId: org.roles.viewer });
    const res = await ctx().inject({
      method: 'POST',
      url: '/v1/search/collection',
      headers: viewer.headers,
      payload: { searchTerm: [name] },
    });
    assert.equal(res.statusCode, 403, res.body);
    assert.doesNotMatch(res.body, new RegExp(name));
  });

  it('purge removes only recycle-bin assets the purger may view and delete; the rest stay', async () => {
    const org = await createTestOrg(ctx());
    const groupId = await createGroup(ctx(), org);
    const mine = await createTemplate(ctx(), org, [
      [groupId, ['view', 'delete']],
      [org.groups.administrators, ALL_PERMISSIONS],
    ]);
    const viewOnly = await createTemplate(ctx(), org, [
      [groupId, ['view']],
      [org.groups.administrators, ALL_PERMISSIONS],
    ]);
    const purger = await createTestUser(ctx(), org, { privileges: ['purge', 'delete'], groupIds: [groupId] });
    const deletable = await createAsset(ctx(), org, { securityTemplateIds: [mine] });
    const viewable = await createAsset(ctx(), org, { securityTemplateIds: [viewOnly] });
    const hidden = await createAsset(ctx(), org);
    for (const a of [deletable, viewable, hidden]) {
      assert.equal(
        (
          await ctx().inject({
            method: 'POST',
            url: `/v1/asset/${a.objectId}/delete`,
            headers: org.admin.headers,
            payload: { action: 'delete' },
          })
        ).statusCode,
        200,
      );
    }
    const worker = assetWorker(ctx());
    try {
      for (const payload of [{ all: true }, { objectIds: [deletable.objectId, viewable.objectId, hidden.objectId] }]) {
        const res = await ctx().inject({ method: 'POST', url: '/v1/asset/purge', headers: purger.headers, payload });
        assert.ok(res.statusCode < 300, res.body);
        await worker.drain();
      }
    } finally {
      await worker.stop();
    }
    const left = async (id: string) =>
      (await ctx().deps.db.selectFrom('assets').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
    assert.equal(await left(deletable.objectId), false);
    assert.equal(await left(viewable.objectId), true);
    assert.equal(await left(hidden.objectId), true);
  });
});
