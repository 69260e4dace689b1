import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { it } from 'node:test';
import { forEachEngine, json, type TestContext } from '../../../../test/helpers/context.ts';
import { createTestOrg, createTestUser, type TestOrg, type TestUser } from '../../../../test/helpers/factories.ts';
import { createGroup, createTemplate, docInput, indexDocs } from '../../../../test/helpers/search.ts';
import { freePort } from '../../../../test/helpers/net.ts';
import { spawnTessera, tesseraEnv } from '../../../../test/helpers/tessera-process.ts';
import {
  loadMemoryIndex,
  memoryIndexLoaded,
  memoryIndexSettled,
  memoryIndexStats,
  startSearchIndexWarmup,
  removeDocuments,
  unloadMemoryIndex,
} from '../index.ts';
import { writeTemplatePermissions } from '../../../core/authz/authorize.ts';
import { BOUNDED_LIMITS } from '../query/search.bounded.ts';
import { CATCHUP_LIMITS, loadedIndex } from './search.memindex.ts';
import { readSnapshot, snapshotDir, writeSnapshot } from './search.snapshot.ts';

/**
 * Issue 28 item 4 / issue 30 item 3: no search waits for the in-memory index (SQLite). It loads in
 * the background — at the start of the processes that answer searches, or after an organization's
 * first search — and until it is loaded searches take the SQL path, with the same answers.
 * PostgreSQL has no in-memory index: the same searches, the SQL way, and nothing loads at start.
 */
interface World {
  org: TestOrg;
  viewer: TestUser;
  open: string;
  fileIds: string[];
}

async function world(ctx: TestContext, docs = 30): Promise<World> {
  const org = await createTestOrg(ctx);
  const g = await createGroup(ctx, org.orgId);
  const open = await createTemplate(ctx, org.orgId, { [g]: ['view'] });
  const hidden = await createTemplate(ctx, org.orgId, {});
  const viewer = await createTestUser(ctx, org, { groupIds: [g], privileges: ['collection'] });
  const inputs = Array.from({ length: docs }, (_, i) =>
    docInput(org.orgId, {
      filename: `w-${String(i).padStart(3, '0')}.jpg`,
      securityTemplateIds: [i % 3 === 2 ? hidden : open],
      metadataText: `warm ${i % 2 === 0 ? 'river' : 'stone'}`,
      createdEpoch: 1_700_000_000_000 + i,
      updatedEpoch: 1_700_000_000_000 + i,
      facets: [{ facet: 'Colour', value: i % 2 === 0 ? 'Red' : 'Blue' }],
    }),
  );
  await indexDocs(ctx, inputs);
  return { org, viewer, open, fileIds: inputs.map((d) => d.fileId!) };
}

