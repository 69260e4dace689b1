// Issue 14: GET of an asset by id is served from the asset view cache (asset-views.ts). Each case
// warms the cache (and checks the second request really was a hit), makes a change through the
// API, and checks the very next GET on this instance; a second instance in this process and one in
// another process see changes too; cached and uncached bodies are byte-identical; a caller who
// may not view a cached asset still gets 404. On SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { PERMISSIONS } from '../../../core/authz/catalog.ts';
import { revisionFeed } from '../../../core/db/revision.ts';
import { forEachEngine, json, type TestContext } from '../../../../test/helpers/context.ts';
import { createTestOrg, createTestUser } from '../../../../test/helpers/factories.ts';
import { loginHeaders } from '../../../../test/helpers/auth.ts';
import { secondInstanceForSuite } from '../../../../test/helpers/second-instance.ts';
import type { Worker } from '../../../core/jobs/worker.ts';
import { assetViews } from './asset-views.ts';
import { assetWorker, createAsset, defaultTemplate, jpeg, uploadAsset } from '../../../../test/helpers/assets.ts';

type Ctx = () => TestContext;
const legacy = (id: string) => `/v1/asset/${id}`;
const simplified = (id: string, query = '') => `/v1/assets/asset/${id}${query}`;

async function get(ctx: Ctx, url: string, headers: Record<string, string>) {
  return ctx().inject({ method: 'GET', url, headers });
}

/** Two GETs answering `status`; the second must be served from the asset view cache. */
async function warm(ctx: Ctx, url: string, headers: Record<string, string>, status = 200) {
  const cache = assetViews(ctx().deps);
  assert.equal((await get(ctx, url, headers)).statusCode, status);
  const hits = cache.stats.hits;
  const res = await get(ctx, url, headers);
  assert.equal(res.statusCode, status, res.body);
  assert.equal(cache.stats.hits, hits + 1, `${url}: the second GET was a cache hit`);
  return res;
}

/** An organization with a group G, a user of G only (signed in: the real principal cache), a template granting G View, and an asset under Default + that template. */
async function scene(ctx: Ctx) {
  const org = await createTestOrg(ctx());
  const group = json<{ groupId: string }>(
    await ctx().inject({
      method: 'POST',
      url: '/v1/security/groups',
      headers: org.admin.headers,
      payload: { groupName: `G ${Math.random()}` },
    }),
  ).groupId;
  const created = await ctx().inject({
    method: 'POST',
    url: '/v1/security/template',
    headers: org.admin.headers,
    payload: { templateName: 'Shared', securityDenormalized: [{ groupId: group, permissions: [PERMISSIONS.view.id] }] },
  });
  assert.equal(created.statusCode, 201, created.body);
  const template = json<{ templateId: string }>(created).templateId;
  const user = await createTestUser(ctx(), org, { groupIds: [group] });
  const userHeaders = await loginHeaders(ctx(), user);
  const { attr } = await defaultTemplate(ctx(), org);
  const asset = await createAsset(ctx(), org, {
    securityTemplateIds: [org.defaultTemplateId, template],
    metadata: [{ metadataDefinitionId: attr('title'), metadataDefinitionValue: 'First' }],
  });
  return { org, group, template, user, userHeaders, asset, attr };
}

const patch = async (ctx: Ctx, url: string, headers: Record<string, string>, payload: unknown) => {
  const res = await ctx().inject({ method: 'PATCH', url, headers, payload });
  assert.equal(res.statusCode, 200, res.body);
};

