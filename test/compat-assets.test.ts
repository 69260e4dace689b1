import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { forEachEngine, json } from './helpers/context.ts';
import { createTestOrg, type TestOrg } from './helpers/factories.ts';
import { login } from './helpers/auth.ts';
import { createAsset, defaultTemplate } from '../src/features/assets/assets.fixtures.ts';

/** Issue 24: what the reference's own client code still tripped on, asset side. */
forEachEngine('compatibility: assets (issue 24)', (ctx) => {
  let org: TestOrg;
  let attr: (searchField: string) => string;
  before(async () => {
    org = await createTestOrg(ctx());
    ({ attr } = await defaultTemplate(ctx(), org));
  });

  it('GET /v1/assets/{id} (the 1.5 change log\'s path) answers as GET /v1/assets/asset/{id}', async () => {
    const created = await createAsset(ctx(), org, { metadata: [{ metadataDefinitionId: attr('title'), metadataDefinitionValue: 'Photo' }] });
    const session = await login(ctx(), org.admin);
    // The live page's request: X-API-Key, Authorization (a bearer token), Content-Type; query empty, system.
    const headers = { 'x-api-key': 'customer-gateway-key', authorization: `Bearer ${session.session.authorization}`, 'content-type': 'application/json' };
    for (const query of ['', '?empty=false&system=false']) {
      const alias = await ctx().inject({ method: 'GET', url: `/v1/assets/${created.objectId}${query}`, headers });
      const canonical = await ctx().inject({ method: 'GET', url: `/v1/assets/asset/${created.objectId}${query}`, headers });
      assert.equal(alias.statusCode, 200, alias.body);
      assert.deepEqual(json(alias), json(canonical));
      assert.equal(json(alias).data.objectId, created.objectId);
    }
    const byFileId = await ctx().inject({ method: 'GET', url: `/v1/assets/${created.fileId}`, headers });
    assert.equal(json(byFileId).data.objectId, created.objectId);
    const missing = await ctx().inject({ method: 'GET', url: '/v1/assets/00000000-0000-4000-8000-000000000000', headers });
    assert.equal(missing.statusCode, 404);
    const doc = json(await ctx().inject({ method: 'GET', url: '/openapi.json' }));
    assert.equal(doc.paths['/v1/assets/{id}'].get.operationId, 'GetAssetSimplifiedAlias');
  });
});
