import assert from 'node:assert/strict';
import { it } from 'node:test';
import { assetWorker, jpeg, pathOf, uploadAsset } from '../helpers/assets.ts';
import { forEachEngine, json } from '../helpers/context.ts';
import { createTestOrg, createTestUser } from '../helpers/factories.ts';

// Issue 23 (review of defect 10): a download link and each exposed URL can be revoked on its own,
// as an asset share can (DELETE /v1/asset/share/{shareId}): DELETE /v1/asset/link/{linkId}, then 410.
forEachEngine('security: per-link revoke of download links and exposed URLs', (ctx) => {
  it('a download link and an exposed URL are each revoked by their linkId (DELETE, 204): that URL answers 410 at once, the others still serve', async () => {
    const org = await createTestOrg(ctx());
    const other = await createTestOrg(ctx());
    const worker = assetWorker(ctx());
    let asset;
    try {
      asset = await uploadAsset(ctx(), org, await jpeg(32, 24), 'a.jpg');
      await worker.drain();
    } finally {
      await worker.stop();
    }
    const get = async (url: string) => (await ctx().inject({ method: 'GET', url })).statusCode;
    const downloadLink = async (headers = org.admin.headers) => {
      const res = await ctx().inject({ method: 'GET', url: `/v1/asset/${asset.objectId}/content`, headers });
      assert.equal(res.statusCode, 200, res.body);
      const body = json(res);
      assert.match(body.linkId, /^[0-9a-f-]{36}$/);
      return { linkId: body.linkId as string, url: pathOf(body.presignedURL) };
    };
    const first = await downloadLink();
    const second = await downloadLink();
    const exposed = await ctx().inject({
      method: 'POST',
      url: '/v1/asset/expose',
      headers: org.admin.headers,
      payload: [
        {
          id: asset.objectId,
          components: [
            { componentType: 'object', componentRef: 'original' },
            { componentType: 'rendition', componentRef: ['imageThumb', 'imagePreview'] },
          ],
        },
      ],
    });
    assert.equal(exposed.statusCode, 200, exposed.body);
    const components = json(exposed)[0].components as { componentRef: string; url: string; linkId: string }[];
    assert.deepEqual(components.map((c) => c.componentRef).sort(), ['imagePreview', 'imageThumb', 'original']);
    const byRef = Object.fromEntries(components.map((c) => [c.componentRef, { linkId: c.linkId, url: pathOf(c.url) }]));
    assert.equal(new Set(components.map((c) => c.linkId)).size, 3, 'one record per URL');
    for (const l of [first, second, ...Object.values(byRef)]) assert.equal(await get(l.url), 200, l.url);

    // The link id is signed into the URL: moving it to another link, or dropping it, is a bad signature.
    assert.equal(await get(first.url.replace(first.linkId, second.linkId)), 403);
    assert.equal(await get(first.url.replace(`link=${first.linkId}&`, '')), 403);
    // A link record names its own asset and component: a valid record id cannot be grafted onto another rendition.
    const thumb = byRef.imageThumb!;
    assert.equal(await get(thumb.url.replace('/imageThumb?', '/imagePreview?')), 403);

    // Another organization's administrator: 404 as for a missing link; a colleague who may download the
    // asset (Everyone's default grant) but not share it: 403; without the Download privilege: 403.
    const revokeAs = (linkId: string, headers: Record<string, string>) =>
      ctx().inject({ method: 'DELETE', url: `/v1/asset/link/${linkId}`, headers });
    assert.equal((await revokeAs(first.linkId, other.admin.headers)).statusCode, 404);
    const colleague = await createTestUser(ctx(), org, { privileges: ['download'] });
    const refused = await revokeAs(first.linkId, colleague.headers);
    assert.equal(refused.statusCode, 403, refused.body);
    const noDownload = await createTestUser(ctx(), org, {
      groupIds: [org.groups.everyone, org.groups.administrators],
    });
    assert.equal((await revokeAs(first.linkId, noDownload.headers)).statusCode, 403, 'needs the Download privilege');
    assert.equal(await get(first.url), 200, 'a refused revoke changes nothing');

    const revoked = await revokeAs(first.linkId, org.admin.headers);
    assert.equal(revoked.statusCode, 204, revoked.body);
    assert.equal(await get(first.url), 410);
    assert.equal(await get(second.url), 200, 'another download link of the same asset still serves');
    assert.equal((await revokeAs(first.linkId, org.admin.headers)).statusCode, 204, 'revoking twice changes nothing');
    assert.equal((await revokeAs(crypto.randomUUID(), org.admin.headers)).statusCode, 404);
    assert.equal((await revokeAs('not-a-uuid', org.admin.headers)).statusCode, 400);

    // One exposed URL revoked: only that one ends.
    assert.equal((await revokeAs(thumb.linkId, org.admin.headers)).statusCode, 204);
    assert.equal(await get(thumb.url), 410);
    assert.equal(await get(byRef.imagePreview!.url), 200);
    assert.equal(await get(byRef.original!.url), 200);
    assert.equal((await revokeAs(byRef.original!.linkId, org.admin.headers)).statusCode, 204);
    assert.equal(await get(byRef.original!.url), 410);

    // The person a link was made for revokes their own (Download through the Administrators group's template).
    const holder = await createTestUser(ctx(), org, {
      privileges: ['download'],
      groupIds: [org.groups.everyone, org.groups.administrators],
    });
    const own = await downloadLink(holder.headers);
    assert.equal(await get(own.url), 200);
    assert.equal((await revokeAs(own.linkId, holder.headers)).statusCode, 204);
    assert.equal(await get(own.url), 410);

    // Revoking is audited.
    const rows = await ctx()
      .deps.db.selectFrom('audit_log')
      .select(['action', 'target_id'])
      .where('org_id', '=', org.orgId)
      .where('action', '=', 'asset.link_revoked')
      .execute();
    assert.equal(rows.length, 4);
  });
});