forEachEngine('search: the in-memory index loads in the background, never in a search', (ctx) => {
  const search = async (user: TestUser, searchTerm: string[]) => {
    const res = await ctx().inject({
      method: 'POST',
      url: '/v1/search/keyword',
      headers: user.headers,
      payload: { searchTerm, limit: 100, facets: ['Colour'] },
    });
    assert.equal(res.statusCode, 200, res.body);
    const body = json(res);
    return { total: body.totalCount, result: body.result, facets: body.facets };
  };

  it('a search while the index loads answers the SQL way; the loaded index then gives the same answer', async () => {
    const { db, engine } = ctx().deps;
    const w = await world(ctx());
    unloadMemoryIndex(db);
    // A load held at its start, as the warm-up after a start is while it reads a large organization.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const loading = engine === 'sqlite' ? loadMemoryIndex(db, w.org.orgId, { startAfter: held }) : held;
    const during = [await search(w.viewer, ['warm']), await search(w.viewer, ['river']), await search(w.viewer, ['*'])];
    assert.equal(during[0]!.total, 20);
    assert.equal(during[1]!.total, 10);
    assert.equal(during[2]!.total, 20);
    assert.equal(memoryIndexLoaded(db, w.org.orgId), false, 'the searches did not wait for the load');
    release();
    await loading;
    assert.equal(memoryIndexLoaded(db, w.org.orgId), engine === 'sqlite');
    const afterwards = [
      await search(w.viewer, ['warm']),
      await search(w.viewer, ['river']),
      await search(w.viewer, ['*']),
    ];
    assert.deepEqual(afterwards, during);
    if (engine === 'sqlite') {
      const stats = memoryIndexStats(db).find((s) => s.orgId === w.org.orgId)!;
      assert.equal(stats.searches, 3, 'the searches after the load were answered from the index');
    }
  });

  it('a search while the index loads reads a bounded part of the matches: the same page and total as the loaded index, facets flagged estimated', async () => {
    const { db, engine } = ctx().deps;
    const w = await world(ctx(), 60);
    const keyword = async (payload: Record<string, unknown>) => {
      const res = await ctx().inject({
        method: 'POST',
        url: '/v1/search/keyword',
        headers: w.viewer.headers,
        payload: { limit: 7, facets: ['Colour'], ...payload },
      });
      assert.equal(res.statusCode, 200, res.body);
      const body = json(res);
      return {
        ids: (body.result as { fileId: string }[]).map((r) => r.fileId),
        total: body.totalCount as number,
        estimated: body.estimated === true,
        facets: body.facets as { values: { key: string; doc_count: number }[] }[],
      };
    };
    const queries: Record<string, unknown>[] = [
      { searchTerm: ['warm'] },
      { searchTerm: ['river'], from: 3 },
      { searchTerm: ['*'], sortBy: [{ metadataDefinitionSearchField: 'createdEpoch', order: 'asc' }] },
      { searchTerm: ['warm'], sortBy: [{ metadataDefinitionSearchField: 'lastUpdatedEpoch', order: 'asc' }], from: 30 },
    ];
    const saved = { ...BOUNDED_LIMITS };
    unloadMemoryIndex(db);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const loading = engine === 'sqlite' ? loadMemoryIndex(db, w.org.orgId, { startAfter: held }) : held;
    const during: Awaited<ReturnType<typeof keyword>>[] = [];
    try {
      // Any count of matches takes the bounded way; each way of testing documents in turn.
      BOUNDED_LIMITS.exactMax = 0;
      BOUNDED_LIMITS.facetSample = 4;
      for (const readBelow of [0, 1]) {
        BOUNDED_LIMITS.readMatchesBelow = readBelow;
        for (const q of queries) during.push(await keyword(q));
      }
    } finally {
      Object.assign(BOUNDED_LIMITS, saved);
    }
    assert.equal(memoryIndexLoaded(db, w.org.orgId), false, 'the searches did not wait for the load');
    release();
    await loading;
    const loaded: Awaited<ReturnType<typeof keyword>>[] = [];
    for (const q of queries) loaded.push(await keyword(q));
    for (const [i, d] of during.entries()) {
      const full = loaded[i % queries.length]!;
      assert.deepEqual(d.ids, full.ids, `query ${i}: the same page`);
      assert.equal(d.total, full.total, `query ${i}: the same total`);
      assert.equal(full.estimated, false);
      // PostgreSQL has no in-memory index: its answers are the SQL path's, never estimated.
      assert.equal(d.estimated, engine === 'sqlite', `query ${i}: flagged`);
      if (d.estimated) {
        const count = (f: typeof d.facets) => f.flatMap((x) => x.values.map((v) => v.key)).sort();
        assert.deepEqual(count(d.facets).length > 0, true, 'estimated facets are present');
        for (const key of count(d.facets)) assert.ok(count(full.facets).includes(key), `facet value ${key} exists`);
      } else {
        assert.deepEqual(d.facets, full.facets);
      }
    }
  });

  it('a search during the catch-up after an old snapshot does not wait for it and hides what was revoked while the process was down (SQLite)', async () => {
    const { db, engine, config } = ctx().deps;
    if (engine !== 'sqlite') return;
    const org = await createTestOrg(ctx());
    const g = await createGroup(ctx(), org.orgId);
    const keep = await createTemplate(ctx(), org.orgId, { [g]: ['view'] });
    const revoked = await createTemplate(ctx(), org.orgId, { [g]: ['view'] });
    const hidden = await createTemplate(ctx(), org.orgId, {});
    const viewer = await createTestUser(ctx(), org, { groupIds: [g] });
    const docs = Array.from({ length: 20 }, (_, i) =>
      docInput(org.orgId, {
        filename: `c-${i}.jpg`,
        securityTemplateIds: [i < 4 ? revoked : keep],
        metadataText: 'catch up',
        createdEpoch: 1_700_000_000_000 + i,
        updatedEpoch: 1_700_000_000_000 + i,
      }),
    );
    await indexDocs(ctx(), docs);
    unloadMemoryIndex(db);
    await loadMemoryIndex(db, org.orgId);
    await search(viewer, ['catch']);
    await writeSnapshot(db, config.dataDir, loadedIndex(db, org.orgId)!);
    unloadMemoryIndex(db);
    // While the process is down: the group loses View on one template, one document moves to a
    // template nobody views, and eight more are indexed again (more than the inline catch-up).
    ctx().clock.advance(5_000);
    await db.deleteFrom('security_template_grants').where('template_id', '=', revoked).execute();
    await writeTemplatePermissions(db, org.orgId, revoked, new Map());
    await indexDocs(ctx(), [
      { ...docs[10]!, securityTemplateIds: [hidden] },
      ...docs.slice(11, 19).map((d) => ({ ...d, metadataText: 'catch up again' })),
    ]);
    const saved = { ...CATCHUP_LIMITS };
    CATCHUP_LIMITS.inlineMax = 3;
    CATCHUP_LIMITS.slice = 2;
    try {
      assert.equal(await readSnapshot(db, config.dataDir, org.orgId), 'loaded');
      const during = await search(viewer, ['catch']);
      const stats = () => memoryIndexStats(db).find((x) => x.orgId === org.orgId)?.searches ?? 0;
      assert.equal(stats(), 0, 'not answered by the index while it catches up');
      const expected = docs
        .map((d, i) => ({ d, i }))
        .filter(({ i }) => i >= 4 && i !== 10)
        .map(({ d }) => d.fileId);
      const ids = (r: { result: { fileId: string }[] }) => r.result.map((x) => x.fileId).sort();
      assert.deepEqual(ids(during), [...expected].sort(), 'revoked and re-secured documents are hidden');
      assert.equal(during.total, 15);
      await memoryIndexSettled(db, org.orgId);
      assert.equal(memoryIndexLoaded(db, org.orgId), true, 'caught up in the background');
      const after = await search(viewer, ['catch']);
      assert.equal(stats(), 1, 'answered by the index once caught up');
      assert.deepEqual(after, during);
    } finally {
      Object.assign(CATCHUP_LIMITS, saved);
    }
  });

  it('a collection read while the index loads takes the SQL read, with the same members', async () => {
    const { db, engine } = ctx().deps;
    const w = await world(ctx(), 12);
    // Members the viewer may view (i % 3 !== 2) and one hidden from them.
    const fileIds = [0, 1, 2, 3, 4, 6].map((i) => w.fileIds[i]!);
    const created = await ctx().inject({
      method: 'POST',
      url: '/v1/collection',
      headers: w.viewer.headers,
      payload: {
        collectionType: 'secured',
        name: `warm ${Math.random()}`,
        securityTemplateIds: [w.open],
        collectionDocument: fileIds.filter((_, i) => i !== 2),
      },
    });
    assert.equal(created.statusCode, 200, created.body);
    const id = json(created).collectionId as string;
    await ctx()
      .deps.db.insertInto('collection_members')
      .values({ org_id: w.org.orgId, collection_id: id, file_id: fileIds[2]!, position: 99, added_at: Date.now() })
      .execute();
    const members = async () => {
      const res = await ctx().inject({ method: 'GET', url: `/v1/collection/${id}`, headers: w.viewer.headers });
      assert.equal(res.statusCode, 200, res.body);
      return json(res).collectionDocument as string[];
    };
    unloadMemoryIndex(db);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const loading = engine === 'sqlite' ? loadMemoryIndex(db, w.org.orgId, { startAfter: held }) : held;
    const during = await members();
    assert.equal(memoryIndexLoaded(db, w.org.orgId), false);
    release();
    await loading;
    assert.deepEqual(await members(), during);
    assert.deepEqual([...during].sort(), fileIds.filter((_, i) => i !== 2).sort(), 'the hidden member is left out');
  });

  it('the warm-up loads every organization in the background (SQLite), and nothing on PostgreSQL', async () => {
    const deps = ctx().deps;
    const a = await world(ctx(), 5);
    const b = await world(ctx(), 9);
    unloadMemoryIndex(deps.db);
    await startSearchIndexWarmup(deps);
    if (deps.engine === 'sqlite') {
      assert.ok(deps.runtime.search.warmup.running, 'the warm-up runs in the background');
      await deps.runtime.search.warmup.running;
    } else {
      assert.equal(deps.runtime.search.warmup.running, null);
    }
    for (const w of [a, b]) {
      await memoryIndexSettled(deps.db, w.org.orgId);
      assert.equal(memoryIndexLoaded(deps.db, w.org.orgId), deps.engine === 'sqlite');
    }
  });

  it('a snapshot is read back with the same answers, following documents changed and removed since (SQLite)', async () => {
    const { db, engine, config } = ctx().deps;
    if (engine !== 'sqlite') return;
    const w = await world(ctx(), 24);
    unloadMemoryIndex(db);
    await loadMemoryIndex(db, w.org.orgId);
    await search(w.viewer, ['warm']);
    await writeSnapshot(db, config.dataDir, loadedIndex(db, w.org.orgId)!);
    unloadMemoryIndex(db);
    // Changed after the snapshot: one document removed, one re-indexed with other words, one added.
    const docs = await db
      .selectFrom('search_docs')
      .select(['asset_id', 'file_id'])
      .where('org_id', '=', w.org.orgId)
      .orderBy('doc_no')
      .execute();
    await removeDocuments(db, engine, [docs[0]!.asset_id]);
    await indexDocs(ctx(), [
      docInput(w.org.orgId, { filename: 'late.jpg', securityTemplateIds: [w.open], metadataText: 'warm late river' }),
    ]);
    const sqlAnswers = [
      await search(w.viewer, ['warm']),
      await search(w.viewer, ['river']),
      await search(w.viewer, ['*']),
    ];
    unloadMemoryIndex(db);
    assert.equal(await readSnapshot(db, config.dataDir, w.org.orgId), 'loaded');
    assert.equal(memoryIndexLoaded(db, w.org.orgId), true);
    const fromSnapshot = [
      await search(w.viewer, ['warm']),
      await search(w.viewer, ['river']),
      await search(w.viewer, ['*']),
    ];
    assert.deepEqual(fromSnapshot, sqlAnswers);
    assert.equal(memoryIndexStats(db).find((x) => x.orgId === w.org.orgId)!.searches, 3);
  });

  it('a snapshot that is corrupt, from another schema version or not named by the database is deleted and not used (SQLite)', async () => {
    const { db, engine, config } = ctx().deps;
    if (engine !== 'sqlite') return;
    const w = await world(ctx(), 8);
    unloadMemoryIndex(db);
    const file = join(snapshotDir(config.dataDir), `${w.org.orgId}.bin`);
    const fresh = async () => {
      unloadMemoryIndex(db);
      await loadMemoryIndex(db, w.org.orgId);
      await writeSnapshot(db, config.dataDir, loadedIndex(db, w.org.orgId)!);
      unloadMemoryIndex(db);
    };
    // Corrupt: a flipped byte in the arrays.
    await fresh();
    const bytes = readFileSync(file);
    bytes[bytes.length - 3]! ^= 0xff;
    writeFileSync(file, bytes);
    assert.equal(await readSnapshot(db, config.dataDir, w.org.orgId), 'corrupt');
    assert.equal(await readSnapshot(db, config.dataDir, w.org.orgId), 'missing', 'the bad file was deleted');
    // Another schema version.
    await fresh();
    const raw = readFileSync(file);
    const len = raw.readUInt32LE(0);
    const header = JSON.parse(raw.subarray(4, 4 + len).toString('utf8'));
    header.schema = '0000_older';
    const head = Buffer.from(JSON.stringify(header));
    const prefix = Buffer.alloc(4);
    prefix.writeUInt32LE(head.length);
    writeFileSync(file, Buffer.concat([prefix, head, raw.subarray(4 + len)]));
    assert.equal(await readSnapshot(db, config.dataDir, w.org.orgId), 'stale');
    // A database that does not name it (a restored or other database).
    await fresh();
    await db.deleteFrom('search_index_state').where('key', '=', `memindex-snapshot:${w.org.orgId}`).execute();
    assert.equal(await readSnapshot(db, config.dataDir, w.org.orgId), 'stale');
    // A document indexed before the snapshot's time that it does not hold: another history. (All
    // but the newest document indexed earlier, so the snapshot's time is past them.)
    const newest = await db
      .selectFrom('search_docs')
      .select((eb) => eb.fn.max('doc_no').as('m'))
      .where('org_id', '=', w.org.orgId)
      .executeTakeFirstOrThrow();
    await db
      .updateTable('search_docs')
      .set((eb) => ({ indexed_at: eb('indexed_at', '-', 1000) }))
      .where('org_id', '=', w.org.orgId)
      .where('doc_no', '!=', Number(newest.m))
      .execute();
    await fresh();
    const idxDoc = await db
      .selectFrom('search_docs')
      .select('doc_no')
      .where('org_id', '=', w.org.orgId)
      .orderBy('doc_no')
      .executeTakeFirstOrThrow();
    const raw2 = readFileSync(file);
    const len2 = raw2.readUInt32LE(0);
    const body = Buffer.from(raw2.subarray(4 + len2));
    body[Number(idxDoc.doc_no)] = 0; // its state: not in the index
    const header2 = JSON.parse(raw2.subarray(4, 4 + len2).toString('utf8'));
    header2.crc = (await import('node:zlib')).crc32(body);
    const head2 = Buffer.from(JSON.stringify(header2));
    const prefix2 = Buffer.alloc(4);
    prefix2.writeUInt32LE(head2.length);
    writeFileSync(file, Buffer.concat([prefix2, head2, body]));
    assert.equal(await readSnapshot(db, config.dataDir, w.org.orgId), 'stale');
    assert.equal(memoryIndexLoaded(db, w.org.orgId), false);
    // Rebuilt by the warm-up, which writes a good one again.
    await startSearchIndexWarmup(ctx().deps);
    await ctx().deps.runtime.search.warmup.running;
    assert.equal(memoryIndexLoaded(db, w.org.orgId), true);
    unloadMemoryIndex(db);
    assert.equal(await readSnapshot(db, config.dataDir, w.org.orgId), 'loaded');
  });

  it('starts at `serve` and `serve --no-workers`, never in `worker`', { timeout: 180_000 }, async () => {
    const w = await world(ctx(), 4);
    const warmup = /"msg":"search index warm-up started"/;
    for (const args of [['serve'], ['serve', '--no-workers']]) {
      const port = await freePort();
      const child = spawnTessera(args, tesseraEnv(ctx(), { PORT: String(port) }));
      try {
        await child.waitFor(/Server listening|"msg":"[^"]*listening/);
        if (ctx().deps.engine === 'sqlite') {
          await child.waitFor(warmup);
          const loaded = await child.waitFor(new RegExp(`"orgId":"${w.org.orgId}"[^\\n]*"msg":"search index loaded"`));
          assert.ok(loaded, `${args.join(' ')} loaded the organization's index`);
        }
      } finally {
        await child.stop();
      }
      if (ctx().deps.engine === 'postgres') assert.doesNotMatch(child.output(), warmup);
    }
    const worker = spawnTessera(['worker'], tesseraEnv(ctx()));
    try {
      await worker.waitFor(/"msg":"worker started"/);
    } finally {
      await worker.stop();
    }
    assert.doesNotMatch(worker.output(), warmup, 'a worker answers no search and loads no index');
    assert.doesNotMatch(worker.output(), /"msg":"search index loaded"/);
  });
});
