import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { forEachEngine, json, type TestContext } from '../../../../test/helpers/context.ts';
import { createTestOrg, createTestUser, type TestOrg } from '../../../../test/helpers/factories.ts';
import { securitySuite } from '../../../../test/helpers/security.ts';
import { createTemplate } from '../../../../test/helpers/search.ts';
import { defaultTemplate } from '../../../../test/helpers/assets.ts';
import { sealPending, verifyChain } from '../../audit/index.ts';

const OTHER_UUID = '0190a4b2-0000-7000-8000-000000000000';

const countAssets = async (ctx: TestContext, org: TestOrg) =>
  Number(
    (
      await ctx.deps.db
        .selectFrom('assets')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('org_id', '=', org.orgId)
        .executeTakeFirstOrThrow()
    ).n,
  );
const createdEvents = async (ctx: TestContext, org: TestOrg) =>
  (
    await ctx.deps.db
      .selectFrom('events')
      .select('body')
      .where('org_id', '=', org.orgId)
      .where('type', '=', 'asset.created')
      .execute()
  ).map((e) => JSON.parse(e.body));

forEachEngine('assets: bulk creation of metadata-only assets (POST /v1/assets/bulk)', (ctx) => {
  let org: TestOrg;
  let TEMPLATE: string;
  const item = (title: string, over: Record<string, unknown> = {}) => ({
    metadataTemplateId: TEMPLATE,
    securityTemplateIds: [org.defaultTemplateId],
    metadata: [{ name: 'Title', value: title }],
    ...over,
  });
  const bulk = (assets: unknown[], headers = org.admin.headers) =>
    ctx().inject({ method: 'POST', url: '/v1/assets/bulk', headers, payload: { assets } });

  before(async () => {
    org = await createTestOrg(ctx());
    ({ id: TEMPLATE } = await defaultTemplate(ctx(), org));
  });

  it('creates the assets in request order, each readable by GET and findable by search', async () => {
    const titles = Array.from({ length: 25 }, (_, i) => `Quokka ${i}`);
    const res = await bulk(titles.map((t) => item(t)));
    assert.equal(res.statusCode, 200, res.body);
    const body = json(res);
    assert.equal(body.status, 'success');
    assert.equal(body.data.length, 25);
    for (const [i, created] of body.data.entries()) {
      assert.equal(created.filename, 'metadata-only');
      assert.equal(created.versionNumber, 1);
      assert.equal(created.fileId, created.originalFileId);
      assert.equal(created.url, undefined);
      const got = await ctx().inject({
        method: 'GET',
        url: `/v1/assets/asset/${created.objectId}?system=false&empty=false`,
        headers: org.admin.headers,
      });
      assert.equal(got.statusCode, 200, got.body);
      assert.deepEqual(json(got).data.metadata, [{ name: 'Title', value: titles[i] }]);
      assert.deepEqual(json(got).data.securityTemplates, [{ id: org.defaultTemplateId, name: 'Default' }]);
    }
    const legacy = json(
      await ctx().inject({ method: 'GET', url: `/v1/asset/${body.data[0].objectId}`, headers: org.admin.headers }),
    );
    assert.equal(legacy.contentState, 'none');
    assert.equal(legacy.currentVersion, 'Y');
    assert.deepEqual(legacy.securityTemplateIds, [org.defaultTemplateId]);
    const found = json(
      await ctx().inject({
        method: 'POST',
        url: '/v1/search/keyword',
        headers: org.admin.headers,
        payload: { searchTerm: ['quokka'] },
      }),
    );
    assert.equal(found.totalCount, 25);
    assert.deepEqual(
      new Set(found.result.map((r: { objectId: string }) => r.objectId)),
      new Set(body.data.map((d: { objectId: string }) => d.objectId)),
    );
  });

  it('creates 1000 assets (the maximum) in one request with one asset.created event each, as single create publishes it', async () => {
    const before = await countAssets(ctx(), org);
    const eventsBefore = (await createdEvents(ctx(), org)).length;
    const res = await bulk(
      Array.from({ length: 1000 }, (_, i) =>
        item(`Wombat ${i}`, {
          metadata: [
            { name: 'Title', value: `Wombat ${i}` },
            { name: 'Creator', value: 'Bulk' },
          ],
        }),
      ),
    );
    assert.equal(res.statusCode, 200, res.body.slice(0, 500));
    const ids: string[] = json(res).data.map((d: { objectId: string }) => d.objectId);
    assert.equal(new Set(ids).size, 1000);
    assert.equal(await countAssets(ctx(), org), before + 1000);
    const events = await createdEvents(ctx(), org);
    assert.equal(events.length, eventsBefore + 1000);
    const bulkEvents = events.filter((e) => ids.includes(e.asset.id));
    assert.equal(bulkEvents.length, 1000);
    // The same payload as a single create's event.
    const single = json(
      await ctx().inject({
        method: 'POST',
        url: '/v1/assets/asset',
        headers: org.admin.headers,
        payload: item('Single'),
      }),
    ).data;
    const singleEvent = (await createdEvents(ctx(), org)).find((e) => e.asset.id === single.objectId);
    const strip = (e: any) => ({ ...e, event: { ...e.event, id: 'x', time: 'x' }, asset: { ...e.asset, id: 'x' } });
    assert.deepEqual(strip(bulkEvents[0]), strip(singleEvent));
    assert.equal(bulkEvents[0].event.user.id, org.admin.userId);
  });

  it('writes each audit row sealed into the chain at insert (no second write); rows written unsealed before it are sealed after it, and the chain verifies', async () => {
    const { db, keys } = ctx().deps;
    const auditRows = (ids: string[]) =>
      db.selectFrom('audit_log').select(['target_id', 'seq', 'hash']).where('target_id', 'in', ids).execute();
    // A single create leaves its audit row for the sealer.
    const single = json(
      await ctx().inject({
        method: 'POST',
        url: '/v1/assets/asset',
        headers: org.admin.headers,
        payload: item('Lone'),
      }),
    ).data;
    assert.equal((await auditRows([single.objectId]))[0]!.seq, null);
    const res = await bulk(Array.from({ length: 30 }, (_, i) => item(`Sealed ${i}`)));
    assert.equal(res.statusCode, 200, res.body);
    const ids: string[] = json(res).data.map((d: { objectId: string }) => d.objectId);
    const rows = await auditRows(ids);
    assert.equal(rows.length, 30);
    const seqs = rows.map((r) => Number(r.seq)).sort((a, b) => a - b);
    assert.ok(
      rows.every((r) => r.seq !== null && r.hash),
      'sealed when the answer arrives, with no sealer run',
    );
    assert.deepEqual(
      seqs,
      seqs.map((_, i) => seqs[0]! + i),
      'consecutive chain positions',
    );
    await sealPending(db, ctx().deps.engine, keys);
    assert.ok(Number((await auditRows([single.objectId]))[0]!.seq) > seqs.at(-1)!);
    const report = await verifyChain(db, keys, org.orgId);
    assert.equal(report.ok, true, JSON.stringify(report.broken));
    assert.equal(report.unsealed, 0);
  });

  it('keeps one chain when bulk creations, single creates and the sealer of one organization run at once', async () => {
    const { db, keys, engine } = ctx().deps;
    const results = await Promise.all([
      bulk(Array.from({ length: 40 }, (_, i) => item(`Racing A ${i}`))),
      bulk(Array.from({ length: 40 }, (_, i) => item(`Racing B ${i}`))),
      ctx().inject({ method: 'POST', url: '/v1/assets/asset', headers: org.admin.headers, payload: item('Racing C') }),
      sealPending(db, engine, keys),
      bulk(Array.from({ length: 40 }, (_, i) => item(`Racing D ${i}`))),
    ]);
    for (const r of results) if (typeof r !== 'number') assert.equal(r.statusCode, 200, r.body);
    await sealPending(db, engine, keys);
    const report = await verifyChain(db, keys, org.orgId);
    assert.equal(report.ok, true, JSON.stringify(report.broken));
    assert.equal(report.unsealed, 0);
  });

  it('creates nothing when any item is invalid, and names every bad item (400)', async () => {
    const assets = await countAssets(ctx(), org);
    const events = (await createdEvents(ctx(), org)).length;
    const res = await bulk([
      item('ok 0'),
      item('bad 1', { metadata: [{ name: 'No Such Attribute', value: 'x' }] }),
      item('ok 2'),
      item('bad 3', { metadataTemplateId: undefined }),
      item('bad 4', { securityTemplateIds: [OTHER_UUID] }),
      item('bad 5', { filename: 'photo.jpg' }),
      item('bad 6', { metadataTemplateId: 'not-a-uuid' }),
      item('bad 7', { securityTemplateIds: [] }),
      item('bad 8', { originalFileId: OTHER_UUID }),
      item('bad 9', { contentPath: 's3://bucket/file.jpg', filename: undefined }),
      item('ok 10'),
    ]);
    assert.equal(res.statusCode, 400, res.body);
    const body = json(res);
    assert.equal(body.code, 'validation_failed');
    const fields: string[] = body.details.map((d: { field: string }) => d.field);
    for (const [i, field] of [
      [1, 'metadata'],
      [3, 'metadataTemplateId'],
      [4, 'securityTemplateIds'],
      [5, 'filename'],
      [6, 'metadataTemplateId'],
      [7, 'securityTemplateIds'],
      [8, 'originalFileId'],
      [9, 'contentPath'],
    ] as const) {
      assert.ok(
        fields.some((f) => f.startsWith(`body.assets.${i}.${field}`)),
        `item ${i} ${field}: ${res.body}`,
      );
    }
    for (const i of [0, 2, 10])
      assert.ok(!fields.some((f) => f.startsWith(`body.assets.${i}.`)), `item ${i} is valid: ${res.body}`);
    assert.match(body.message, /^8 of 11 assets are invalid; nothing was created/);
    assert.equal(await countAssets(ctx(), org), assets);
    assert.equal((await createdEvents(ctx(), org)).length, events);
  });

  it('refuses an empty list and more than 1000 items with 400 naming body.assets', async () => {
    for (const assets of [[], Array.from({ length: 1001 }, (_, i) => item(`x ${i}`))]) {
      const res = await bulk(assets);
      assert.equal(res.statusCode, 400, res.body.slice(0, 300));
      assert.ok(
        json(res).details.some((d: { field: string }) => d.field === 'body.assets'),
        res.body.slice(0, 300),
      );
    }
    const missing = await ctx().inject({
      method: 'POST',
      url: '/v1/assets/bulk',
      headers: org.admin.headers,
      payload: {},
    });
    assert.equal(missing.statusCode, 400, missing.body);
    assert.ok(json(missing).details.some((d: { field: string }) => d.field === 'body.assets'));
  });

  it("checks the templates per item as single create does: a metadata template the caller may not use, another organization's security template", async () => {
    const restrictedAccess = await createTemplate(ctx(), org.orgId, { [org.groups.administrators]: ['view'] });
    const made = await ctx().inject({
      method: 'POST',
      url: '/v1/metadata/template',
      headers: org.admin.headers,
      payload: { name: `Restricted ${Date.now()}`, groupIds: [], accessTemplates: [restrictedAccess] },
    });
    assert.equal(made.statusCode, 201, made.body);
    const restricted = json(made).templateId;
    const uploader = await createTestUser(ctx(), org, { groupIds: [org.groups.everyone], privileges: ['upload'] });
    const stranger = await createTestOrg(ctx());
    const before = await countAssets(ctx(), org);
    const items = [
      item('a', { securityTemplateIds: [stranger.defaultTemplateId] }),
      item('b', { metadataTemplateId: restricted }),
      item('c'),
    ];
    // Single create refuses each of them the same way.
    for (const [i, field] of [
      [0, 'securityTemplateIds'],
      [1, 'metadataTemplateId'],
    ] as const) {
      const single = await ctx().inject({
        method: 'POST',
        url: '/v1/assets/asset',
        headers: uploader.headers,
        payload: items[i],
      });
      assert.equal(single.statusCode, 400, single.body);
      assert.ok(
        json(single).details.some((d: { field: string }) => d.field === `body.${field}`),
        single.body,
      );
    }
    const res = await bulk(items, uploader.headers);
    assert.equal(res.statusCode, 400, res.body);
    const fields = json(res).details.map((d: { field: string }) => d.field);
    assert.ok(fields.includes('body.assets.0.securityTemplateIds'), res.body);
    assert.ok(fields.includes('body.assets.1.metadataTemplateId'), res.body);
    assert.equal(fields.length, 2, res.body);
    assert.equal(await countAssets(ctx(), org), before);
    // The administrator may use the restricted template.
    const ok = await bulk([item('d', { metadataTemplateId: restricted }), item('e')]);
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(await countAssets(ctx(), org), before + 2);
  });

  it('accepts a large body up to its limit and answers an oversized one with the JSON 413', async () => {
    const long = 'x'.repeat(3000);
    const big = await bulk(
      Array.from({ length: 1000 }, () =>
        item('Long', {
          metadata: [
            { name: 'Title', value: 'Long' },
            { name: 'Description', value: long },
          ],
        }),
      ),
    );
    assert.equal(big.statusCode, 200, big.body.slice(0, 300));
    const huge = `{"assets":[{"metadataTemplateId":"${TEMPLATE}","securityTemplateIds":["${org.defaultTemplateId}"],"metadata":[{"name":"Title","value":"${'y'.repeat(17 * 1024 * 1024)}"}]}]}`;
    const res = await ctx().inject({
      method: 'POST',
      url: '/v1/assets/bulk',
      headers: { ...org.admin.headers, 'content-type': 'application/json' },
      payload: huge,
    });
    assert.equal(res.statusCode, 413, res.body.slice(0, 300));
    assert.equal(json(res).code, 'payload_too_large');
  });

  securitySuite(ctx, 'POST /v1/assets/bulk', {
    method: 'POST',
    privileges: ['upload'],
    prepare: async (c, o) => ({
      url: '/v1/assets/bulk',
      body: {
        assets: [
          {
            metadataTemplateId: (await defaultTemplate(c, o)).id,
            metadata: [],
            securityTemplateIds: [o.defaultTemplateId],
          },
        ],
      },
    }),
  });
});
