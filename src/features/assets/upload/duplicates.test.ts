import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { it } from 'node:test';
import { forEachEngine, json } from '../../../../test/helpers/context.ts';
import { createTestOrg } from '../../../../test/helpers/factories.ts';
import { createAsset, jpeg, uploadAsset } from '../../../../test/helpers/assets.ts';
import { defaultTemplateId } from '../../metadata/index.ts';

/** Issue 25 item 5: the same bytes already in the organization are reported, refused or versioned at create. */
forEachEngine('assets: duplicates at create', (ctx) => {
  it('reports, refuses (409 naming the asset) or versions onto the asset that holds the same bytes; a bad option is a 400', async () => {
    const org = await createTestOrg(ctx());
    const bytes = await jpeg(41, 23);
    const checksum = createHash('sha256').update(bytes).digest('hex');
    const first = await uploadAsset(ctx(), org, bytes, 'first.jpg');

    const reported = await createAsset(ctx(), org, { filename: 'again.jpg', checksum });
    assert.deepEqual((reported as { duplicates?: string[] }).duplicates, [first.objectId]);
    const unrelated = await createAsset(ctx(), org, { filename: 'other.jpg', checksum: 'a'.repeat(64) });
    assert.deepEqual((unrelated as { duplicates?: string[] }).duplicates ?? [], []);

    const body = {
      metadataTemplateId: (await defaultTemplateId(ctx().deps.db, org.orgId))!,
      metadata: [],
      securityTemplateIds: [org.defaultTemplateId],
    };
    const refused = await ctx().inject({
      method: 'POST',
      url: '/v1/asset',
      headers: org.admin.headers,
      payload: { ...body, filename: 'third.jpg', checksum, onDuplicate: 'refuse' },
    });
    assert.equal(refused.statusCode, 409, refused.body);
    assert.match(refused.body, new RegExp(first.objectId));

    const versioned = await ctx().inject({
      method: 'POST',
      url: '/v1/asset',
      headers: org.admin.headers,
      payload: { ...body, filename: 'fourth.jpg', checksum: checksum.toUpperCase(), onDuplicate: 'version' },
    });
    assert.equal(versioned.statusCode, 200, versioned.body);
    assert.equal(json(versioned).originalFileId, first.originalFileId);
    assert.equal(json(versioned).versionNumber, 2);

    const noChecksum = await ctx().inject({
      method: 'POST',
      url: '/v1/asset',
      headers: org.admin.headers,
      payload: { ...body, filename: 'fifth.jpg', onDuplicate: 'refuse' },
    });
    assert.equal(noChecksum.statusCode, 400, noChecksum.body);
    assert.match(noChecksum.body, /onDuplicate/);
    const badOption = await ctx().inject({
      method: 'POST',
      url: '/v1/asset',
      headers: org.admin.headers,
      payload: { ...body, filename: 'sixth.jpg', checksum, onDuplicate: 'merge' },
    });
    assert.equal(badOption.statusCode, 400, badOption.body);
    assert.match(badOption.body, /onDuplicate/);
  });

  it("another organization's copy of the bytes is never reported", async () => {
    const mine = await createTestOrg(ctx());
    const theirs = await createTestOrg(ctx());
    const bytes = await jpeg(43, 29);
    await uploadAsset(ctx(), theirs, bytes, 'theirs.jpg');
    const created = await createAsset(ctx(), mine, {
      filename: 'mine.jpg',
      checksum: createHash('sha256').update(bytes).digest('hex'),
    });
    assert.deepEqual((created as { duplicates?: string[] }).duplicates ?? [], []);
  });
});
