import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { forEachEngine, json } from '../../../../test/helpers/context.ts';
import { createTestOrg, createTestUser } from '../../../../test/helpers/factories.ts';
import { startWorker, type Worker } from '../../../core/jobs/worker.ts';
import type { Deps } from '../../../deps.ts';
import { jobHandlers } from '../../../workers.ts';
import { applyMetadataToAssets } from '../../assets/index.ts';
import { metadataJobHandlers, type ApplyHandler, type DefinitionChange } from '../index.ts';
import { metadataApi } from '../../../../test/helpers/metadata.ts';

// Stands in for the assets feature's handler: records what it was asked to apply, per organization.
const seen = new Map<string, DefinitionChange[][]>();
const failOnce = new Set<string>();
const recorder: ApplyHandler = async (_db, context) => {
  if (failOnce.delete(context.orgId)) throw new Error('index unavailable');
  await context.progress(0.5);
  seen.set(context.orgId, [...(seen.get(context.orgId) ?? []), [...context.changes]]);
  return { updated: context.changes.length * 10, errors: [] };
};
after(() => seen.clear());

/** The production workers, with the recorder among the apply handlers. */
function startWorkers(deps: Deps): Worker {
  const handlers = {
    ...jobHandlers(deps),
    ...metadataJobHandlers(deps, { applyHandlers: { assets: applyMetadataToAssets, 'test-recorder': recorder } }),
  };
  return startWorker({
    db: deps.db,
    engine: deps.engine,
    clock: deps.clock,
    log: deps.log,
    signal: deps.jobs,
    handlers,
  });
}

forEachEngine('metadata: apply definition changes (an Action)', (ctx) => {
  it('POST /v1/metadata/apply starts an Action that hands pending changes to every handler, then marks them applied', async () => {
    const org = await createTestOrg(ctx());
    const api = metadataApi(ctx(), org);
    const vocab = await api.vocabulary('Status', ['Draft', 'Final']);
    await api.call(
      'PATCH',
      `/v1/metadata/vocabulary/${vocab.metadataDefinitionId}`,
      { update: [{ valueId: api.valueId(vocab, 'Draft'), valueName: 'WIP' }] },
      200,
    );
    const attr = await api.attribute({ name: 'Obsolete', type: 'text' });
    await api.call('DELETE', `/v1/metadata/attributes/${attr.id}`, undefined, 204);
    assert.equal(json(await api.call('GET', '/v1/metadata/changes')).hitCount, 2);

    // Reference clients send Content-Type: application/json with no body at all.
    const res = await ctx().inject({
      method: 'POST',
      url: '/v1/metadata/apply',
      headers: { ...org.admin.headers, 'content-type': 'application/json' },
    });
    assert.equal(res.statusCode, 202, res.body);
    const started = json(res);
    assert.equal(started.pendingChanges, 2);
    assert.equal(started.status, 'queued');
    const queued = json(await api.call('GET', `/v1/action/${started.actionId}`, undefined, 200));
    assert.deepEqual(
      [queued.status, queued.type, queued.objectType, queued.createdBy],
      ['queued', 'metadata.apply', 'Action', org.adminUserId],
    );

    const worker = startWorkers(ctx().deps);
    try {
      await worker.drain();
    } finally {
      await worker.stop();
    }
    const done = json(await api.call('GET', `/v1/action/${started.actionId}`, undefined, 200));
    assert.equal(done.status, 'succeeded', JSON.stringify(done));
    assert.equal(done.progress, 100);
    assert.equal(done.result.changesApplied, 2);
    assert.equal(done.result.itemsUpdated, 20);
    assert.equal(done.result.message, 'Changes applied successfully');
    assert.deepEqual(
      seen
        .get(org.orgId)![0]!
        .map((c) => c.kind)
        .sort(),
      ['attribute.deleted', 'vocabulary.value.renamed'],
    );
    assert.equal(json(await api.call('GET', '/v1/metadata/changes')).hitCount, 0);
    const applied = await ctx()
      .deps.db.selectFrom('events')
      .select('body')
      .where('org_id', '=', org.orgId)
      .where('type', '=', 'metadata.changes.applied')
      .execute();
    assert.deepEqual(JSON.parse(applied[0]!.body).action, {
      id: started.actionId,
      changesApplied: 2,
      itemsUpdated: 20,
    });

    // Applying again is harmless: nothing pending.
    const again = json(
      await ctx().inject({ method: 'POST', url: '/v1/metadata/apply', headers: org.admin.headers, payload: {} }),
    );
    assert.equal(again.pendingChanges, 0);
    const second = startWorkers(ctx().deps);
    await second.drain();
    await second.stop();
    assert.equal(json(await api.call('GET', `/v1/action/${again.actionId}`)).result.changesApplied, 0);
  });

  it('a failing handler leaves the changes pending; the job retries and the action reports the outcome', async () => {
    const org = await createTestOrg(ctx());
    const api = metadataApi(ctx(), org);
    const attr = await api.attribute({ name: 'Temp', type: 'text' });
    await api.call('PATCH', `/v1/metadata/attributes/${attr.id}`, { length: 10 }, 200);
    const started = json(await ctx().inject({ method: 'POST', url: '/v1/metadata/apply', headers: org.admin.headers }));
    failOnce.add(org.orgId);
    const worker = startWorkers(ctx().deps);
    try {
      await worker.drain();
      const retrying = json(await api.call('GET', `/v1/action/${started.actionId}`));
      assert.equal(retrying.status, 'queued');
      assert.equal(retrying.errors[0].message, 'index unavailable');
      assert.equal(json(await api.call('GET', '/v1/metadata/changes')).hitCount, 1, 'still pending');
      ctx().clock.advance(60_000);
      await worker.drain();
    } finally {
      await worker.stop();
    }
    const done = json(await api.call('GET', `/v1/action/${started.actionId}`));
    assert.equal(done.status, 'succeeded');
    assert.equal(json(await api.call('GET', '/v1/metadata/changes')).hitCount, 0);
  });

  it('an Action is visible to its creator and holders of its privilege only; 404 otherwise, also across organizations', async () => {
    const org = await createTestOrg(ctx());
    const started = json(await ctx().inject({ method: 'POST', url: '/v1/metadata/apply', headers: org.admin.headers }));
    const admin2 = await createTestUser(ctx(), org, { privileges: ['metadata_management'] });
    const plain = await createTestUser(ctx(), org, { privileges: ['upload'] });
    const stranger = await createTestOrg(ctx());
    assert.equal(
      (await ctx().inject({ method: 'GET', url: `/v1/action/${started.actionId}`, headers: admin2.headers }))
        .statusCode,
      200,
    );
    assert.equal(
      (await ctx().inject({ method: 'GET', url: `/v1/action/${started.actionId}`, headers: plain.headers })).statusCode,
      404,
    );
    assert.equal(
      (await ctx().inject({ method: 'GET', url: `/v1/action/${started.actionId}`, headers: stranger.admin.headers }))
        .statusCode,
      404,
    );
    assert.equal(
      (
        await ctx().inject({
          method: 'GET',
          url: '/v1/action/00000000-0000-4000-8000-000000000000',
          headers: org.admin.headers,
        })
      ).statusCode,
      404,
    );
    assert.equal(
      (await ctx().inject({ method: 'POST', url: '/v1/metadata/apply', headers: plain.headers })).statusCode,
      403,
    );
    assert.equal(
      (
        await ctx().inject({
          method: 'POST',
          url: '/v1/metadata/apply',
          headers: { ...org.admin.headers, 'content-type': 'application/json' },
          payload: '{bad',
        })
      ).statusCode,
      400,
    );
  });
});
