import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine, json } from '../../../test/helpers/context.ts';
import { createTestOrg } from '../../../test/helpers/factories.ts';
import { securitySuite } from '../../../test/helpers/security.ts';
import { signLaunch } from './launch-token.ts';

const MISSING = '0190a0a0-0000-7000-8000-00000000beef';

forEachEngine('adaptive templates: reference operations', (ctx) => {
  it('POST /v1/template accepts the reference body and answers a search result', async () => {
    const org = await createTestOrg(ctx());
    for (const payload of [
      { from: 0, limit: 50, searchTerm: ['*'], sortBy: [{ metadataDefinitionSearchField: 'template_title', order: 'asc' }], operation: 'AND' },
      { from: 0, limit: null, searchTerm: null, sortBy: null, operation: 'OR' },
      {},
    ]) {
      const res = await ctx().inject({ method: 'POST', url: '/v1/template/', headers: { ...org.admin.headers, 'content-type': 'application/json' }, payload });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(json(res), { hitCount: 0, totalCount: 0, from: 0, limit: 50, result: [] });
    }
    const plain = await ctx().inject({ method: 'POST', url: '/v1/template', headers: org.admin.headers, payload: { from: 0, limit: 10 } });
    assert.equal(plain.statusCode, 200, plain.body);
    for (const [payload, field] of [
      [{ limit: 101 }, 'limit'], [{ from: 10_001 }, 'from'], [{ operation: 'XOR' }, 'body.operation'],
      [{ sortBy: [{ metadataDefinitionSearchField: 'colour' }] }, 'body.sortBy.0.metadataDefinitionSearchField'],
      [{ sortBy: [{ metadataDefinitionSearchField: 'title', order: 'up' }] }, 'body.sortBy.0.order'],
    ] as const) {
      const res = await ctx().inject({ method: 'POST', url: '/v1/template', headers: org.admin.headers, payload });
      assert.equal(res.statusCode, 400, res.body);
      assert.ok(res.body.includes(field), res.body);
    }
  });

  it('POST /v1/template/launch: 404 for a template that does not exist or is not visible; 400 without templateId', async () => {
    const org = await createTestOrg(ctx());
    const res = await ctx().inject({ method: 'POST', url: '/v1/template/launch', headers: org.admin.headers, payload: { templateId: MISSING } });
    assert.equal(res.statusCode, 404);
    const bad = await ctx().inject({ method: 'POST', url: '/v1/template/launch', headers: org.admin.headers, payload: {} });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.body, /templateId/);
  });

  it('refuses to register an asset that does not exist, and launch pages of bad, forged or expired tokens are 404', async () => {
    const org = await createTestOrg(ctx());
    const res = await ctx().inject({ method: 'POST', url: '/v1/adaptive-templates', headers: org.admin.headers, payload: { assetId: MISSING } });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(json(res).details, [{ field: 'body.assetId', message: 'asset not found' }]);
    const forged = signLaunch({ hash: () => 'x'.repeat(43), encrypt: (s) => s, decrypt: (s) => s }, { t: MISSING, u: org.admin.userId, o: org.orgId, e: Date.now() + 60_000 });
    const expired = signLaunch(ctx().deps.keys, { t: MISSING, u: org.admin.userId, o: org.orgId, e: ctx().clock.now() - 1 });
    const unknownTemplate = signLaunch(ctx().deps.keys, { t: MISSING, u: org.admin.userId, o: org.orgId, e: ctx().clock.now() + 60_000 });
    for (const token of [forged, expired, unknownTemplate, 'x'.repeat(40)]) {
      for (const suffix of ['', '/render']) {
        const page = await ctx().inject({ method: 'GET', url: `/adaptive-templates/launch/${token}${suffix}` });
        assert.equal(page.statusCode, 404, `${suffix} ${page.body}`);
      }
      const save = await ctx().inject({ method: 'POST', url: `/adaptive-templates/launch/${token}/save`, payload: { values: {} } });
      assert.equal(save.statusCode, 404);
    }
  });
});

forEachEngine('adaptive templates: security suite', (ctx) => {
  const routes: [string, Parameters<typeof securitySuite>[2]][] = [
    ['/v1/template', { method: 'POST', prepare: () => ({ url: '/v1/template', body: { from: 0, limit: 10 } }) }],
    ['/v1/template/launch', { method: 'POST', prepare: () => ({ url: '/v1/template/launch', body: { templateId: MISSING } }) }],
    ['/v1/adaptive-templates', { method: 'POST', privileges: ['upload'], prepare: () => ({ url: '/v1/adaptive-templates', body: { assetId: MISSING } }) }],
    ['/v1/adaptive-templates/{id}', { method: 'GET', prepare: () => ({ url: `/v1/adaptive-templates/${MISSING}` }) }],
    ['/v1/adaptive-templates/{id}', { method: 'DELETE', privileges: ['upload'], prepare: () => ({ url: `/v1/adaptive-templates/${MISSING}` }) }],
  ];
  for (const [name, route] of routes) securitySuite(ctx, name, route);
});

