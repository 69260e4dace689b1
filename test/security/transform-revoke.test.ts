import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { Worker } from '../../src/core/jobs/worker.ts';
import { assetWorker, jpeg, pathOf, uploadAsset } from '../helpers/assets.ts';
import { forEachEngine, json } from '../helpers/context.ts';
import { createTestOrg, createTestUser } from '../helpers/factories.ts';

// Issue 23 (review of defect 10): the links of a transformation (POST /v1/asset/transform, mailed to
// outside recipients) are revoked together, like an asset share: DELETE, then 410.
forEachEngine('security: revoking a transformation ends its links', (ctx) => {
  let worker: Worker;
  before(() => {
    worker = assetWorker(ctx());
  });
  after(async () => worker.stop());

  it('DELETE /v1/asset/transform/{actionId} (204): every link of it answers 410 and its files go; another organization 404; a colleague who may not transform 403', async () => {
    const org = await createTestOrg(ctx());
    const other = await createTestOrg(ctx());
    const photo = await uploadAsset(ctx(), org, await jpeg(200, 100), 'photo.jpg');
    await worker.drain();
    const transform = async () => {
      const res = await ctx().inject({
        method: 'POST',
        url: '/v1/asset/transform',
        headers: org.admin.headers,
        payload: {
          transformations: [
            { objectId: photo.objectId, source: 'original', transformations: [{ type: 'resize', width: 50 }] },
            { objectId: photo.objectId, source: 'original', transformations: [{ type: 'resize', width: 20 }] },
          ],
        },
      });
      assert.equal(res.statusCode, 202, res.body);
      await worker.drain();
      const action = json(
        await ctx().inject({ method: 'GET', url: `/v1/action/${json(res).jobId}`, headers: org.admin.headers }),
      );
      return {
        actionId: json(res).actionId as string,
        urls: (action.result.files as { url: string }[]).map((f) => pathOf(f.url)),
      };
    };
    const first = await transform();
    const second = await transform();
    const get = async (url: string) => (await ctx().inject({ method: 'GET', url })).statusCode;
    for (const url of [...first.urls, ...second.urls]) assert.equal(await get(url), 200, url);
    const revoke = (actionId: string, headers: Record<string, string>) =>
      ctx().inject({ method: 'DELETE', url: `/v1/asset/transform/${actionId}`, headers });

    assert.equal((await revoke(first.actionId, other.admin.headers)).statusCode, 404);
    const colleague = await createTestUser(ctx(), org, { privileges: ['download'] });
    assert.equal((await revoke(first.actionId, colleague.headers)).statusCode, 403);
    assert.equal(await get(first.urls[0]!), 200, 'a refused revoke changes nothing');

    const done = await revoke(first.actionId, org.admin.headers);
    assert.equal(done.statusCode, 204, done.body);
    for (const url of first.urls) assert.equal(await get(url), 410, url);
    for (const url of second.urls) assert.equal(await get(url), 200, 'the other transformation still serves');
    assert.equal((await revoke(first.actionId, org.admin.headers)).statusCode, 204, 'a repeat changes nothing');
    assert.equal((await revoke(crypto.randomUUID(), org.admin.headers)).statusCode, 404);
  });
});
