import assert from 'node:assert/strict';
import { it } from 'node:test';
import { login } from '../../../test/helpers/auth.ts';
import { forEachEngine, json } from '../../../test/helpers/context.ts';
import { createTestOrg, createTestUser } from '../../../test/helpers/factories.ts';
import { jpeg, uploadAsset } from '../../../test/helpers/assets.ts';

/**
 * The reference's own training flow (reference §8.1–8.2, §9.2): sign in, page through
 * POST /search/keyword with the published body while hitCount === limit, then build a collection
 * from the results' objectIds (collectionDocument) with metadataDocument as the string '[]' —
 * sent the way its clients send requests (gateway X-API-Key, AccessToken and raw Authorization,
 * Content-Type, a trailing slash).
 */
forEachEngine("collections: the reference's training round trip", (ctx) => {
  it('keyword search with the published body, then a collection of the objectIds', async () => {
    const c = ctx();
    const org = await createTestOrg(c);
    const user = await createTestUser(c, org, { groupIds: [org.groups.everyone], privileges: ['collection'] });
    const image = await jpeg(12, 12);
    const uploaded = [];
    for (let i = 0; i < 5; i++) {
      c.clock.advance(10);
      uploaded.push(await uploadAsset(c, org, image, `training-sample-${i}.jpg`));
    }
    await uploadAsset(c, org, image, 'unrelated.jpg');
    const session = (await login(c, user)).session;
    const headers = {
      'x-api-key': 'reference-gateway-key',
      accesstoken: session.accessToken,
      authorization: session.authorization,
      'content-type': 'application/json',
    };
    const objectIds: string[] = [];
    const limit = 2;
    for (let from = 0; ; from += limit) {
      const res = await c.inject({
        method: 'POST',
        url: '/v1/search/keyword/',
        headers,
        payload: {
          from,
          limit,
          searchTerm: ['training'],
          operation: 'AND',
          keywordSearchField: 'filename',
          includeDeleted: false,
          includeVersions: false,
          sortBy: [{ metadataDefinitionSearchField: 'createdepoch', order: 'asc' }],
          filters: [],
          excludes: ['technicalMetadataDocument'],
          aggregations: false,
        },
      });
      assert.equal(res.statusCode, 200, res.body);
      const body = json(res);
      objectIds.push(...body.result.map((r: { objectId: string }) => r.objectId));
      assert.ok(
        body.result.every((r: Record<string, unknown>) => !('technicalMetadataDocument' in r)),
        'excludes apply',
      );
      if (body.hitCount !== limit) break;
    }
    assert.deepEqual(
      objectIds,
      uploaded.map((u) => u.objectId),
      'every page, in creation order, nothing twice',
    );
    const created = await c.inject({
      method: 'POST',
      url: '/v1/collection/',
      headers,
      payload: {
        collectionType: 'private',
        name: 'Training set',
        collectionDocument: objectIds,
        metadataDocument: '[]',
      },
    });
    assert.equal(created.statusCode, 200, created.body);
    assert.equal(json(created).statusCode, 'success');
    const got = json(await c.inject({ method: 'GET', url: `/v1/collection/${json(created).collectionId}`, headers }));
    assert.deepEqual(
      got.collectionDocument,
      uploaded.map((u) => u.fileId),
      'stored by fileId, in the order given',
    );
  });
});
