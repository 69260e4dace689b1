import assert from 'node:assert/strict';
import { it } from 'node:test';
import { sql } from 'kysely';
import { forEachEngine, json, type TestContext } from '../../../../test/helpers/context.ts';
import { createTestOrg } from '../../../../test/helpers/factories.ts';
import { defaultTemplate, jpeg, uploadAsset } from '../../../../test/helpers/assets.ts';
import { keywordTotal } from '../../../../test/helpers/search.ts';

/** The asset's index document as stored: its updated time and whether it is marked deleted. */
async function documentOf(c: TestContext, assetId: string) {
  const { rows } = await sql<{
    updated_epoch: number | string;
    deleted: number | string;
    asset_updated: number | string;
  }>`
    select d.updated_epoch, d.deleted, a.updated_at as asset_updated
    from assets a join search_docs d on d.asset_id = a.id where a.id = ${assetId}`.execute(c.deps.db);
  const row = rows[0];
  assert.ok(row, 'the asset has an index document');
  return { updated: Number(row.updated_epoch), deleted: Number(row.deleted), assetUpdated: Number(row.asset_updated) };
}

forEachEngine('search index freshness (decision 0027)', (ctx) => {
  it('an asset write answered over HTTP is already indexed when its answer arrives, before any search', async () => {
    const c = ctx();
    const org = await createTestOrg(c);
    const a = await uploadAsset(c, org, await jpeg(8, 8), 'quay.jpg');
    assert.equal(await keywordTotal(c, org.admin.headers, 'quay'), 1);
    c.clock.advance(1000);
    const patch = await c.inject({
      method: 'PATCH',
      url: `/v1/assets/asset/${a.objectId}`,
      headers: org.admin.headers,
      payload: { metadata: [{ name: 'Title', value: 'Lighthouse keeper' }] },
    });
    assert.equal(patch.statusCode, 200, patch.body);
    const doc = await documentOf(c, a.objectId);
    if (c.engine === 'postgres') {
      // No search and no indexer loop ran since: the answer itself waited for the index.
      assert.equal(doc.updated, doc.assetUpdated, 'the document reflects the edit');
    } else {
      // SQLite: the answer does not wait; the next search indexes first.
      assert.notEqual(doc.updated, doc.assetUpdated, 'the answer did not wait for the index');
    }
    assert.equal(await keywordTotal(c, org.admin.headers, 'lighthouse'), 1);
  });

  it('a write this process made outside a request (a job, a service call) is searchable by its next search', async () => {
    const c = ctx();
    const org = await createTestOrg(c);
    const a = await uploadAsset(c, org, await jpeg(8, 8), 'breakwater.jpg');
    assert.equal(await keywordTotal(c, org.admin.headers, 'breakwater'), 1);
    c.clock.advance(1000);
    const now = c.clock.now();
    await c.deps.db
      .updateTable('assets')
      .set({ deleted_at: now, updated_at: now })
      .where('id', '=', a.objectId)
      .execute();
    // Right after a search's pass (well within the freshness window): the write still makes it index first.
    assert.equal(await keywordTotal(c, org.admin.headers, 'breakwater'), 0, 'the soft delete is seen at once');
    assert.equal((await documentOf(c, a.objectId)).deleted, 1);
  });

  it("another instance's answered write is searchable on this one at once", async () => {
    const c = ctx();
    const org = await createTestOrg(c);
    const other = await c.secondInstance();
    try {
      const a = await uploadAsset(c, org, await jpeg(8, 8), 'pier.jpg');
      assert.equal(await keywordTotal(c, org.admin.headers, 'pier'), 1);
      c.clock.advance(1000);
      const patch = await other.app.inject({
        method: 'PATCH',
        url: `/v1/assets/asset/${a.objectId}`,
        headers: org.admin.headers,
        payload: { metadata: [{ name: 'Title', value: 'Jetty at noon' }] },
      });
      assert.equal(patch.statusCode, 200, patch.body);
      assert.equal(await keywordTotal(c, org.admin.headers, 'jetty'), 1);
    } finally {
      await other.close();
    }
  });

  it('a bulk creation answers without waiting for its indexing; the next search finds every asset', async () => {
    const c = ctx();
    const org = await createTestOrg(c);
    const { id: template } = await defaultTemplate(c, org);
    const res = await c.inject({
      method: 'POST',
      url: '/v1/assets/bulk',
      headers: org.admin.headers,
      payload: {
        assets: ['Puffin one', 'Puffin two', 'Puffin three'].map((title) => ({
          metadataTemplateId: template,
          securityTemplateIds: [org.defaultTemplateId],
          metadata: [{ name: 'Title', value: title }],
        })),
      },
    });
    assert.equal(res.statusCode, 200, res.body);
    const ids = (json(res).data as { objectId: string }[]).map((a) => a.objectId);
    // No search and no indexer loop ran since, and the answer did not wait for one.
    const { rows } = await sql<{ n: number | string }>`
      select count(*) as n from search_docs where asset_id in (${sql.join(ids)})`.execute(c.deps.db);
    assert.equal(Number(rows[0]!.n), 0, 'not indexed before the answer');
    assert.equal(await keywordTotal(c, org.admin.headers, 'puffin'), 3);
  });
});
