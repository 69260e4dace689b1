import assert from 'node:assert/strict';
import { it } from 'node:test';
import { createAsset, jpeg, uploadAsset } from '../../../test/helpers/assets.ts';
import { forEachEngine, json, type TestContext } from '../../../test/helpers/context.ts';
import { createTestOrg, type TestOrg } from '../../../test/helpers/factories.ts';
import { defaultTemplateId } from '../metadata/index.ts';
import { foldUsage, releaseHoldings } from './index.ts';

// What an organization holds is appended as deltas when no quota limits it, and folded into
// org_usage in the background (decision 0021): concurrent uploads share no row.

async function usage(ctx: TestContext, org: TestOrg): Promise<{ storageBytes: number; assets: number }> {
  const res = await ctx.inject({ method: 'GET', url: '/v1/quotas', headers: org.admin.headers });
  assert.equal(res.statusCode, 200, res.body);
  return json(res).usage;
}

async function pendingDeltas(ctx: TestContext, org: TestOrg): Promise<number> {
  const rows = await ctx.deps.db.selectFrom('org_usage_deltas').select('id').where('org_id', '=', org.orgId).execute();
  return rows.length;
}

forEachEngine('quotas: usage deltas', (ctx) => {
  it('with no quota, concurrent creates and uploads of one organization never wait on its usage row; the total stays exact', async () => {
    const org = await createTestOrg(ctx());
    await createAsset(ctx(), org, {}); // the organization's usage row exists from here (after a fold)
    await foldUsage(ctx().deps.db, Date.now());
    const images = await Promise.all([1, 2, 3, 4].map((n) => jpeg(20 + n, 20)));
    const work = () =>
      Promise.all([
        ...images.map((bytes, i) => uploadAsset(ctx(), org, bytes, `p${i}.jpg`)),
        createAsset(ctx(), org, {}),
        createAsset(ctx(), org, {}),
      ]);
    if (ctx().engine === 'postgres') {
      // Another transaction holds the organization's usage row (as an in-flight upload did before:
      // every upload updated it and held it until commit). The uploads must finish meanwhile.
      let finishedWhileHeld = false;
      let done: Promise<unknown> = Promise.resolve();
      await ctx()
        .deps.db.transaction()
        .execute(async (trx) => {
          await trx.selectFrom('org_usage').select('org_id').where('org_id', '=', org.orgId).forUpdate().execute();
          done = work().then(() => {
            finishedWhileHeld = true;
          });
          // Released after 15 s at most: without deltas the uploads wait for this and the test fails.
          // (The timer is unref'd: once the test is done it must not hold the file's process open.)
          await Promise.race([done, new Promise((r) => setTimeout(r, 15_000).unref())]);
        });
      await done;
      assert.ok(finishedWhileHeld, 'creates and uploads waited for the usage row lock held by another transaction');
    } else {
      await work();
    }
    const bytes = images.reduce((sum, b) => sum + b.length, 0);
    assert.deepEqual(await usage(ctx(), org), { storageBytes: bytes, assets: 7 });
    // Folded into the organization's row: nothing pending, the same total.
    await foldUsage(ctx().deps.db, Date.now());
    assert.equal(await pendingDeltas(ctx(), org), 0);
    assert.deepEqual(await usage(ctx(), org), { storageBytes: bytes, assets: 7 });
    // A release is a negative delta; the total never goes below zero.
    await ctx()
      .deps.db.transaction()
      .execute((trx) => releaseHoldings(trx, org.orgId, Date.now(), { bytes: bytes + 1000, assets: 2 }));
    assert.deepEqual(await usage(ctx(), org), { storageBytes: 0, assets: 5 });
    await foldUsage(ctx().deps.db, Date.now());
    assert.deepEqual(await usage(ctx(), org), { storageBytes: 0, assets: 5 });
  });

  it('a quota set while deltas are pending counts them: the reservation folds them first and refuses past the limit', async () => {
    const org = await createTestOrg(ctx());
    await Promise.all([createAsset(ctx(), org, {}), createAsset(ctx(), org, {}), createAsset(ctx(), org, {})]);
    const set = await ctx().inject({
      method: 'PATCH',
      url: '/v1/quotas',
      headers: org.admin.headers,
      payload: { assets: 4 },
    });
    assert.equal(set.statusCode, 200, set.body);
    const results = await Promise.all([1, 2, 3].map(() => createAssetStatus(ctx(), org)));
    assert.equal(results.filter((s) => s < 300).length, 1, `one more asset fits: ${results.join(', ')}`);
    // 409 by the quota; on SQLite a writer that found the database busy may be told to retry (503).
    for (const s of results.filter((s) => s >= 300)) assert.ok([409, 503].includes(s), String(s));
    assert.equal(await pendingDeltas(ctx(), org), 0, 'the limited reservation folded the pending deltas');
    assert.deepEqual((await usage(ctx(), org)).assets, 4);
  });
});

async function createAssetStatus(ctx: TestContext, org: TestOrg): Promise<number> {
  const res = await ctx.inject({
    method: 'POST',
    url: '/v1/asset',
    headers: org.admin.headers,
    payload: {
      metadataTemplateId: await defaultTemplateId(ctx.deps.db, org.orgId),
      securityTemplateIds: [org.defaultTemplateId],
      metadata: [],
    },
  });
  return res.statusCode;
}
