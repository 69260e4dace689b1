import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine, json } from '../../../test/helpers/context.ts';
import { createTestOrg, type TestOrg } from '../../../test/helpers/factories.ts';
import type { TestContext } from '../../../test/helpers/context.ts';

/** A metadata-only asset (visible at once) under the organization's default templates. */
async function createAsset(ctx: TestContext, org: TestOrg): Promise<{ fileId: string }> {
  const templates = json(
    await ctx.inject({ method: 'GET', url: '/v1/metadata/template', headers: org.admin.headers }),
  ) as { template: { templateId: string; isDefault: boolean } }[];
  const metadataTemplateId = templates.find((t) => t.template.isDefault)!.template.templateId;
  const res = await ctx.inject({
    method: 'POST',
    url: '/v1/asset',
    headers: org.admin.headers,
    payload: { metadataTemplateId, securityTemplateIds: [org.defaultTemplateId], metadata: [] },
  });
  assert.equal(res.statusCode, 200, res.body);
  return json(res);
}

forEachEngine('collections: replace sets the order (reorder)', (ctx) => {
  it('a replace with the same members in another order is the new order, kept by reads and by later adds', async () => {
    const org = await createTestOrg(ctx());
    const assets = [];
    for (let i = 0; i < 4; i++) assets.push(await createAsset(ctx(), org));
    const ids = assets.map((a) => a.fileId);
    const created = json(
      await ctx().inject({
        method: 'POST',
        url: '/v1/collection',
        headers: org.admin.headers,
        payload: { name: 'Ordered', collectionType: 'private', collectionDocument: ids.slice(0, 3) },
      }),
    );
    const read = async () =>
      json(
        await ctx().inject({
          method: 'GET',
          url: `/v1/collection/${created.collectionId}`,
          headers: org.admin.headers,
        }),
      ).collectionDocument as string[];
    assert.deepEqual(await read(), ids.slice(0, 3));
    const reordered = [ids[2]!, ids[0]!, ids[1]!];
    const res = await ctx().inject({
      method: 'PATCH',
      url: `/v1/collections/${created.collectionId}`,
      headers: org.admin.headers,
      payload: { collectionUpdates: { operation: 'replace', fileIds: reordered } },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(await read(), reordered);
    await ctx().inject({
      method: 'PATCH',
      url: `/v1/collections/${created.collectionId}`,
      headers: org.admin.headers,
      payload: { collectionUpdates: { operation: 'add', fileIds: [ids[3]!] } },
    });
    assert.deepEqual(await read(), [...reordered, ids[3]]);
    // Replace with a new member and a new order at once.
    const next = [ids[3]!, ids[1]!, ids[2]!];
    await ctx().inject({
      method: 'PATCH',
      url: `/v1/collections/${created.collectionId}`,
      headers: org.admin.headers,
      payload: { collectionUpdates: { operation: 'replace', fileIds: next } },
    });
    assert.deepEqual(await read(), next);
  });
});
