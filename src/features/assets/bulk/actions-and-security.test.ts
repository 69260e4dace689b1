import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine, json } from '../../../../test/helpers/context.ts';
import { createTestOrg } from '../../../../test/helpers/factories.ts';
import { securitySuite } from '../../../../test/helpers/security.ts';
import { assetWorker, createAsset, defaultTemplate } from '../../../../test/helpers/assets.ts';

// The shared security suite for the asset routes that no other asset test file covers.
forEachEngine('assets: security of Action cancel and the form upload', (ctx) => {
  securitySuite(ctx, 'POST /v1/action/{id}/cancel', {
    method: 'POST',
    resource: true,
    prepare: async (c, o) => {
      const res = await c.inject({ method: 'POST', url: '/v1/metadata/apply', headers: o.admin.headers, payload: {} });
      return { url: `/v1/action/${res.json().actionId}/cancel` };
    },
  });
  securitySuite(ctx, 'POST /v1/asset/upload', {
    method: 'POST',
    prepare: () => ({ url: '/v1/asset/upload', body: {} }),
  });
});

forEachEngine('assets: an Action survives its worker dying', (ctx) => {
  it("is finished by another worker once the dead worker's lease runs out", async () => {
    const org = await createTestOrg(ctx());
    const { id: templateId } = await defaultTemplate(ctx(), org);
    const assets = [await createAsset(ctx(), org), await createAsset(ctx(), org), await createAsset(ctx(), org)];
    const started = await ctx().inject({
      method: 'PATCH',
      url: '/v1/asset',
      headers: org.admin.headers,
      payload: { metadataTemplateId: templateId, objectIds: assets.map((a) => a.objectId), metadataDocument: [] },
    });
    assert.equal(started.statusCode, 200, started.body);
    const actionId = json(started).jobId as string;
    const action = await ctx()
      .deps.db.selectFrom('actions')
      .select('job_id')
      .where('id', '=', actionId)
      .executeTakeFirstOrThrow();
    // A worker claimed the job, started the Action and died (its process is gone; its lease stays).
    const now = ctx().clock.now();
    await ctx()
      .deps.db.updateTable('jobs')
      .set({
        status: 'running',
        locked_by: 'a-worker-that-died',
        locked_until: now + 60_000,
        attempts: 1,
        updated_at: now,
      })
      .where('id', '=', action.job_id)
      .execute();
    await ctx()
      .deps.db.updateTable('actions')
      .set({ status: 'running', started_at: now, updated_at: now })
      .where('id', '=', actionId)
      .execute();
    const worker = assetWorker(ctx());
    try {
      await worker.drain();
      assert.equal(
        json(await ctx().inject({ method: 'GET', url: `/v1/action/${actionId}`, headers: org.admin.headers })).status,
        'running',
      );
      ctx().clock.advance(61_000);
      await worker.drain();
      const done = json(
        await ctx().inject({ method: 'GET', url: `/v1/action/${actionId}`, headers: org.admin.headers }),
      );
      assert.equal(done.status, 'succeeded', JSON.stringify(done));
      assert.equal(done.processed, 3);
    } finally {
      await worker.stop();
    }
  });
});
