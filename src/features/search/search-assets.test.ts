import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine, json } from '../../../test/helpers/context.ts';
import { createTestOrg, createTestUser } from '../../../test/helpers/factories.ts';
import { jpeg, uploadAsset } from '../../../test/helpers/assets.ts';
import { createGroup, createTemplate } from '../../../test/helpers/search.ts';

forEachEngine('search over real assets', (ctx) => {
  it('finds an asset as soon as it is written; edits, security changes and deletes follow at once', async () => {
    const c = ctx();
    const org = await createTestOrg(c);
    const g = await createGroup(c, org.orgId);
    const team = await createTemplate(c, org.orgId, { [g]: ['view'] });
    const viewer = await createTestUser(c, org, { groupIds: [g, org.groups.everyone], privileges: ['collection'] });
    const search = async (user: { headers: Record<string, string> }, body: unknown) =>
      json(await c.inject({ method: 'POST', url: '/v1/search/keyword', headers: user.headers, payload: body }));

    const image = await jpeg(16, 12);
    const a = await uploadAsset(c, org, image, 'harbour-sunrise.jpg', { securityTemplateIds: [team] });
    const b = await uploadAsset(c, org, image, 'harbour-night.jpg');
    let res = await search(org.admin, { searchTerm: ['harbour'] });
    // The administrator views through Default only: the team asset is not theirs to see.
    assert.deepEqual(
      res.result.map((r: { objectId: string }) => r.objectId),
      [b.objectId],
    );
    res = await search(viewer, { searchTerm: ['harbour'] });
    assert.deepEqual(
      res.result.map((r: { objectId: string }) => r.objectId).sort(),
      [a.objectId, b.objectId].sort(),
      'Everyone views Default; the viewer also views the team template',
    );
    assert.equal(res.result.find((r: { objectId: string }) => r.objectId === a.objectId).fileId, a.fileId);

    c.clock.advance(1000);
    const patch = await c.inject({
      method: 'PATCH',
      url: `/v1/assets/asset/${b.objectId}`,
      headers: org.admin.headers,
      payload: {
        metadata: [
          { name: 'Title', value: 'Lighthouse at dusk' },
          { name: 'Creator', value: 'Ada Harbourmaster' },
        ],
        securityTemplateIds: [team],
      },
    });
    assert.equal(patch.statusCode, 200, patch.body);
    const facets = (await search(viewer, { searchTerm: ['lighthouse'] })).facets;
    assert.deepEqual(
      facets.find((f: { facet_name: string }) => f.facet_name === 'Creator')?.values,
      [{ key: 'Ada Harbourmaster', doc_count: 1 }],
      'facetable attributes are facets',
    );
    assert.equal((await search(viewer, { searchTerm: ['Creator: Ada Harbourmaster'] })).totalCount, 1);
    const sorted = await search(viewer, {
      searchTerm: ['harbour'],
      sortBy: [{ metadataDefinitionSearchField: 'title', order: 'asc' }],
    });
    assert.equal(sorted.result[0].objectId, b.objectId, 'sortable attribute first, assets without it last');
    assert.equal(
      (await search(viewer, { searchTerm: ['lighthouse'] })).totalCount,
      1,
      'metadata text is searchable at once',
    );
    assert.equal(
      (await search(org.admin, { searchTerm: ['harbour'] })).totalCount,
      0,
      'the security change hides it from the administrator at once',
    );

    c.clock.advance(1000);
    const del = await c.inject({
      method: 'POST',
      url: `/v1/asset/${a.objectId}/delete`,
      headers: org.admin.headers,
      payload: { action: 'delete', deleteType: 'full' },
    });
    if (del.statusCode === 200) {
      assert.equal((await search(viewer, { searchTerm: ['sunrise'] })).totalCount, 0);
      assert.equal((await search(viewer, { searchTerm: ['sunrise'], includeDeleted: true })).totalCount, 1);
    }

    // The reference's training round trip on real assets.
    const found = await search(viewer, { searchTerm: ['harbour'], includeDeleted: true });
    const coll = await c.inject({
      method: 'POST',
      url: '/v1/collection',
      headers: viewer.headers,
      payload: {
        collectionType: 'private',
        name: 'Harbour',
        collectionDocument: found.result.map((r: { objectId: string }) => r.objectId),
        metadataDocument: '[]',
      },
    });
    assert.equal(coll.statusCode, 200, coll.body);
    const got = json(
      await c.inject({ method: 'GET', url: `/v1/collection/${json(coll).collectionId}`, headers: viewer.headers }),
    );
    assert.ok(got.collectionDocument.includes(b.fileId));
  });
});

forEachEngine('scans over real assets while they change', (ctx) => {
  it('walks every asset once while others are uploaded, edited and deleted through the API', async () => {
    const c = ctx();
    const org = await createTestOrg(c);
    const image = await jpeg(8, 8);
    const assets = [];
    for (let i = 0; i < 12; i++) {
      c.clock.advance(5);
      assets.push(await uploadAsset(c, org, image, `walk-${i}.jpg`));
    }
    // Keys that never change (index order, createdEpoch); see docs/search.md for lastUpdatedEpoch and filename.
    for (const sortBy of [undefined, [{ metadataDefinitionSearchField: 'createdEpoch', order: 'desc' }]]) {
      const seen: string[] = [];
      const deleted = new Set<string>();
      let cursor: string | null = null;
      let round = 0;
      do {
        const res = await c.inject({
          method: 'POST',
          url: '/v1/asset/scan',
          headers: org.admin.headers,
          payload: { searchTerm: ['walk'], limit: 3, ...(cursor ? { cursor } : {}), ...(sortBy ? { sortBy } : {}) },
        });
        assert.equal(res.statusCode, 200, res.body);
        seen.push(...json(res).result.map((r: { objectId: string }) => r.objectId));
        cursor = json(res).cursor;
        round += 1;
        // Between pages: edit one asset (it moves in lastUpdatedEpoch order), delete one, upload one.
        c.clock.advance(1000);
        const edited = assets[round]!;
        const patch = await c.inject({
          method: 'PATCH',
          url: `/v1/assets/asset/${edited.objectId}`,
          headers: org.admin.headers,
          payload: { metadata: [{ name: 'Title', value: `walk edit ${round}` }] },
        });
        assert.equal(patch.statusCode, 200, patch.body);
        const victim = assets[11 - round]!;
        if (!deleted.has(victim.objectId) && round < 4) {
          const del = await c.inject({
            method: 'POST',
            url: `/v1/asset/${victim.objectId}/delete`,
            headers: org.admin.headers,
            payload: { action: 'delete', deleteType: 'full' },
          });
          assert.equal(del.statusCode, 200, del.body);
          deleted.add(victim.objectId);
        }
        await uploadAsset(c, org, image, `walk-late-${sortBy ? 's' : 'i'}-${round}.jpg`);
      } while (cursor);
      assert.equal(new Set(seen).size, seen.length, 'no duplicates');
      for (const a of assets)
        if (!deleted.has(a.objectId))
          assert.ok(seen.includes(a.objectId), `${a.objectId} was never deleted, so the scan reaches it`);
      for (const id of deleted) {
        const restore = await c.inject({
          method: 'POST',
          url: `/v1/asset/${id}/delete`,
          headers: org.admin.headers,
          payload: { action: 'undelete' },
        });
        assert.equal(restore.statusCode, 200, restore.body);
      }
    }
  });
});
