import assert from 'node:assert/strict';
import { it } from 'node:test';
import pg from 'pg';
import { forEachEngine, json, type TestContext } from '../../../../test/helpers/context.ts';
import { createAsset } from '../../../../test/helpers/assets.ts';
import { createTestOrg, type TestOrg } from '../../../../test/helpers/factories.ts';
import { waitFor } from '../../../../test/helpers/wait.ts';
import { sql } from 'kysely';
import type { DbOrTrx } from '../../../core/db/connect.ts';
import { INDEX_LOCK, indexingTransaction, syncSearchIndex } from './search.indexer.ts';

/**
 * Several processes index one PostgreSQL database at once (every API process before its searches,
 * every worker in its loop). Issue 28 found two of them waiting on each other's row locks while
 * rewriting the same documents; each asset is now indexed by one process at a time, and a pass
 * still returns only once every change committed before it is searchable.
 */
async function retitle(c: TestContext, org: TestOrg, objectId: string, title: string): Promise<void> {
  const res = await c.inject({
    method: 'PATCH',
    url: `/v1/assets/asset/${objectId}`,
    headers: org.admin.headers,
    payload: { metadata: [{ name: 'Title', value: title }] },
  });
  assert.equal(res.statusCode, 200, res.body);
}

async function totalFor(c: { inject: TestContext['inject'] }, org: TestOrg, word: string): Promise<number> {
  const res = await c.inject({
    method: 'POST',
    url: '/v1/search/keyword',
    headers: org.admin.headers,
    payload: { searchTerm: [word], limit: 0 },
  });
  assert.equal(res.statusCode, 200, res.body);
  return json(res).totalCount;
}

/** True when the asset's index document reflects its last write. */
async function indexed(c: TestContext, assetId: string): Promise<boolean> {
  const asset = await c.deps.db.selectFrom('assets').select('updated_at').where('id', '=', assetId).executeTakeFirst();
  const doc = await c.deps.db
    .selectFrom('search_docs')
    .select('updated_epoch')
    .where('asset_id', '=', assetId)
    .executeTakeFirst();
  return asset !== undefined && doc !== undefined && Number(doc.updated_epoch) === Number(asset.updated_at);
}

