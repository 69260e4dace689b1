import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine, json, type TestContext } from '../../../../test/helpers/context.ts';
import { createTestOrg, createTestUser, type TestOrg, type TestUser } from '../../../../test/helpers/factories.ts';
import { PERMISSIONS } from '../../../core/authz/catalog.ts';
import { jpeg, uploadAsset } from '../../../../test/helpers/assets.ts';
import { docInput, indexDocs } from '../../../../test/helpers/search.ts';

interface World {
  org: TestOrg;
  alice: TestUser;
  bob: TestUser;
  carol: TestUser;
  /** Documents in the search index (collections and saved searches read the index). */
  assets: { onlyA: string; onlyB: string; both: string };
  /** Real uploaded assets with the same security as `assets` (asset and gallery blocks read assets). */
  real: { onlyA: string; onlyB: string; both: string };
  collectionId: string;
  tplBoth: string;
}

async function apiGroup(ctx: TestContext, org: TestOrg): Promise<string> {
  const res = await ctx.inject({
    method: 'POST',
    url: '/v1/security/groups',
    headers: org.admin.headers,
    payload: { groupName: `g-${Math.random().toString(36).slice(2)}` },
  });
  assert.equal(res.statusCode, 201, res.body);
  return json(res).groupId;
}

async function apiTemplate(ctx: TestContext, org: TestOrg, groups: string[]): Promise<string> {
  const res = await ctx.inject({
    method: 'POST',
    url: '/v1/security/template',
    headers: org.admin.headers,
    payload: {
      templateName: `t-${Math.random().toString(36).slice(2)}`,
      securityDenormalized: groups.map((groupId) => ({ groupId, permissions: [PERMISSIONS.view.id] })),
    },
  });
  assert.equal(res.statusCode, 201, res.body);
  return json(res).templateId;
}

/**
 * Alice (group A) and Bob (group B) both see a secured collection; each sees one asset the other
 * cannot, and both see a third. Carol (no group) sees neither the collection nor any asset.
 */
async function world(ctx: TestContext): Promise<World> {
  const org = await createTestOrg(ctx);
  const groupA = await apiGroup(ctx, org);
  const groupB = await apiGroup(ctx, org);
  const admins = org.groups.administrators;
  const tplA = await apiTemplate(ctx, org, [groupA, admins]);
  const tplB = await apiTemplate(ctx, org, [groupB, admins]);
  const tplBoth = await apiTemplate(ctx, org, [groupA, groupB, admins]);
  const docs = [
    docInput(org.orgId, {
      filename: 'only-a.jpg',
      securityTemplateIds: [tplA],
      record: {
        metadataDenormalized: { title: 'Only A' },
        renditions: { imageThumb: '/v1/x/thumb-a', width: 800, height: 600 },
      },
    }),
    docInput(org.orgId, {
      filename: 'only-b.jpg',
      securityTemplateIds: [tplB],
      record: { metadataDenormalized: { title: 'Only B' }, renditions: {} },
    }),
    docInput(org.orgId, { filename: 'both.jpg', securityTemplateIds: [tplBoth] }),
  ];
  await indexDocs(ctx, docs);
  const created = await ctx.inject({
    method: 'POST',
    url: '/v1/collection',
    headers: org.admin.headers,
    payload: {
      collectionType: 'secured',
      name: `Shared pool ${Math.random()}`,
      securityTemplateIds: [tplBoth],
      collectionDocument: docs.map((d) => d.assetId),
    },
  });
  assert.ok(created.statusCode < 300, created.body);
  const upload = async (name: string, templateId: string) =>
    (await uploadAsset(ctx, org, await jpeg(), name, { securityTemplateIds: [templateId] })).objectId;
  const privileges = ['view_storyboards' as const];
  return {
    org,
    alice: await createTestUser(ctx, org, { privileges, groupIds: [groupA] }),
    bob: await createTestUser(ctx, org, { privileges, groupIds: [groupB] }),
    carol: await createTestUser(ctx, org, { privileges, groupIds: [] }),
    assets: { onlyA: docs[0]!.assetId, onlyB: docs[1]!.assetId, both: docs[2]!.assetId },
    real: {
      onlyA: await upload('only-a.jpg', tplA),
      onlyB: await upload('only-b.jpg', tplB),
      both: await upload('both.jpg', tplBoth),
    },
    collectionId: json(created).collectionId,
    tplBoth,
  };
}

