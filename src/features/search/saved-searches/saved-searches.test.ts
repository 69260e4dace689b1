import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine, json, type TestContext } from '../../../../test/helpers/context.ts';
import { createTestOrg, createTestUser, type TestOrg } from '../../../../test/helpers/factories.ts';
import { securitySuite } from '../../../../test/helpers/security.ts';
import { createGroup, createTemplate, docInput, indexDocs } from '../../../../test/helpers/search.ts';
import { runSavedSearchForViewer } from '../index.ts';
import { loadUserPrincipal } from '../../identity/index.ts';

forEachEngine('saved searches', (ctx) => {
  it("create, list, get, update, run with the viewer's own visibility, delete", async () => {
    const c = ctx();
    const org = await createTestOrg(c);
    const a = await createGroup(c, org.orgId);
    const b = await createGroup(c, org.orgId);
    const open = await createTemplate(c, org.orgId, { [a]: ['view'], [b]: ['view'] });
    const secret = await createTemplate(c, org.orgId, { [a]: ['view'] });
    const alice = await createTestUser(c, org, { groupIds: [a] });
    const bob = await createTestUser(c, org, { groupIds: [b] });
    const stranger = await createTestUser(c, org, { groupIds: [] });
    await indexDocs(c, [
      docInput(org.orgId, { filename: 'sun-open.jpg', securityTemplateIds: [open], metadataText: 'sunset' }),
      docInput(org.orgId, { filename: 'sun-secret.jpg', securityTemplateIds: [secret], metadataText: 'sunset' }),
      docInput(org.orgId, { filename: 'moon.jpg', securityTemplateIds: [open], metadataText: 'moon' }),
    ]);
    const created = await c.inject({
      method: 'POST',
      url: '/v1/saved-searches',
      headers: alice.headers,
      payload: {
        name: 'Sunsets',
        query: { searchTerm: ['sunset'], sortBy: [{ metadataDefinitionSearchField: 'filename', order: 'asc' }] },
      },
    });
    assert.equal(created.statusCode, 201, created.body);
    const s = json(created);
    assert.equal(s.visibility, 'private');
    assert.equal(
      (await c.inject({ method: 'GET', url: `/v1/saved-searches/${s.id}`, headers: bob.headers })).statusCode,
      404,
    );
    const run = (user: { headers: Record<string, string> }) =>
      c.inject({ method: 'POST', url: `/v1/saved-searches/${s.id}/run`, headers: user.headers });
    assert.deepEqual(
      json(await run(alice)).result.map((r: { filename: string }) => r.filename),
      ['sun-open.jpg', 'sun-secret.jpg'],
    );
    assert.equal((await run(bob)).statusCode, 404);

    // Share through `open`: Bob now sees the search, and running it shows him only his assets.
    const shared = await c.inject({
      method: 'PATCH',
      url: `/v1/saved-searches/${s.id}`,
      headers: alice.headers,
      payload: { securityTemplateIds: [open], description: 'golden hour' },
    });
    assert.equal(shared.statusCode, 200, shared.body);
    assert.equal(json(shared).visibility, 'shared');
    const bobRun = json(await run(bob));
    assert.deepEqual(
      bobRun.result.map((r: { filename: string }) => r.filename),
      ['sun-open.jpg'],
    );
    assert.equal(bobRun.totalCount, 1);
    assert.equal((await run(stranger)).statusCode, 404);
    const principal = await loadUserPrincipal(c.deps.db, bob.userId);
    const direct = await runSavedSearchForViewer(c.deps, principal!, s.id, { limit: 10 });
    assert.equal(direct.total, 1, 'the function story boards call gives the same answer');

    const list = json(
      await c.inject({ method: 'GET', url: '/v1/saved-searches?searchTerm=sun', headers: bob.headers }),
    );
    assert.deepEqual(
      list.result.map((x: { id: string }) => x.id),
      [s.id],
    );
    assert.equal(list.totalCount, 1);
    assert.equal(
      (
        await c.inject({
          method: 'PATCH',
          url: `/v1/saved-searches/${s.id}`,
          headers: bob.headers,
          payload: { name: 'mine now' },
        })
      ).statusCode,
      403,
    );
    assert.equal(
      (await c.inject({ method: 'DELETE', url: `/v1/saved-searches/${s.id}`, headers: bob.headers })).statusCode,
      403,
    );

    for (const [payload, field] of [
      [{ name: 'x', query: { operation: 'NAND' } }, 'body.operation'],
      [{ name: 'x', query: {}, securityTemplateIds: [secret] }, 'body.securityTemplateIds.0'],
      [{ query: {} }, 'body.name'],
    ] as const) {
      const res = await c.inject({ method: 'POST', url: '/v1/saved-searches', headers: bob.headers, payload });
      assert.equal(res.statusCode, 400, res.body);
      assert.ok(
        JSON.stringify(json(res).details ?? []).includes(field) ||
          json(res).message.includes(field.replace('body.', '')),
        res.body,
      );
    }
    assert.equal(
      (await c.inject({ method: 'DELETE', url: `/v1/saved-searches/${s.id}`, headers: alice.headers })).statusCode,
      204,
    );
    assert.equal(
      (await c.inject({ method: 'GET', url: `/v1/saved-searches/${s.id}`, headers: alice.headers })).statusCode,
      404,
    );
  });

  const make = async (c: TestContext, org: TestOrg) => {
    const res = await c.inject({
      method: 'POST',
      url: '/v1/saved-searches',
      headers: org.admin.headers,
      payload: { name: 'x', query: {}, securityTemplateIds: [org.defaultTemplateId] },
    });
    assert.equal(res.statusCode, 201, res.body);
    return json(res).id as string;
  };
  securitySuite(ctx, 'POST /v1/saved-searches', {
    method: 'POST',
    prepare: () => ({ url: '/v1/saved-searches', body: { name: 'x', query: {} } }),
  });
  securitySuite(ctx, 'GET /v1/saved-searches', { method: 'GET', prepare: () => ({ url: '/v1/saved-searches' }) });
  securitySuite(ctx, 'GET /v1/saved-searches/{id}', {
    method: 'GET',
    resource: true,
    prepare: async (c, org) => ({ url: `/v1/saved-searches/${await make(c, org)}` }),
  });
  securitySuite(ctx, 'PATCH /v1/saved-searches/{id}', {
    method: 'PATCH',
    resource: true,
    prepare: async (c, org) => ({ url: `/v1/saved-searches/${await make(c, org)}`, body: { name: 'y' } }),
  });
  securitySuite(ctx, 'DELETE /v1/saved-searches/{id}', {
    method: 'DELETE',
    resource: true,
    prepare: async (c, org) => ({ url: `/v1/saved-searches/${await make(c, org)}` }),
  });
  securitySuite(ctx, 'POST /v1/saved-searches/{id}/run', {
    method: 'POST',
    resource: true,
    readScope: true,
    prepare: async (c, org) => ({ url: `/v1/saved-searches/${await make(c, org)}/run`, body: {} }),
  });
});