forEachEngine('search indexer across processes', (ctx) => {
  it('two instances indexing the same changes at once both finish, and every change is searchable from either', async () => {
    const c = ctx();
    const org = await createTestOrg(c);
    const second = await c.secondInstance();
    // In one Node process two SQLite connections cannot wait for each other (better-sqlite3 waits
    // for the write lock synchronously, blocking the holder's event loop): there the instances take
    // turns; on PostgreSQL they run at once.
    const together = (passes: (() => Promise<number>)[]) =>
      c.engine === 'postgres'
        ? Promise.all(passes.map((p) => p()))
        : passes.reduce<Promise<unknown>>((prev, p) => prev.then(p), Promise.resolve());
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push((await createAsset(c, org, { filename: `walrus-${i}.jpg` })).objectId);
    // New documents (inserts) written by both instances at once…
    await together([() => syncSearchIndex(c.deps), () => syncSearchIndex(second.deps), () => syncSearchIndex(c.deps)]);
    for (const id of ids) assert.ok(await indexed(c, id), `${id} indexed`);
    // …then changed documents (updates).
    c.clock.advance(1000);
    for (const id of ids) await retitle(c, org, id, 'zeppelin');
    await together([
      () => syncSearchIndex(second.deps),
      () => syncSearchIndex(c.deps),
      () => syncSearchIndex(second.deps),
    ]);
    for (const id of ids) assert.ok(await indexed(c, id), `${id} re-indexed`);
    assert.equal(await totalFor(c, org, 'zeppelin'), 12);
    assert.equal(await totalFor(second.app, org, 'zeppelin'), 12);
    assert.equal(await totalFor(c, org, 'walrus'), 12, 'filenames unchanged');
    const docs = await c.deps.db
      .selectFrom('search_docs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('asset_id', 'in', ids)
      .executeTakeFirstOrThrow();
    assert.equal(Number(docs.n), 12, 'one document per asset');
  });

  it('notices a write made in the millisecond its asset was indexed, and does not rebuild an unchanged document again', async () => {
    const c = ctx();
    const org = await createTestOrg(c);
    const id = (await createAsset(c, org, { filename: 'ocelot.jpg' })).objectId;
    await syncSearchIndex(c.deps);
    // The test clock is stopped: every write and pass below happens in one millisecond.
    assert.equal(await syncSearchIndex(c.deps), 0, 'an indexed asset that did not change is not rebuilt');
    // A second write in that millisecond, outside any request (as a job's): same updated_at as the document.
    await c.deps.db
      .updateTable('assets')
      .set({ filename: 'narwhal.jpg', updated_at: c.clock.now() })
      .where('id', '=', id)
      .execute();
    assert.equal(await syncSearchIndex(c.deps), 1, 'the write is noticed by the row version');
    assert.equal(await totalFor(c, org, 'narwhal'), 1);
    assert.equal(await syncSearchIndex(c.deps), 0, 'and indexed once');
  });

  it('skips an asset another process is indexing instead of waiting on its locks, then waits for it before returning', async (t) => {
    if (ctx().engine !== 'postgres') return t.skip('SQLite has one writer at a time: no second indexer to overlap');
    const c = ctx();
    const org = await createTestOrg(c);
    const x = (await createAsset(c, org, { filename: 'xylophone.jpg' })).objectId;
    const y = (await createAsset(c, org, { filename: 'yodel.jpg' })).objectId;
    await syncSearchIndex(c.deps);
    c.clock.advance(1000);
    await retitle(c, org, x, 'quokka');
    await retitle(c, org, y, 'quokka');

    // Another process in the middle of indexing X: it holds X's claim and X's document row.
    assert.equal(c.database.kind, 'postgres');
    const other = new pg.Client({ connectionString: c.database.kind === 'postgres' ? c.database.url : '' });
    await other.connect();
    try {
      // An answered edit is indexed before its answer (decision 0027): X and Y change again
      // outside any request of this instance (as a job of another process would), so they are stale.
      c.clock.advance(1000);
      await other.query('update assets set updated_at = $1 where id = any($2)', [c.clock.now(), [x, y]]);
      assert.equal(await indexed(c, x), false);
      await other.query('begin');
      await other.query('select pg_advisory_xact_lock($1, hashtext($2))', [INDEX_LOCK, x]);
      await other.query('select 1 from search_docs where asset_id = $1 for update', [x]);

      const pass = syncSearchIndex(c.deps);
      // Y (same batch) is written and committed while X is held: the pass did not queue behind X's lock.
      await waitFor(() => indexed(c, y), 'Y indexed while another process holds X', 15_000);
      assert.equal(await indexed(c, x), false, 'X left to the process holding it');

      // That process ends without indexing X (say it failed): the pass, which waited for it, does it.
      await other.query('rollback');
      await pass;
      assert.ok(await indexed(c, x), 'X indexed before the pass returned');
      assert.equal(await totalFor(c, org, 'quokka'), 2);
    } finally {
      await other.end();
    }
  });

  it("PostgreSQL: the indexer's transactions commit without waiting for their WAL flush; other transactions still wait", async (t) => {
    if (ctx().engine !== 'postgres') return t.skip('SQLite has no synchronous_commit');
    const c = ctx();
    const setting = async (db: DbOrTrx) =>
      (await sql<{ v: string }>`select current_setting('synchronous_commit') as v`.execute(db)).rows[0]!.v;
    // Its claims are released at commit: a search waiting for them waits for the work, not an fsync.
    assert.equal(await indexingTransaction(c.deps, (trx) => setting(trx)), 'off');
    assert.equal(await c.deps.db.transaction().execute((trx) => setting(trx)), 'on', 'only for the indexer');
    assert.equal(await setting(c.deps.db), 'on');
  });
});
