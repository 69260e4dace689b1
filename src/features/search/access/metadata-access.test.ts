import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { forEachEngine, json } from '../../../../test/helpers/context.ts';
import { createTestOrg, createTestUser, type TestOrg, type TestUser } from '../../../../test/helpers/factories.ts';
import { jpeg, uploadAsset } from '../../../../test/helpers/assets.ts';
import { createGroup, createTemplate } from '../../../../test/helpers/search.ts';

/**
 * Reference §8.1: a caller also needs access to an asset's metadata template. Assets whose template
 * has access templates through none of which the caller holds View are left out of every search,
 * count, facet, filter, scan and collection listing; holders of Metadata Management see them.
 */
forEachEngine('search: metadata-template access', (ctx) => {
  let org: TestOrg;
  let outsider: TestUser;
  let insider: TestUser;
  let manager: TestUser;
  let press: { objectId: string; fileId: string };
  let plain: { objectId: string; fileId: string };
  const call = (user: TestUser, method: 'GET' | 'POST', url: string, payload?: unknown) =>
    ctx().inject({ method, url, headers: user.headers, payload });

  before(async () => {
    org = await createTestOrg(ctx());
    const pressGroup = await createGroup(ctx(), org.orgId);
    const access = await createTemplate(ctx(), org.orgId, {
      [org.groups.administrators]: ['view'],
      [pressGroup]: ['view'],
    });
    const made = await ctx().inject({
      method: 'POST',
      url: '/v1/metadata/template',
      headers: org.admin.headers,
      payload: { name: 'Press Release', groupIds: [], accessTemplates: [access] },
    });
    assert.equal(made.statusCode, 201, made.body);
    press = await uploadAsset(ctx(), org, await jpeg(8, 8), 'launch-press.jpg', {
      metadataTemplateId: json(made).templateId,
    });
    plain = await uploadAsset(ctx(), org, await jpeg(8, 8), 'launch-plain.jpg');
    outsider = await createTestUser(ctx(), org, { groupIds: [org.groups.everyone], privileges: ['collection'] });
    insider = await createTestUser(ctx(), org, {
      groupIds: [org.groups.everyone, pressGroup],
      privileges: ['collection'],
    });
    manager = await createTestUser(ctx(), org, {
      groupIds: [org.groups.everyone],
      privileges: ['collection', 'metadata_management'],
    });
  });

  it('leaves the assets of a template the caller may not see out of results, totals, facets and filters', async () => {
    const facetValues = (body: any) =>
      (body.facets.find((f: { facet_name: string }) => f.facet_name === 'Metadata Template')?.values ?? [])
        .map((v: { key: string }) => v.key)
        .sort();
    const out = json(await call(outsider, 'POST', '/v1/search/keyword', { searchTerm: ['launch'] }));
    assert.deepEqual(
      out.result.map((r: { objectId: string }) => r.objectId),
      [plain.objectId],
    );
    assert.equal(out.totalCount, 1);
    assert.deepEqual(facetValues(out), ['Default']);
    assert.equal(
      json(await call(outsider, 'POST', '/v1/search/keyword', { searchTerm: ['Metadata Template: Press Release'] }))
        .totalCount,
      0,
    );
    assert.equal(
      json(
        await call(outsider, 'POST', '/v1/search/keyword', {
          searchTerm: ['*'],
          filters: ['("Metadata Template":"Press Release")'],
        }),
      ).totalCount,
      0,
    );
    assert.equal(json(await call(outsider, 'POST', '/v1/search', { searchTerm: ['launch'] })).totalCount, 1);
    const scan = json(await call(outsider, 'POST', '/v1/asset/scan', { searchTerm: ['launch'], limit: 10 }));
    assert.deepEqual(
      scan.result.map((r: { objectId: string }) => r.objectId),
      [plain.objectId],
    );
    for (const who of [insider, manager]) {
      const all = json(await call(who, 'POST', '/v1/search/keyword', { searchTerm: ['launch'] }));
      assert.equal(all.totalCount, 2);
      assert.deepEqual(facetValues(all), ['Default', 'Press Release']);
    }
  });

  it('collections show and accept only members whose template the caller may see', async () => {
    const res = await call(manager, 'POST', '/v1/collection', {
      collectionType: 'secured',
      name: `Both ${Date.now()}`,
      securityTemplateIds: [org.defaultTemplateId],
      collectionDocument: [press.fileId, plain.fileId],
    });
    assert.equal(res.statusCode, 200, res.body);
    const id = json(res).collectionId;
    const seen = json(await call(outsider, 'GET', `/v1/collection/${id}`));
    assert.deepEqual(seen.collectionDocument, [plain.fileId]);
    assert.equal(json(await call(outsider, 'GET', `/v1/collection/${id}/assets?aggregations=true`)).totalCount, 1);
    assert.deepEqual(json(await call(insider, 'GET', `/v1/collection/${id}`)).collectionDocument, [
      press.fileId,
      plain.fileId,
    ]);
    const add = await call(outsider, 'POST', '/v1/collection', {
      collectionType: 'private',
      name: `Mine ${Date.now()}`,
      collectionDocument: [press.objectId],
    });
    assert.equal(add.statusCode, 400, add.body);
    assert.equal(json(add).details[0].field, 'body.collectionDocument.0');
  });
});
