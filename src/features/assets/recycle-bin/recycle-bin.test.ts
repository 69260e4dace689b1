import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine, json, type TestContext } from '../../../../test/helpers/context.ts';
import { createTestOrg, createTestUser, type TestUser } from '../../../../test/helpers/factories.ts';
import { securitySuite } from '../../../../test/helpers/security.ts';
import { PERMISSIONS } from '../../../core/authz/catalog.ts';
import type { Worker } from '../../../core/jobs/worker.ts';
import type { BlobStore } from '../../../core/storage/blob-store.ts';
import { assetWorker, createAsset, jpeg, uploadAsset } from '../../../../test/helpers/assets.ts';
import { runRenditions } from '../renditions/job/renditions.ts';

const remove = async (ctx: TestContext, user: TestUser, id: string, action: 'delete' | 'undelete' = 'delete') => {
  const res = await ctx.inject({
    method: 'POST',
    url: `/v1/asset/${id}/delete`,
    headers: user.headers,
    payload: { action },
  });
  assert.equal(res.statusCode, 200, res.body);
};
const list = async (ctx: TestContext, user: TestUser, query = '') => {
  const res = await ctx.inject({ method: 'GET', url: `/v1/asset/recycle-bin${query}`, headers: user.headers });
  assert.equal(res.statusCode, 200, res.body);
  return json(res) as {
    items: {
      objectId: string;
      fileId: string;
      originalFileId: string;
      filename: string;
      versionNumber: number;
      metadataDeletedEpoch: number;
      deletedBy: string | null;
      deletedByName: string | null;
      mayRestore: boolean;
      mayPurge: boolean;
    }[];
    nextCursor: string | null;
    purge: { allowed: boolean; operation: string };
  };
};