forEachEngine('story boards: each viewer sees their own assets', (ctx) => {
  it('shows the same story board with different collection assets to two users, and omits a collection a third cannot see', async () => {
    const w = await world(ctx());
    const board = await ctx().inject({
      method: 'POST',
      url: '/v1/storyboards',
      headers: w.org.admin.headers,
      payload: {
        title: 'Pool',
        status: 'published',
        blocks: [
          { type: 'heading', text: 'Before' },
          { type: 'collection', collectionId: w.collectionId, limit: 10 },
          { type: 'heading', text: 'After' },
        ],
      },
    });
    assert.equal(board.statusCode, 201, board.body);
    const id = json(board).id;
    const collectionBlock = json(board).blocks[1].id;

    const viewOf = async (user: TestUser) => {
      const res = await ctx().inject({ method: 'GET', url: `/v1/storyboards/${id}/view`, headers: user.headers });
      assert.equal(res.statusCode, 200, res.body);
      return json(res);
    };
    const alice = await viewOf(w.alice);
    const bob = await viewOf(w.bob);
    const carol = await viewOf(w.carol);
    const ids = (view: any) =>
      view.blocks
        .find((b: any) => b.type === 'collection')
        ?.assets.map((a: any) => a.id)
        .sort();

    assert.deepEqual(ids(alice), [w.assets.onlyA, w.assets.both].sort());
    assert.deepEqual(ids(bob), [w.assets.onlyB, w.assets.both].sort());
    assert.equal(alice.blocks[1].total, 2);
    assert.equal(bob.blocks[1].total, 2);
    assert.match(alice.blocks[1].title, /^Shared pool/);
    const aCard = alice.blocks[1].assets.find((a: any) => a.id === w.assets.onlyA);
    assert.deepEqual(aCard, {
      id: w.assets.onlyA,
      filename: 'only-a.jpg',
      title: 'Only A',
      mimeType: 'application/octet-stream',
      width: 800,
      height: 600,
      renditions: { imageThumb: '/v1/x/thumb-a' },
    });
    // Carol cannot see the collection: the block is gone, the rest remains, nothing says why.
    assert.deepEqual(
      carol.blocks.map((b: any) => b.type),
      ['heading', 'heading'],
    );
    assert.ok(!JSON.stringify(carol).includes(w.collectionId));
    // The definitions follow the same rule for those who cannot edit.
    const asCarol = json(await ctx().inject({ method: 'GET', url: `/v1/storyboards/${id}`, headers: w.carol.headers }));
    assert.deepEqual(
      asCarol.blocks.map((b: any) => b.type),
      ['heading', 'heading'],
    );
    const asAlice = json(await ctx().inject({ method: 'GET', url: `/v1/storyboards/${id}`, headers: w.alice.headers }));
    assert.equal(asAlice.blocks[1].id, collectionBlock);
    assert.equal(asAlice.blocks[1].collectionId, w.collectionId);
  });

  it('re-runs a saved-search block with the visibility of each viewer, and omits a saved search a viewer cannot see', async () => {
    const w = await world(ctx());
    const saved = await ctx().inject({
      method: 'POST',
      url: '/v1/saved-searches',
      headers: w.org.admin.headers,
      payload: { name: 'Every JPEG', query: { searchTerm: ['jpg'] }, securityTemplateIds: [w.tplBoth] },
    });
    assert.equal(saved.statusCode, 201, saved.body);
    const savedSearchId = json(saved).id;
    const board = await ctx().inject({
      method: 'POST',
      url: '/v1/storyboards',
      headers: w.org.admin.headers,
      payload: {
        title: 'Search',
        status: 'published',
        blocks: [{ type: 'savedSearch', savedSearchId, limit: 5 }, { type: 'divider' }],
      },
    });
    assert.equal(board.statusCode, 201, board.body);
    const viewOf = async (user: TestUser) =>
      json(await ctx().inject({ method: 'GET', url: `/v1/storyboards/${json(board).id}/view`, headers: user.headers }));
    const alice = await viewOf(w.alice);
    const bob = await viewOf(w.bob);
    assert.equal(alice.blocks[0].title, 'Every JPEG');
    // The search index holds the synthetic documents and, once indexed, the real uploads too.
    assert.deepEqual(
      alice.blocks[0].assets.map((a: any) => a.id).sort(),
      [w.assets.onlyA, w.assets.both, w.real.onlyA, w.real.both].sort(),
    );
    assert.equal(alice.blocks[0].total, 4);
    assert.deepEqual(
      bob.blocks[0].assets.map((a: any) => a.id).sort(),
      [w.assets.onlyB, w.assets.both, w.real.onlyB, w.real.both].sort(),
    );
    const carol = await viewOf(w.carol);
    assert.deepEqual(
      carol.blocks.map((b: any) => b.type),
      ['divider'],
    );
  });

  it('shows asset and gallery blocks and the cover with only the assets each viewer may see', async () => {
    const w = await world(ctx());
    const { onlyA, onlyB, both } = w.real;
    const res = await ctx().inject({
      method: 'POST',
      url: '/v1/storyboards',
      headers: w.org.admin.headers,
      payload: {
        title: 'Assets',
        status: 'published',
        coverAssetId: onlyA,
        blocks: [
          { type: 'asset', assetId: onlyA, caption: 'A only' },
          { type: 'gallery', assetIds: [onlyB, both, onlyA], caption: 'All three' },
          { type: 'asset', assetId: both },
        ],
      },
    });
    assert.equal(res.statusCode, 201, res.body);
    const id = json(res).id;
    const viewOf = async (user: TestUser) =>
      json(await ctx().inject({ method: 'GET', url: `/v1/storyboards/${id}/view`, headers: user.headers }));
    const summary = (view: any) =>
      view.blocks.map((b: any) => [b.type, b.asset ? b.asset.id : b.assets.map((a: any) => a.id)]);
    const alice = await viewOf(w.alice);
    assert.equal(alice.cover.id, onlyA);
    assert.deepEqual(summary(alice), [
      ['asset', onlyA],
      ['gallery', [both, onlyA]],
      ['asset', both],
    ]);
    assert.equal(alice.blocks[0].caption, 'A only');
    const bob = await viewOf(w.bob);
    assert.equal(bob.cover, null);
    assert.deepEqual(summary(bob), [
      ['gallery', [onlyB, both]],
      ['asset', both],
    ]);
    const carol = await viewOf(w.carol);
    assert.deepEqual(carol.blocks, []);
    assert.equal(carol.cover, null);
    // An editor may not place an asset they cannot see.
    const editor = await createTestUser(ctx(), w.org, {
      privileges: ['view_storyboards', 'storyboard_management'],
      groupIds: [],
    });
    const own = json(
      await ctx().inject({
        method: 'POST',
        url: '/v1/storyboards',
        headers: editor.headers,
        payload: { title: 'Mine' },
      }),
    );
    const bad = await ctx().inject({
      method: 'POST',
      url: `/v1/storyboards/${own.id}/blocks`,
      headers: editor.headers,
      payload: { block: { type: 'gallery', assetIds: [onlyA] } },
    });
    assert.equal(bad.statusCode, 400);
    assert.equal(json(bad).details[0].field, 'body.block.assetIds.0');
  });

  it('refuses a collection block naming a collection the editor cannot see, like a missing one', async () => {
    const w = await world(ctx());
    const editor = await createTestUser(ctx(), w.org, {
      privileges: ['view_storyboards', 'storyboard_management'],
      groupIds: [],
    });
    for (const collectionId of [w.collectionId, '0190a0a0-0000-7000-8000-00000000abcd']) {
      const res = await ctx().inject({
        method: 'POST',
        url: '/v1/storyboards',
        headers: editor.headers,
        payload: { title: 'x', blocks: [{ type: 'collection', collectionId }] },
      });
      assert.equal(res.statusCode, 400);
      assert.deepEqual(json(res).details, [{ field: 'body.blocks.0.collectionId', message: 'collection not found' }]);
    }
  });

  it('a missing asset and a missing collection in one request: one 400, and no check left failing unheard', async () => {
    const w = await world(ctx());
    const unknown = '0190a0a0-0000-7000-8000-00000000abcd';
    const blocks = [
      { type: 'asset', assetId: unknown },
      { type: 'collection', collectionId: unknown },
      { type: 'savedSearch', savedSearchId: unknown },
    ];
    const res = await ctx().inject({
      method: 'POST',
      url: '/v1/storyboards',
      headers: w.org.admin.headers,
      payload: { title: 'x', blocks },
    });
    assert.equal(res.statusCode, 400, res.body);
    // The first failure in block order is named.
    assert.deepEqual(json(res).details, [{ field: 'body.blocks.0.assetId', message: 'asset not found' }]);
    // The collection and saved-search checks had settled by then: a rejection still running after
    // the answer would be unhandled, which ends a server (and fails this test file).
    await new Promise((resolve) => setTimeout(resolve, 50));
    const after = await ctx().inject({
      method: 'POST',
      url: '/v1/storyboards',
      headers: w.org.admin.headers,
      payload: { title: 'fine' },
    });
    assert.equal(after.statusCode, 201, after.body);
  });
});
