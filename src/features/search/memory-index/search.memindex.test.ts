import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine, json, type TestContext } from '../../../../test/helpers/context.ts';
import { createTestOrg, createTestUser, type TestOrg, type TestUser } from '../../../../test/helpers/factories.ts';
import { createGroup, createTemplate, docInput, indexDocs } from '../../../../test/helpers/search.ts';
import {
  memoryIndexLoaded,
  memoryIndexSettled,
  memoryIndexStats,
  removeDocuments,
  unloadMemoryIndex,
  type SearchDocumentInput,
} from '../index.ts';

/**
 * The embedded engine answers from an in-memory index kept next to FTS5 (search.memindex.ts). These
 * tests change the index between searches — re-indexing, removing, moving documents between
 * security templates, adding members — and check that every answer follows at once, on both
 * engines (PostgreSQL has no in-memory index: the same answers, the SQL way).
 */
interface World {
  org: TestOrg;
  open: string;
  secret: string;
  alice: TestUser;
  bob: TestUser;
  docs: SearchDocumentInput[];
}

async function world(ctx: TestContext): Promise<World> {
  const org = await createTestOrg(ctx);
  const a = await createGroup(ctx, org.orgId);
  const b = await createGroup(ctx, org.orgId);
  const open = await createTemplate(ctx, org.orgId, { [a]: ['view'], [b]: ['view'] });
  const secret = await createTemplate(ctx, org.orgId, { [a]: ['view'] });
  const alice = await createTestUser(ctx, org, { groupIds: [a], privileges: ['collection'] });
  const bob = await createTestUser(ctx, org, { groupIds: [b], privileges: ['collection'] });
  const t0 = 1_700_000_000_000;
  // Forty documents share the word `common` (many times the index's caching threshold in a small database).
  const docs = Array.from({ length: 40 }, (_, i) =>
    docInput(org.orgId, {
      filename: `doc-${String(i).padStart(2, '0')}.jpg`,
      securityTemplateIds: [i % 4 === 3 ? secret : open],
      metadataText: `common ${i % 2 === 0 ? 'red car' : 'car red'} sun${i % 5 === 0 ? 'set' : 'ny'}`,
      createdEpoch: t0 + i,
      updatedEpoch: t0 + i,
      facets: [{ facet: 'Colour', value: i % 2 === 0 ? 'Red' : 'Blue' }],
    }),
  );
  await indexDocs(ctx, docs);
  return { org, open, secret, alice, bob, docs };
}

