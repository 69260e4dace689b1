import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import sharp from 'sharp';
import { forEachEngine, json } from '../../../../../test/helpers/context.ts';
import { createTestOrg, type TestOrg } from '../../../../../test/helpers/factories.ts';
import { assetWorker, uploadAsset } from '../../../../../test/helpers/assets.ts';
import type { Worker } from '../../../../core/jobs/worker.ts';
import { scheduleVisualBackfill } from './backfill.ts';

/** A picture with structure, so that its perceptual hash means something; `shift` moves its shapes a little. */
const picture = (shift = 0, quality = 85) =>
  sharp(
    Buffer.from(
      `<svg xmlns="http://www.w3.org/2000/svg" width="600" height="400"><rect width="600" height="400" fill="#e8d8b0"/><circle cx="${180 + shift}" cy="200" r="110" fill="#1d4e89"/><rect x="360" y="90" width="170" height="220" fill="#c0392b"/></svg>`,
    ),
  )
    .jpeg({ quality })
    .toBuffer();

// Assets rendered before placeholders and perceptual hashes existed (issue 25, items 5 and 7) get
// them from their stored thumbnails, by a job enqueued at start, without rendering again.
forEachEngine('assets: backfill of placeholders and perceptual hashes for older assets', (ctx) => {
  let org: TestOrg;
  let worker: Worker;
  before(async () => {
    org = await createTestOrg(ctx());
    worker = assetWorker(ctx());
  });
  after(async () => worker.stop());

  it('fills what older assets lack from their thumbnails; near-duplicate search finds them again; nothing left, nothing enqueued', async () => {
    const a = await uploadAsset(ctx(), org, await picture(0, 90), 'a.jpg');
    const b = await uploadAsset(ctx(), org, await picture(0, 60), 'b.jpg');
    await worker.drain();
    const db = ctx().deps.db;
    const ids = [a.objectId, b.objectId];
    const before = await db
      .selectFrom('assets')
      .select(['id', 'placeholder', 'renditions'])
      .where('id', 'in', ids)
      .execute();
    assert.ok(before.every((r) => r.placeholder !== null));
    const similar = async () =>
      json(
        await ctx().inject({
          method: 'POST',
          url: '/v1/search/similar',
          headers: org.admin.headers,
          payload: { assetId: a.objectId },
        }),
      ).results.map((r: { objectId: string }) => r.objectId);
    assert.deepEqual(await similar(), [b.objectId]);

    // As an asset from before: no placeholder, no hash.
    await db.updateTable('assets').set({ placeholder: null }).where('id', 'in', ids).execute();
    await db.deleteFrom('asset_visual_hashes').where('asset_id', 'in', ids).execute();
    ctx().clock.advance(6 * 60_000);
    const bare = await ctx().inject({
      method: 'POST',
      url: '/v1/search/similar',
      headers: org.admin.headers,
      payload: { assetId: a.objectId },
    });
    assert.ok(bare.statusCode >= 400 || json(bare).results.length === 0, bare.body);

    assert.equal(await scheduleVisualBackfill(ctx().deps), true);
    assert.equal(await scheduleVisualBackfill(ctx().deps), false, 'processes starting together enqueue one job');
    await worker.drain();
    const afterRows = await db
      .selectFrom('assets')
      .select(['id', 'placeholder', 'renditions'])
      .where('id', 'in', ids)
      .execute();
    for (const row of afterRows) {
      const was = before.find((r) => r.id === row.id)!;
      assert.deepEqual(JSON.parse(row.placeholder!), JSON.parse(was.placeholder!), 'the same placeholder as rendered');
      assert.equal(row.renditions, was.renditions, 'nothing rendered again');
    }
    const hashes = await db.selectFrom('asset_visual_hashes').select('asset_id').where('asset_id', 'in', ids).execute();
    assert.equal(hashes.length, 2);
    ctx().clock.advance(6 * 60_000);
    assert.deepEqual(await similar(), [b.objectId], 'near-duplicate search finds them again');

    // Nothing left to fill: a start enqueues nothing (an idle start runs no job).
    ctx().clock.advance(2 * 3_600_000);
    assert.equal(await scheduleVisualBackfill(ctx().deps), false);
    const asset = json(
      await ctx().inject({ method: 'GET', url: `/v1/asset/${a.objectId}`, headers: org.admin.headers }),
    );
    assert.match(asset.placeholder.dominantColor, /^#[0-9a-f]{6}$/);
  });
});