forEachEngine('asset views: every change shows on the next GET of this instance', (ctx) => {
  let worker: Worker;
  before(() => {
    worker = assetWorker(ctx());
  });
  after(async () => worker.stop());

  it('cached bodies are byte-identical to uncached ones (legacy, simplified with each option, HEAD)', async () => {
    const { org, asset } = await scene(ctx);
    const cached = await warm(ctx, legacy(asset.objectId), org.admin.headers);
    // /latest still takes the uncached path (row → presentLegacy → Fastify's serializer).
    const uncached = await get(ctx, `/v1/asset/${asset.objectId}/latest`, org.admin.headers);
    assert.equal(cached.body, uncached.body);
    assert.equal(cached.headers['content-type'], uncached.headers['content-type']);
    assert.equal(cached.headers['content-type'], 'application/json; charset=utf-8');
    for (const query of ['', '?system=false', '?empty=false', '?system=false&empty=false']) {
      assetViews(ctx().deps).clear();
      const miss = await get(ctx, simplified(asset.objectId, query), org.admin.headers);
      const hit = await warm(ctx, simplified(asset.objectId, query), org.admin.headers);
      assert.equal(hit.body, miss.body, query);
      assert.equal(hit.headers['content-type'], 'application/json; charset=utf-8');
      assert.equal(json(hit).data.objectId, asset.objectId);
    }
    const bare = json(await get(ctx, simplified(asset.objectId, '?system=false&empty=false'), org.admin.headers)).data
      .metadata;
    assert.deepEqual(bare, [{ name: 'Title', value: 'First' }], 'each option combination has its own body');
    const head = await ctx().inject({ method: 'HEAD', url: legacy(asset.objectId), headers: org.admin.headers });
    assert.equal(head.statusCode, 200);
    assert.equal(head.headers['content-length'], String(Buffer.byteLength(cached.body)));
    // By fileId: its own entry, the same body.
    assert.equal((await warm(ctx, legacy(asset.fileId), org.admin.headers)).body, cached.body);
  });

  it('a caller who may not view a cached asset gets 404, as for a missing one (other group, other organization)', async () => {
    const { org, asset } = await scene(ctx);
    await warm(ctx, legacy(asset.objectId), org.admin.headers);
    await warm(ctx, simplified(asset.objectId), org.admin.headers);
    const outsider = await createTestUser(ctx(), org, { groupIds: [] });
    const outsiderHeaders = await loginHeaders(ctx(), outsider);
    const other = await createTestOrg(ctx());
    for (const headers of [outsiderHeaders, other.admin.headers]) {
      for (const url of [legacy(asset.objectId), simplified(asset.objectId), legacy(asset.fileId)]) {
        const res = await get(ctx, url, headers);
        assert.equal(res.statusCode, 404, res.body);
        assert.equal(json(res).code, 'not_found');
      }
    }
    const missing = await get(ctx, legacy('0190a4b2-0000-7000-8000-000000000000'), org.admin.headers);
    assert.equal(missing.statusCode, 404);
    assert.equal(json(missing).message, json(await get(ctx, legacy(asset.objectId), outsiderHeaders)).message);
  });

  it('metadata update (legacy and simplified)', async () => {
    const { org, asset, attr, userHeaders } = await scene(ctx);
    await warm(ctx, legacy(asset.objectId), userHeaders);
    await warm(ctx, simplified(asset.objectId), userHeaders);
    await patch(ctx, legacy(asset.objectId), org.admin.headers, {
      metadata: [{ metadataDefinitionId: attr('title'), metadataDefinitionValue: 'Second' }],
    });
    assert.equal(json(await get(ctx, legacy(asset.objectId), userHeaders)).metadataDenormalized.title, 'Second');
    await warm(ctx, legacy(asset.objectId), userHeaders);
    await patch(ctx, simplified(asset.objectId), org.admin.headers, { metadata: [{ name: 'Title', value: 'Third' }] });
    assert.equal(json(await get(ctx, legacy(asset.objectId), userHeaders)).metadataDenormalized.title, 'Third');
    assert.ok(
      json(await get(ctx, simplified(asset.objectId), userHeaders)).data.metadata.some(
        (m: { name: string; value: unknown }) => m.name === 'Title' && m.value === 'Third',
      ),
    );
  });

  it("a change of the asset's security templates", async () => {
    const { org, asset, userHeaders } = await scene(ctx);
    await warm(ctx, legacy(asset.objectId), userHeaders);
    await patch(ctx, legacy(asset.objectId), org.admin.headers, { securityTemplateIds: [org.defaultTemplateId] });
    assert.equal((await get(ctx, legacy(asset.objectId), userHeaders)).statusCode, 404);
    assert.deepEqual(json(await get(ctx, legacy(asset.objectId), org.admin.headers)).securityTemplateIds, [
      org.defaultTemplateId,
    ]);
  });

  it("a change of a template's grants, and of its name", async () => {
    const { org, asset, group, template, userHeaders } = await scene(ctx);
    await warm(ctx, simplified(asset.objectId), userHeaders);
    await patch(ctx, `/v1/security/template/${template}`, org.admin.headers, { templateName: 'Renamed' });
    const names = json(await get(ctx, simplified(asset.objectId), userHeaders)).data.securityTemplates.map(
      (t: { name: string }) => t.name,
    );
    assert.ok(names.includes('Renamed'), names.join());
    await warm(ctx, legacy(asset.objectId), userHeaders);
    await patch(ctx, `/v1/security/template/${template}`, org.admin.headers, {
      securityDenormalized: [{ groupId: group, permissions: [PERMISSIONS.download.id] }],
    });
    assert.equal((await get(ctx, legacy(asset.objectId), userHeaders)).statusCode, 404);
    assert.equal((await get(ctx, simplified(asset.objectId), userHeaders)).statusCode, 404);
    await patch(ctx, `/v1/security/template/${template}`, org.admin.headers, {
      securityDenormalized: [{ groupId: group, permissions: [PERMISSIONS.view.id] }],
    });
    assert.equal((await get(ctx, legacy(asset.objectId), userHeaders)).statusCode, 200);
  });

  it('group membership: removed from the group, added back, group deleted', async () => {
    const { org, asset, group, user, userHeaders } = await scene(ctx);
    await warm(ctx, legacy(asset.objectId), userHeaders);
    await patch(ctx, `/v1/user/${user.userId}/remove-from-group`, org.admin.headers, { userGroupId: group });
    assert.equal((await get(ctx, legacy(asset.objectId), userHeaders)).statusCode, 404);
    await patch(ctx, `/v1/user/${user.userId}/add-to-group`, org.admin.headers, { userGroupId: group });
    await warm(ctx, legacy(asset.objectId), userHeaders);
    const deleted = await ctx().inject({
      method: 'DELETE',
      url: `/v1/security/groups/${group}`,
      headers: org.admin.headers,
    });
    assert.ok(deleted.statusCode < 300, deleted.body);
    assert.equal((await get(ctx, legacy(asset.objectId), userHeaders)).statusCode, 404);
    const securityDenormalized = json(await get(ctx, legacy(asset.objectId), org.admin.headers))
      .securityDenormalized as { groupId: string }[];
    assert.ok(!securityDenormalized.some((g) => g.groupId === group), 'the deleted group is gone from the cached body');
  });

  it('metadata template change (its name in the simplified body)', async () => {
    const { org, asset, userHeaders } = await scene(ctx);
    const { id } = await defaultTemplate(ctx(), org);
    await warm(ctx, simplified(asset.objectId), userHeaders);
    await patch(ctx, `/v1/metadata/template/${id}`, org.admin.headers, { name: 'Renamed template' });
    assert.deepEqual(json(await get(ctx, simplified(asset.objectId), userHeaders)).data.metadataTemplate, {
      id,
      name: 'Renamed template',
    });
  });

  it('recycle bin: delete, restore', async () => {
    const { org, asset, userHeaders } = await scene(ctx);
    await warm(ctx, legacy(asset.objectId), userHeaders);
    const action = async (name: 'delete' | 'undelete') => {
      const res = await ctx().inject({
        method: 'POST',
        url: `/v1/asset/${asset.objectId}/delete`,
        headers: org.admin.headers,
        payload: { action: name },
      });
      assert.equal(res.statusCode, 200, res.body);
    };
    await action('delete');
    assert.equal(json(await get(ctx, legacy(asset.objectId), userHeaders)).fileState, 'recycle bin');
    await warm(ctx, legacy(asset.objectId), userHeaders);
    await action('undelete');
    assert.equal(json(await get(ctx, legacy(asset.objectId), userHeaders)).fileState, 'available');
  });

  it('a new version moves the current flag of the old one', async () => {
    const { org, asset, userHeaders, template } = await scene(ctx);
    assert.equal(json(await warm(ctx, legacy(asset.objectId), userHeaders)).currentVersion, 'Y');
    const v2 = await createAsset(ctx(), org, {
      originalFileId: asset.originalFileId,
      securityTemplateIds: [org.defaultTemplateId, template],
    });
    assert.equal(v2.versionNumber, 2);
    assert.equal(json(await get(ctx, legacy(asset.objectId), userHeaders)).currentVersion, 'N');
    assert.equal(json(await get(ctx, legacy(v2.objectId), userHeaders)).currentVersion, 'Y');
  });

  it('rendition completion (a job on this instance) and purge', async () => {
    const org = await createTestOrg(ctx());
    // No worker while the asset is uploaded and its view cached: the signalled worker would otherwise
    // render it before the upload's answer whenever that answer waits (an index pass under load).
    await worker.stop();
    const asset = await uploadAsset(ctx(), org, await jpeg(300, 200), 'views.jpg');
    const before = json(await warm(ctx, legacy(asset.objectId), org.admin.headers));
    assert.notEqual(before.renditionsState, 'ready');
    worker = assetWorker(ctx());
    await worker.drain();
    const done = json(await get(ctx, legacy(asset.objectId), org.admin.headers));
    assert.equal(done.renditionsState, 'ready');
    assert.ok(done.renditions.imageThumb, JSON.stringify(done.renditions));
    await warm(ctx, legacy(asset.objectId), org.admin.headers);
    assert.equal(
      (
        await ctx().inject({
          method: 'POST',
          url: `/v1/asset/${asset.objectId}/delete`,
          headers: org.admin.headers,
          payload: { action: 'delete' },
        })
      ).statusCode,
      200,
    );
    await warm(ctx, legacy(asset.objectId), org.admin.headers);
    const purge = await ctx().inject({
      method: 'POST',
      url: '/v1/asset/purge',
      headers: org.admin.headers,
      payload: { objectIds: [asset.objectId] },
    });
    assert.equal(purge.statusCode, 200, purge.body);
    await worker.drain();
    assert.equal((await get(ctx, legacy(asset.objectId), org.admin.headers)).statusCode, 404);
    assert.equal((await get(ctx, simplified(asset.objectId), org.admin.headers)).statusCode, 404);
  });

  it('asset writes move only the content generation: principal caches are kept', async () => {
    const { org, asset, attr } = await scene(ctx);
    const feed = revisionFeed(ctx().deps.db);
    const identity = feed.generation;
    const content = feed.contentGeneration;
    await patch(ctx, legacy(asset.objectId), org.admin.headers, {
      metadata: [{ metadataDefinitionId: attr('title'), metadataDefinitionValue: 'Moved' }],
    });
    assert.ok(feed.contentGeneration > content, 'the content generation moved before the call returned');
    for (const action of ['delete', 'undelete']) {
      const res = await ctx().inject({
        method: 'POST',
        url: `/v1/asset/${asset.objectId}/delete`,
        headers: org.admin.headers,
        payload: { action },
      });
      assert.equal(res.statusCode, 200, res.body);
    }
    await createAsset(ctx(), org, { originalFileId: asset.originalFileId });
    assert.equal(feed.generation, identity, 'asset writes leave the identity generation alone');
    // An identity change moves both.
    const before = feed.contentGeneration;
    await patch(ctx, `/v1/security/template/${org.defaultTemplateId}`, org.admin.headers, { description: 'changed' });
    assert.ok(feed.generation > identity);
    assert.ok(feed.contentGeneration > before);
  });

  it("this instance's own write stales its views once: the polls that follow it move nothing", async () => {
    const { org, asset, attr } = await scene(ctx);
    await worker.drain();
    const feed = revisionFeed(ctx().deps.db);
    await new Promise((r) => setTimeout(r, 600));
    const before = feed.contentGeneration;
    await patch(ctx, legacy(asset.objectId), org.admin.headers, {
      metadata: [{ metadataDefinitionId: attr('title'), metadataDefinitionValue: 'Once' }],
    });
    // Two polls run in 600 ms; each reads the value this instance's own write already recorded.
    await new Promise((r) => setTimeout(r, 600));
    assert.equal(feed.contentGeneration, before + 1, 'one write moved the content generation once');
    await warm(ctx, legacy(asset.objectId), org.admin.headers);
  });

  it('a second instance in this process sees each change at once', async () => {
    const second = await ctx().secondInstance();
    const { org, asset, attr, userHeaders } = await scene(ctx);
    const remote = (url: string, headers: Record<string, string>) => second.app.inject({ method: 'GET', url, headers });
    for (let i = 0; i < 2; i++) assert.equal((await remote(legacy(asset.objectId), userHeaders)).statusCode, 200);
    await patch(ctx, legacy(asset.objectId), org.admin.headers, {
      metadata: [{ metadataDefinitionId: attr('title'), metadataDefinitionValue: 'Elsewhere' }],
    });
    assert.equal(json(await remote(legacy(asset.objectId), userHeaders)).metadataDenormalized.title, 'Elsewhere');
    await patch(ctx, legacy(asset.objectId), org.admin.headers, { securityTemplateIds: [org.defaultTemplateId] });
    assert.equal((await remote(legacy(asset.objectId), userHeaders)).statusCode, 404);
  });
});