forEachEngine('search: the in-memory index follows every change', (ctx) => {
  let w: World;
  const search = async (user: TestUser, payload: Record<string, unknown>) => {
    const res = await ctx().inject({
      method: 'POST',
      url: '/v1/search/keyword',
      headers: user.headers,
      payload: { limit: 100, facets: ['Colour'], ...payload },
    });
    assert.equal(res.statusCode, 200, res.body);
    const body = json(res);
    return {
      total: body.totalCount as number,
      names: (body.result as { filename: string }[]).map((r) => r.filename).sort(),
      facets: body.facets as { facet_name: string; values: { key: string; doc_count: number }[] }[],
    };
  };
  const colours = (f: { values: { key: string; doc_count: number }[] }[]) =>
    Object.fromEntries(f[0]?.values.map((v) => [v.key, v.doc_count]) ?? []);

  it('loads nothing before the first search of an organization; that search starts the load and answers the SQL way', async () => {
    w = await world(ctx());
    const stats = () => memoryIndexStats(ctx().deps.db).find((s) => s.orgId === w.org.orgId);
    assert.equal(stats(), undefined);
    const first = await search(w.alice, { searchTerm: ['common'] });
    assert.equal(first.total, 40);
    // The load runs in the background (search.memindex.ts loadMemoryIndex); once over, searches use it.
    await memoryIndexSettled(ctx().deps.db, w.org.orgId);
    assert.equal(memoryIndexLoaded(ctx().deps.db, w.org.orgId), ctx().deps.engine === 'sqlite');
    const again = await search(w.alice, { searchTerm: ['common'] });
    assert.deepEqual(again, first);
    if (ctx().deps.engine === 'sqlite') {
      assert.ok(stats()!.bytes > 0);
      assert.equal(stats()!.searches, 1, 'the second search was answered from the index');
      assert.ok(stats()!.cachedTerms >= 1, 'the common word is cached');
    }
  });

  it('a cached word follows re-indexing: documents that gain it, lose it, or change facet values', async () => {
    assert.equal((await search(w.bob, { searchTerm: ['common'] })).total, 30);
    const lost = { ...w.docs[0]!, metadataText: 'nothing here', updatedEpoch: w.docs[0]!.updatedEpoch + 1 };
    const recoloured = { ...w.docs[2]!, facets: [{ facet: 'Colour', value: 'Green' }] };
    const fresh = docInput(w.org.orgId, {
      filename: 'fresh.jpg',
      securityTemplateIds: [w.open],
      metadataText: 'common and new',
    });
    await indexDocs(ctx(), [lost, recoloured, fresh]);
    const r = await search(w.bob, { searchTerm: ['common'] });
    assert.equal(r.total, 30);
    assert.ok(!r.names.includes('doc-00.jpg'));
    assert.ok(r.names.includes('fresh.jpg'));
    assert.deepEqual(colours(r.facets), { Blue: 10, Red: 18, Green: 1 });
    await indexDocs(ctx(), [w.docs[0]!, w.docs[2]!]);
    const back = await search(w.bob, { searchTerm: ['common'] });
    assert.equal(back.total, 31);
    assert.deepEqual(colours(back.facets), { Blue: 10, Red: 20 });
    w.docs.push(fresh);
  });

  it('removed documents leave the total, the facets and the page at once', async () => {
    const victim = w.docs[4]!;
    await removeDocuments(ctx().deps.db, ctx().deps.engine, [victim.assetId]);
    const r = await search(w.bob, { searchTerm: ['common'] });
    assert.equal(r.total, 30);
    assert.ok(!r.names.includes(victim.filename));
    assert.deepEqual(colours(r.facets), { Blue: 10, Red: 19 });
    assert.equal((await search(w.bob, { searchTerm: ['*'] })).total, 30);
    await indexDocs(ctx(), [victim]);
    assert.equal((await search(w.bob, { searchTerm: ['common'] })).total, 31);
  });

  it('visibility follows a document moving between templates, and into and out of the recycle bin', async () => {
    const moved = { ...w.docs[1]!, securityTemplateIds: [w.secret] };
    const binned = { ...w.docs[5]!, deleted: true };
    await indexDocs(ctx(), [moved, binned]);
    let bob = await search(w.bob, { searchTerm: ['common'] });
    assert.equal(bob.total, 29);
    assert.ok(!bob.names.includes('doc-01.jpg') && !bob.names.includes('doc-05.jpg'));
    const alice = await search(w.alice, { searchTerm: ['common'] });
    assert.equal(alice.total, 40);
    assert.ok(alice.names.includes('doc-01.jpg'));
    assert.equal((await search(w.bob, { searchTerm: ['common'], includeDeleted: true })).total, 30);
    await indexDocs(ctx(), [w.docs[1]!, w.docs[5]!]);
    bob = await search(w.bob, { searchTerm: ['common'] });
    assert.equal(bob.total, 31);
  });

  it('a cached prefix finds words indexed after it was cached', async () => {
    const before = await search(w.bob, { searchTerm: ['sun*'] });
    assert.equal(before.total, 30);
    assert.equal((await search(w.bob, { searchTerm: ['sunset'] })).total, 6);
    await indexDocs(ctx(), [
      docInput(w.org.orgId, { filename: 'flower.jpg', securityTemplateIds: [w.open], metadataText: 'sunflower' }),
    ]);
    const after = await search(w.bob, { searchTerm: ['sun*'] });
    assert.equal(after.total, 31);
    assert.ok(after.names.includes('flower.jpg'));
    assert.equal((await search(w.bob, { searchTerm: ['sunset'] })).total, 6);
  });

  it('phrases match adjacent words in order only, and follow re-indexing', async () => {
    const r = await search(w.bob, { searchTerm: ['"red car"'] });
    // Even documents say "red car" (all open), odd ones "car red" (half of them secret).
    assert.equal(r.total, 20);
    assert.ok(r.names.every((n) => Number(n.slice(4, 6)) % 2 === 0));
    assert.equal((await search(w.bob, { searchTerm: ['"car red"'] })).total, 10);
    assert.equal((await search(w.bob, { searchTerm: ['red', 'car'] })).total, 30);
    await indexDocs(ctx(), [{ ...w.docs[8]!, metadataText: 'common car red' }]);
    assert.equal((await search(w.bob, { searchTerm: ['"red car"'] })).total, 19);
    assert.equal((await search(w.bob, { searchTerm: ['"car red"'] })).total, 11);
    await indexDocs(ctx(), [w.docs[8]!]);
  });

  it('an unloaded organization loads again after its next search, with the same answers', async () => {
    const before = await search(w.alice, { searchTerm: ['common', 'red'], operation: 'OR' });
    unloadMemoryIndex(ctx().deps.db);
    const after = await search(w.alice, { searchTerm: ['common', 'red'], operation: 'OR' });
    assert.deepEqual(after, before);
    await memoryIndexSettled(ctx().deps.db, w.org.orgId);
    assert.deepEqual(await search(w.alice, { searchTerm: ['common', 'red'], operation: 'OR' }), before);
  });

  it('GET collection follows member changes, members moving between templates and removed documents', async () => {
    const c = ctx();
    const file = (i: number) => w.docs[i]!.fileId!;
    const shelf = w.open;
    const res = await c.inject({
      method: 'POST',
      url: '/v1/collection',
      headers: w.alice.headers,
      payload: {
        collectionType: 'secured',
        name: `mem ${Math.random()}`,
        securityTemplateIds: [shelf],
        collectionDocument: [file(0), file(1), file(2), file(3)],
      },
    });
    assert.equal(res.statusCode, 200, res.body);
    const id = json(res).collectionId as string;
    const members = async (u: TestUser) => {
      const got = await c.inject({ method: 'GET', url: `/v1/collection/${id}`, headers: u.headers });
      assert.equal(got.statusCode, 200, got.body);
      return json(got).collectionDocument as string[];
    };
    assert.deepEqual(await members(w.bob), [file(0), file(1), file(2)]);
    assert.deepEqual(await members(w.alice), [file(0), file(1), file(2), file(3)]);
    // Membership changes (in the same millisecond as the read before: the manual clock stands still).
    const patch = await c.inject({
      method: 'PATCH',
      url: `/v1/collections/${id}`,
      headers: w.alice.headers,
      payload: {
        collectionUpdates: [
          { operation: 'remove', fileIds: [file(2)] },
          { operation: 'add', fileIds: [file(6)] },
        ],
      },
    });
    assert.ok(patch.statusCode < 300, patch.body);
    assert.deepEqual(await members(w.bob), [file(0), file(1), file(6)]);
    // A member moves to a template Bob may not view, another is removed from the index.
    await indexDocs(c, [{ ...w.docs[1]!, securityTemplateIds: [w.secret] }]);
    await removeDocuments(c.deps.db, c.deps.engine, [w.docs[6]!.assetId]);
    assert.deepEqual(await members(w.bob), [file(0)]);
    assert.deepEqual(await members(w.alice), [file(0), file(1), file(3)]);
    await indexDocs(c, [w.docs[1]!, w.docs[6]!]);
    assert.deepEqual(await members(w.bob), [file(0), file(1), file(6)]);
  });
});
