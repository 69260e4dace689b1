import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine, json, type TestContext } from '../../../../test/helpers/context.ts';
import { createTestOrg, createTestUser, type TestOrg, type TestUser } from '../../../../test/helpers/factories.ts';
import { securitySuite } from '../../../../test/helpers/security.ts';
import { assetWorker, createAsset, defaultTemplate } from '../../../../test/helpers/assets.ts';

const call = async (
  ctx: TestContext,
  user: TestUser,
  method: 'GET' | 'POST' | 'PATCH',
  url: string,
  payload?: unknown,
) => ctx.inject({ method, url, headers: user.headers, payload: payload as Record<string, unknown> });

/** A bulk edit setting the title of `ids`, started with no worker running (so it stays queued). */
async function titleEdit(ctx: TestContext, org: TestOrg, ids: string[], title: string): Promise<string> {
  const { id: templateId, attr } = await defaultTemplate(ctx, org);
  const res = await call(ctx, org.admin, 'PATCH', '/v1/asset', {
    metadataTemplateId: templateId,
    objectIds: ids,
    metadataDocument: [{ metadataDefinitionId: attr('title'), metadataDefinitionValue: title, operation: 'replace' }],
  });
  assert.equal(res.statusCode, 200, res.body);
  return json(res).jobId as string;
}

async function titleOf(ctx: TestContext, org: TestOrg, id: string): Promise<unknown> {
  return json(await call(ctx, org.admin, 'GET', `/v1/asset/${id}`)).metadataDenormalized?.title;
}

forEachEngine('actions: resume a cancelled or failed Action; list the Actions a privilege shows', (ctx) => {
  securitySuite(ctx, 'POST /v1/action/{id}/resume', {
    method: 'POST',
    resource: true,
    prepare: async (c, o) => {
      const res = await c.inject({ method: 'POST', url: '/v1/metadata/apply', headers: o.admin.headers, payload: {} });
      return { url: `/v1/action/${res.json().actionId}/resume` };
    },
  });

  it('resumes a cancelled bulk edit where it stopped: finished items are not done again, the rest are', async () => {
    const org = await createTestOrg(ctx());
    const assets = [await createAsset(ctx(), org), await createAsset(ctx(), org), await createAsset(ctx(), org)];
    const actionId = await titleEdit(
      ctx(),
      org,
      assets.map((a) => a.objectId),
      'resumed',
    );
    const cancelled = await call(ctx(), org.admin, 'POST', `/v1/action/${actionId}/cancel`);
    assert.equal(json(cancelled).status, 'cancelled');
    // As if it had been cancelled at its checkpoint after two items: its cursor and counts are kept.
    await ctx()
      .deps.db.updateTable('actions')
      .set({
        processed: 2,
        total: 3,
        result: JSON.stringify({ updated: 2, failed: 1, total: 3, errors: [{ item: 'x', message: 'earlier' }] }),
      })
      .where('id', '=', actionId)
      .execute();
    // Only a cancelled or failed action may be resumed; someone who may not see it gets 404.
    const stranger = await createTestUser(ctx(), org, { privileges: ['upload'] });
    assert.equal((await call(ctx(), stranger, 'POST', `/v1/action/${actionId}/resume`)).statusCode, 404);
    const resumed = await call(ctx(), org.admin, 'POST', `/v1/action/${actionId}/resume`);
    assert.equal(resumed.statusCode, 200, resumed.body);
    assert.equal(json(resumed).status, 'queued');
    assert.equal(json(resumed).finishedDate, null);
    const twice = await call(ctx(), org.admin, 'POST', `/v1/action/${actionId}/resume`);
    assert.equal(twice.statusCode, 409, twice.body);
    assert.match(json(twice).message, /queued/);
    const worker = assetWorker(ctx());
    try {
      // The job queued before the cancel is not the action's any more: only the new one runs it, once.
      await worker.drain();
    } finally {
      await worker.stop();
    }
    const done = json(await call(ctx(), org.admin, 'GET', `/v1/action/${actionId}`));
    assert.equal(done.status, 'succeeded', JSON.stringify(done));
    assert.deepEqual(done.result, { updated: 3, failed: 1, total: 3 });
    assert.deepEqual(done.errors, [{ item: 'x', message: 'earlier' }]);
    assert.equal(await titleOf(ctx(), org, assets[0]!.objectId), undefined, 'item 1 was done before: not again');
    assert.equal(await titleOf(ctx(), org, assets[1]!.objectId), undefined, 'item 2 was done before: not again');
    assert.equal(await titleOf(ctx(), org, assets[2]!.objectId), 'resumed');
    const again = await call(ctx(), org.admin, 'POST', `/v1/action/${actionId}/resume`);
    assert.equal(again.statusCode, 409);
    assert.match(json(again).message, /succeeded/);
  });

  it('resumes a failed action; a cancelled one left queued by its old job runs exactly once', async () => {
    const org = await createTestOrg(ctx());
    const asset = await createAsset(ctx(), org);
    const actionId = await titleEdit(ctx(), org, [asset.objectId], 'second try');
    await ctx()
      .deps.db.updateTable('actions')
      .set({ status: 'failed', finished_at: ctx().clock.now() })
      .where('id', '=', actionId)
      .execute();
    const resumed = await call(ctx(), org.admin, 'POST', `/v1/action/${actionId}/resume`);
    assert.equal(resumed.statusCode, 200, resumed.body);
    const jobs = await ctx()
      .deps.db.selectFrom('jobs')
      .select(['id'])
      .where('payload', 'like', `%${actionId}%`)
      .execute();
    assert.equal(jobs.length, 2, 'the old job and the new one');
    const worker = assetWorker(ctx());
    try {
      await worker.drain();
    } finally {
      await worker.stop();
    }
    const done = json(await call(ctx(), org.admin, 'GET', `/v1/action/${actionId}`));
    assert.equal(done.status, 'succeeded');
    assert.deepEqual(done.result, { updated: 1, failed: 0, total: 1 });
    assert.equal(await titleOf(ctx(), org, asset.objectId), 'second try');
  });

  it("lists others' Actions the caller's privileges show with scope=visible, and only their own by default", async () => {
    const org = await createTestOrg(ctx());
    const asset = await createAsset(ctx(), org);
    assert.equal(
      (await call(ctx(), org.admin, 'POST', `/v1/asset/${asset.objectId}/delete`, { action: 'delete' })).statusCode,
      200,
    );
    const purge = json(await call(ctx(), org.admin, 'POST', '/v1/asset/purge', { objectIds: [asset.objectId] }));
    const purger = await createTestUser(ctx(), org, { privileges: ['purge'] });
    const plain = await createTestUser(ctx(), org, { privileges: ['upload'] });
    const ids = async (user: TestUser, query: string) =>
      (json(await call(ctx(), user, 'GET', `/v1/actions${query}`)).actions as { id: string }[]).map((a) => a.id);
    assert.deepEqual(await ids(purger, ''), []);
    assert.deepEqual(await ids(purger, '?scope=visible'), [purge.actionId]);
    assert.deepEqual(await ids(plain, '?scope=visible'), []);
    assert.ok((await ids(org.admin, '?scope=mine')).includes(purge.actionId));
    const other = await createTestOrg(ctx());
    assert.deepEqual(await ids(other.admin, '?scope=visible'), []);
    const bad = await call(ctx(), purger, 'GET', '/v1/actions?scope=everyone');
    assert.equal(bad.statusCode, 400);
    assert.match(bad.body, /scope/);
  });
});