// Across processes: a second Tessera process on the same database (the 250 ms poll of the
// revision counters, on both engines) shows each change within 1 s.
const DEADLINE_MS = 1000;

forEachEngine(
  'asset views: a change reaches another process within 1 s',
  (ctx) => {
    const instance = secondInstanceForSuite(ctx);

    const remote = async (path: string, headers: Record<string, string>) => {
      const res = await fetch(`${instance().url}${path}`, { headers });
      return { status: res.status, body: await res.text() };
    };

    /** Served twice by the other process (cached there), then the change, then polled until `seen` holds or the deadline passes. */
    async function honoured(
      path: string,
      headers: Record<string, string>,
      change: () => Promise<void>,
      seen: (r: { status: number; body: string }) => boolean,
    ): Promise<void> {
      assert.equal((await remote(path, headers)).status, 200);
      assert.equal((await remote(path, headers)).status, 200);
      await change();
      await eventually(path, headers, seen);
    }

    async function eventually(
      path: string,
      headers: Record<string, string>,
      seen: (r: { status: number; body: string }) => boolean,
    ): Promise<void> {
      const started = performance.now();
      for (;;) {
        const r = await remote(path, headers);
        if (seen(r)) return;
        assert.ok(
          performance.now() - started <= DEADLINE_MS,
          `${path} still answered ${r.status} ${Math.round(performance.now() - started)} ms after the change`,
        );
        await new Promise((r) => setTimeout(r, 10));
      }
    }

    it('metadata update, security template change on the asset, grant change, group removal', async () => {
      const { org, asset, attr, template, group, user, userHeaders } = await scene(ctx);
      const path = legacy(asset.objectId);
      await honoured(
        path,
        userHeaders,
        () =>
          patch(ctx, path, org.admin.headers, {
            metadata: [{ metadataDefinitionId: attr('title'), metadataDefinitionValue: 'Remote' }],
          }),
        (r) =>
          r.status === 200 &&
          (JSON.parse(r.body) as { metadataDenormalized: { title?: string } }).metadataDenormalized.title === 'Remote',
      );
      await honoured(
        path,
        userHeaders,
        () =>
          patch(ctx, `/v1/security/template/${template}`, org.admin.headers, {
            securityDenormalized: [{ groupId: group, permissions: [PERMISSIONS.download.id] }],
          }),
        (r) => r.status === 404,
      );
      await patch(ctx, `/v1/security/template/${template}`, org.admin.headers, {
        securityDenormalized: [{ groupId: group, permissions: [PERMISSIONS.view.id] }],
      });
      await eventually(path, userHeaders, (r) => r.status === 200);
      await honoured(
        path,
        userHeaders,
        () => patch(ctx, `/v1/user/${user.userId}/remove-from-group`, org.admin.headers, { userGroupId: group }),
        (r) => r.status === 404,
      );
      // The administrator (a real token: the other process has no test credentials) sees it through Default only.
      const adminHeaders = await loginHeaders(ctx(), org.admin);
      await honoured(
        path,
        adminHeaders,
        () => patch(ctx, path, org.admin.headers, { securityTemplateIds: [template] }),
        (r) => r.status === 404,
      );
    });
  },
  { realClock: true },
);