forEachEngine('assets: recycle-bin listing', (ctx) => {
  let worker: Worker;
  before(async () => {
    worker = assetWorker(ctx());
  });
  after(async () => worker.stop());

  it('lists deleted assets newest deletion first, with who deleted them and when; restored and live assets are not listed', async () => {
    const org = await createTestOrg(ctx());
    const peer = await createTestUser(ctx(), org, {
      roleId: org.roles.administrator,
      groupIds: [org.groups.administrators, org.groups.everyone],
    });
    const a = await uploadAsset(ctx(), org, await jpeg(20, 20), 'a.jpg');
    const b = await createAsset(ctx(), org);
    const c = await createAsset(ctx(), org);
    await createAsset(ctx(), org); // stays live
    const t0 = ctx().clock.now();
    await remove(ctx(), org.admin, a.objectId);
    ctx().clock.advance(1000);
    await remove(ctx(), peer, b.objectId);
    ctx().clock.advance(1000);
    await remove(ctx(), org.admin, c.objectId);
    await remove(ctx(), org.admin, c.objectId, 'undelete');
    const page = await list(ctx(), org.admin);
    assert.deepEqual(
      page.items.map((i) => i.objectId),
      [b.objectId, a.objectId],
    );
    assert.equal(page.items[0]!.deletedBy, peer.userId);
    assert.equal(page.items[0]!.deletedByName, peer.username);
    assert.equal(page.items[0]!.metadataDeletedEpoch, t0 + 1000);
    assert.equal(page.items[1]!.deletedBy, org.admin.userId);
    assert.equal(page.items[1]!.metadataDeletedEpoch, t0);
    assert.equal(page.items[1]!.filename, 'a.jpg');
    assert.equal(page.items[1]!.fileId, a.fileId);
    assert.equal(page.nextCursor, null);
    assert.deepEqual(page.purge, { allowed: true, operation: 'POST /v1/asset/purge' });
    assert.ok(page.items.every((i) => i.mayRestore && i.mayPurge));
  });

  it('lists one row per version chain (its current version), trailing slash and JSON content type accepted', async () => {
    const org = await createTestOrg(ctx());
    const v1 = await uploadAsset(ctx(), org, await jpeg(20, 20), 'v.jpg');
    const v2 = await uploadAsset(ctx(), org, await jpeg(30, 30), 'v2.jpg', { originalFileId: v1.originalFileId });
    await remove(ctx(), org.admin, v1.objectId);
    const res = await ctx().inject({
      method: 'GET',
      url: '/v1/asset/recycle-bin/',
      headers: { ...org.admin.headers, 'content-type': 'application/json' },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(
      json(res).items.map((i: { objectId: string; versionNumber: number }) => [i.objectId, i.versionNumber]),
      [[v2.objectId, 2]],
    );
  });

  it('pages with a keyset cursor: every deleted asset once, no duplicates, also when assets are deleted during the walk', async () => {
    const org = await createTestOrg(ctx());
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      const x = await createAsset(ctx(), org);
      ids.push(x.objectId);
      // Two deletions share each timestamp, so the id breaks ties.
      if (i % 2 === 0) ctx().clock.advance(10);
      await remove(ctx(), org.admin, x.objectId);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await list(ctx(), org.admin, `?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      assert.ok(page.items.length <= 3);
      seen.push(...page.items.map((i) => i.objectId));
      if (pages === 0) {
        // A deletion newer than the walk's position does not reappear in later pages.
        ctx().clock.advance(10);
        await remove(ctx(), org.admin, (await createAsset(ctx(), org)).objectId);
      }
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    assert.equal(pages, 3);
    assert.equal(new Set(seen).size, seen.length);
    assert.deepEqual([...seen].sort(), [...ids].sort());
  });

  it('shows each caller only the deleted assets they may view; no Purge privilege says so', async () => {
    const org = await createTestOrg(ctx());
    const tpl = await ctx().inject({
      method: 'POST',
      url: '/v1/security/template',
      headers: org.admin.headers,
      payload: {
        templateName: `admins-${Math.random()}`,
        securityDenormalized: [
          { groupId: org.groups.administrators, permissions: [PERMISSIONS.view.id, PERMISSIONS.delete.id] },
        ],
      },
    });
    assert.equal(tpl.statusCode, 201, tpl.body);
    const secret = await createAsset(ctx(), org, { securityTemplateIds: [json(tpl).templateId] });
    const open = await createAsset(ctx(), org);
    await remove(ctx(), org.admin, secret.objectId);
    await remove(ctx(), org.admin, open.objectId);
    assert.equal((await list(ctx(), org.admin)).items.length, 2);
    const viewer = await createTestUser(ctx(), org, { privileges: [] });
    const seen = await list(ctx(), viewer);
    assert.deepEqual(
      seen.items.map((i) => i.objectId),
      [open.objectId],
    );
    assert.equal(seen.purge.allowed, false);
    // What the viewer may do with it is said in the list (a client shows it before the click).
    assert.equal(seen.items[0]!.mayPurge, false);
    assert.equal(seen.items[0]!.mayRestore, false);
    assert.equal(
      (
        await ctx().inject({
          method: 'POST',
          url: `/v1/asset/${open.objectId}/delete`,
          headers: viewer.headers,
          payload: { action: 'undelete' },
        })
      ).statusCode,
      403,
    );
    const outsider = await createTestUser(ctx(), org, { privileges: [], groupIds: [] });
    assert.deepEqual((await list(ctx(), outsider)).items, []);
    const other = await createTestOrg(ctx());
    assert.deepEqual((await list(ctx(), other.admin)).items, []);
  });

  it('hands its objectIds to the administrator purge; purged assets leave the list', async () => {
    const org = await createTestOrg(ctx());
    const keep = await uploadAsset(ctx(), org, await jpeg(20, 20), 'keep.jpg');
    const gone = await uploadAsset(ctx(), org, await jpeg(22, 22), 'gone.jpg');
    await remove(ctx(), org.admin, keep.objectId);
    await remove(ctx(), org.admin, gone.objectId);
    const before = await list(ctx(), org.admin);
    const target = before.items.find((i) => i.objectId === gone.objectId)!;
    const purge = await ctx().inject({
      method: 'POST',
      url: '/v1/asset/purge',
      headers: org.admin.headers,
      payload: { objectIds: [target.objectId] },
    });
    assert.equal(purge.statusCode, 200, purge.body);
    await worker.drain();
    const action = json(
      await ctx().inject({ method: 'GET', url: `/v1/action/${json(purge).actionId}`, headers: org.admin.headers }),
    );
    assert.equal(action.status, 'succeeded', JSON.stringify(action));
    assert.deepEqual(
      (await list(ctx(), org.admin)).items.map((i) => i.objectId),
      [keep.objectId],
    );
  });

  it('a purge that lands while renditions are being written leaves no rendition file behind', async () => {
    const org = await createTestOrg(ctx());
    const asset = await uploadAsset(ctx(), org, await jpeg(31, 17), 'racing.jpg');
    await worker.drain();
    const row = await ctx()
      .deps.db.selectFrom('assets')
      .select(['renditions'])
      .where('id', '=', asset.objectId)
      .executeTakeFirstOrThrow();
    // Four files; `fpo` names the 1000-pixel rendition's file again (issue 24 item 4).
    const keys = [
      ...new Set(Object.values(JSON.parse(row.renditions) as Record<string, { key: string }>).map((r) => r.key)),
    ];
    assert.equal(keys.length, 4);
    await remove(ctx(), org.admin, asset.objectId);
    // The renditions job is re-run; as it writes its first file, the purge runs to the end.
    let purged = false;
    const blobs: BlobStore = {
      ...ctx().deps.blobs,
      async put(key, body, options) {
        if (!purged && key.startsWith('renditions/')) {
          purged = true;
          const purge = await ctx().inject({
            method: 'POST',
            url: '/v1/asset/purge',
            headers: org.admin.headers,
            payload: { objectIds: [asset.objectId] },
          });
          assert.equal(purge.statusCode, 200, purge.body);
          await worker.drain();
          const action = json(
            await ctx().inject({
              method: 'GET',
              url: `/v1/action/${json(purge).actionId}`,
              headers: org.admin.headers,
            }),
          );
          assert.equal(action.status, 'succeeded', JSON.stringify(action));
        }
        return ctx().deps.blobs.put(key, body, options);
      },
    };
    await runRenditions({ ...ctx().deps, blobs }, { assetId: asset.objectId, force: true });
    assert.ok(purged);
    for (const key of keys) assert.equal(await ctx().deps.blobs.head(key), null, key);
  });

  it('refuses a bad cursor or page size with 400 naming the field', async () => {
    const org = await createTestOrg(ctx());
    for (const [query, field] of [
      ['?cursor=nonsense', 'query.cursor'],
      [`?cursor=${Buffer.from('["x","y"]').toString('base64url')}`, 'query.cursor'],
      ['?limit=101', 'query.limit'],
      ['?limit=0', 'query.limit'],
    ] as const) {
      const res = await ctx().inject({
        method: 'GET',
        url: `/v1/asset/recycle-bin${query}`,
        headers: org.admin.headers,
      });
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(json(res).details[0].field, field, res.body);
    }
  });

  securitySuite(ctx, 'GET /v1/asset/recycle-bin', { method: 'GET', prepare: () => ({ url: '/v1/asset/recycle-bin' }) });
});
