import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine, json, type TestContext } from '../../../test/helpers/context.ts';
import { createTestOrg, createTestUser, type TestOrg, type TestUser } from '../../../test/helpers/factories.ts';
import { securitySuite } from '../../../test/helpers/security.ts';
import { createGroup, createTemplate, docInput, indexDocs } from '../../../test/helpers/search.ts';

interface World {
  org: TestOrg;
  open: string;
  secret: string;
  alice: TestUser;
  bob: TestUser;
  ids: Record<string, string>;
}

/** Alice (group A) sees templates `open` and `secret`; Bob (group B) only `open`. */
async function world(ctx: TestContext): Promise<World> {
  const org = await createTestOrg(ctx);
  const a = await createGroup(ctx, org.orgId);
  const b = await createGroup(ctx, org.orgId);
  const open = await createTemplate(ctx, org.orgId, { [a]: ['view'], [b]: ['view', 'download'] });
  const secret = await createTemplate(ctx, org.orgId, { [a]: ['view'], [b]: ['download'] });
  const alice = await createTestUser(ctx, org, { groupIds: [a] });
  const bob = await createTestUser(ctx, org, { groupIds: [b] });
  const t0 = 1_700_000_000_000;
  const day = 86_400_000;
  const docs = [
    docInput(org.orgId, {
      filename: 'Red Car.jpg',
      securityTemplateIds: [open],
      metadataText: 'a fast red car on the road',
      createdEpoch: t0,
      updatedEpoch: t0 + 5,
      facets: [
        { facet: 'Agency', value: 'Sunset Images LLC' },
        { facet: 'File Type', value: 'jpg' },
      ],
      sorts: [
        { field: 'shoot_date', num: t0 - 10 * day },
        { field: 'title', txt: 'Red car' },
      ],
    }),
    docInput(org.orgId, {
      filename: 'blue-car.png',
      securityTemplateIds: [open],
      metadataText: 'blue car parked',
      createdEpoch: t0 + 1,
      updatedEpoch: t0 + 4,
      facets: [
        { facet: 'Agency', value: 'Moon Pictures' },
        { facet: 'File Type', value: 'png' },
      ],
      sorts: [
        { field: 'shoot_date', num: t0 - 5 * day },
        { field: 'title', txt: 'Blue car' },
      ],
    }),
    docInput(org.orgId, {
      filename: 'logo-final.svg',
      securityTemplateIds: [secret],
      metadataText: 'company logo red',
      createdEpoch: t0 + 2,
      updatedEpoch: t0 + 3,
      facets: [
        { facet: 'Agency', value: 'Sunset Images LLC' },
        { facet: 'File Type', value: 'svg' },
      ],
      sorts: [{ field: 'title', txt: 'Logo' }],
    }),
    docInput(org.orgId, {
      filename: 'logotype.pdf',
      securityTemplateIds: [secret, open],
      metadataText: 'brand guide',
      contentText: 'the car of the year',
      createdEpoch: t0 + 3,
      updatedEpoch: t0 + 2,
      facets: [
        { facet: 'Agency', value: 'Moon Pictures' },
        { facet: 'File Type', value: 'pdf' },
      ],
    }),
    docInput(org.orgId, {
      filename: 'old-car.jpg',
      securityTemplateIds: [open],
      metadataText: 'red car',
      deleted: true,
      createdEpoch: t0 + 4,
      updatedEpoch: t0 + 1,
      facets: [{ facet: 'File Type', value: 'jpg' }],
    }),
    docInput(org.orgId, {
      filename: 'Red Car v1.jpg',
      securityTemplateIds: [open],
      metadataText: 'a fast red car',
      currentVersion: false,
      createdEpoch: t0 + 5,
      updatedEpoch: t0,
      facets: [{ facet: 'File Type', value: 'jpg' }],
    }),
  ];
  await indexDocs(ctx, docs);
  const ids = Object.fromEntries(docs.map((d) => [d.filename, d.assetId]));
  return { org, open, secret, alice, bob, ids };
}

const names = (res: { json(): any }) => res.json().result.map((r: { filename: string }) => r.filename);

forEachEngine('search', (ctx) => {
  let w: World;
  const search = (user: TestUser, payload: unknown, url = '/v1/search/keyword') =>
    ctx().inject({ method: 'POST', url, headers: user.headers, payload });

  it('sets up a world', async () => {
    w = await world(ctx());
  });

  it('matches keywords with AND by default and OR on request; only what the caller may view', async () => {
    let res = await search(w.alice, { searchTerm: ['red', 'car'] });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(names(res).sort(), ['Red Car.jpg']);
    res = await search(w.alice, { searchTerm: ['red'] });
    assert.deepEqual(names(res).sort(), ['Red Car.jpg', 'logo-final.svg']);
    res = await search(w.bob, { searchTerm: ['red'] });
    assert.deepEqual(names(res), ['Red Car.jpg']);
    assert.equal(json(res).totalCount, 1);
    res = await search(w.bob, { searchTerm: ['logo', 'blue'], operation: 'or' });
    assert.deepEqual(names(res).sort(), ['blue-car.png']);
    res = await search(w.alice, { searchTerm: ['logo', 'blue'], operation: 'OR' });
    assert.deepEqual(names(res).sort(), ['blue-car.png', 'logo-final.svg']);
  });

  it('supports prefixes, phrases, targeted fields, wildcard, deleted and versions', async () => {
    assert.deepEqual(names(await search(w.alice, { searchTerm: ['logo*'] })).sort(), [
      'logo-final.svg',
      'logotype.pdf',
    ]);
    assert.deepEqual(names(await search(w.alice, { searchTerm: ['"fast red car"'] })).sort(), ['Red Car.jpg']);
    assert.deepEqual(names(await search(w.alice, { searchTerm: ['"red fast"'] })), []);
    assert.deepEqual(names(await search(w.alice, { searchTerm: ['car'], keywordSearchField: 'content' })), [
      'logotype.pdf',
    ]);
    assert.deepEqual(names(await search(w.alice, { searchTerm: ['car'], keywordSearchField: 'filename' })).sort(), [
      'Red Car.jpg',
      'blue-car.png',
    ]);
    assert.deepEqual(
      names(await search(w.alice, { searchTerm: [w.ids['blue-car.png']], keywordSearchField: 'assetId' })),
      ['blue-car.png'],
    );
    assert.equal(json(await search(w.alice, { searchTerm: ['*'] })).totalCount, 4);
    assert.equal(json(await search(w.alice, {})).totalCount, 4);
    assert.equal(json(await search(w.alice, { searchTerm: ['*'], includeDeleted: true })).totalCount, 5);
    assert.equal(
      json(await search(w.alice, { searchTerm: ['*'], includeDeleted: true, includeVersions: true })).totalCount,
      6,
    );
  });

  it('counts facets over visible matches only, and filters by facet terms', async () => {
    const alice = json(await search(w.alice, { searchTerm: ['*'] }));
    const agencyA = alice.facets.find((f: { facet_name: string }) => f.facet_name === 'Agency');
    assert.deepEqual(agencyA.values, [
      { key: 'Moon Pictures', doc_count: 2 },
      { key: 'Sunset Images LLC', doc_count: 2 },
    ]);
    const bob = json(await search(w.bob, { searchTerm: ['*'] }));
    const agencyB = bob.facets.find((f: { facet_name: string }) => f.facet_name === 'Agency');
    assert.deepEqual(agencyB.values, [
      { key: 'Moon Pictures', doc_count: 2 },
      { key: 'Sunset Images LLC', doc_count: 1 },
    ]);
    assert.deepEqual(names(await search(w.bob, { searchTerm: ['Agency: Sunset Images LLC'] })), ['Red Car.jpg']);
    assert.deepEqual(names(await search(w.alice, { searchTerm: ['agency: sunset images llc', 'logo'] })), [
      'logo-final.svg',
    ]);
    assert.deepEqual(names(await search(w.alice, { searchTerm: ['*'], filters: ['("File Type":"png")'] })), [
      'blue-car.png',
    ]);
    assert.equal(json(await search(w.alice, { searchTerm: ['*'], aggregations: false })).facets.length, 0);
    const only = json(await search(w.alice, { searchTerm: ['*'], facets: ['file type'] }));
    assert.deepEqual(
      only.facets.map((f: { facet_name: string }) => f.facet_name),
      ['File Type'],
    );
  });

  it('sorts by system fields and sortable attributes (missing values last), pages with from/limit', async () => {
    assert.deepEqual(
      names(await search(w.alice, { sortBy: [{ metadataDefinitionSearchField: 'createdEpoch', order: 'asc' }] })),
      ['Red Car.jpg', 'blue-car.png', 'logo-final.svg', 'logotype.pdf'],
    );
    assert.deepEqual(names(await search(w.alice, {})), [
      'Red Car.jpg',
      'blue-car.png',
      'logo-final.svg',
      'logotype.pdf',
    ]);
    assert.deepEqual(
      names(await search(w.alice, { sortBy: [{ metadataDefinitionSearchField: 'title', order: 'asc' }] })),
      ['blue-car.png', 'logo-final.svg', 'Red Car.jpg', 'logotype.pdf'],
    );
    assert.deepEqual(
      names(await search(w.alice, { sortBy: [{ metadataDefinitionSearchField: 'title', order: 'desc' }] })),
      ['Red Car.jpg', 'logo-final.svg', 'blue-car.png', 'logotype.pdf'],
    );
    assert.deepEqual(
      names(await search(w.alice, { sortBy: [{ metadataDefinitionSearchField: 'filename', order: 'asc' }] })),
      ['blue-car.png', 'logo-final.svg', 'logotype.pdf', 'Red Car.jpg'],
    );
    const page = json(
      await search(w.alice, {
        from: 1,
        limit: 2,
        sortBy: [{ metadataDefinitionSearchField: 'createdepoch', order: 'asc' }],
      }),
    );
    assert.deepEqual(
      page.result.map((r: { filename: string }) => r.filename),
      ['blue-car.png', 'logo-final.svg'],
    );
    assert.equal(page.hitCount, 2);
    assert.equal(page.totalCount, 4);
  });

  it('filters by date ranges on date attributes and system dates', async () => {
    const t0 = 1_700_000_000_000;
    assert.deepEqual(
      names(await search(w.alice, { dateRanges: [{ field: 'shoot_date', from: t0 - 7 * 86_400_000 }] })),
      ['blue-car.png'],
    );
    const d = new Date(t0 - 10 * 86_400_000);
    const us = `${String(d.getUTCMonth() + 1).padStart(2, '0')}/${String(d.getUTCDate()).padStart(2, '0')}/${d.getUTCFullYear()}`;
    assert.deepEqual(names(await search(w.alice, { dateRanges: [{ field: 'shoot_date', from: us, to: us }] })), [
      'Red Car.jpg',
    ]);
    assert.deepEqual(
      names(await search(w.alice, { dateRanges: [{ field: 'createdEpoch', from: t0 + 2, to: t0 + 3 }] })).sort(),
      ['logo-final.svg', 'logotype.pdf'],
    );
    const bad = await search(w.alice, { dateRanges: [{ field: 'shoot_date', from: 'yesterday-ish' }] });
    assert.equal(bad.statusCode, 400);
    assert.equal(json(bad).details[0].field, 'body.dateRanges.0.from');
  });

  it('POST /v1/search returns slim records with includes and caps limit at 50', async () => {
    const res = await search(
      w.alice,
      { searchTerm: ['blue'], includes: ['metadataTemplateId', 'metadataDocument.title'] },
      '/v1/search',
    );
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(Object.keys(json(res).result[0]).sort(), [
      'createdEpoch',
      'fileId',
      'filename',
      'lastUpdatedEpoch',
      'objectId',
      'originalFileId',
    ]);
    const over = await search(w.alice, { limit: 51 }, '/v1/search');
    assert.equal(over.statusCode, 400);
    assert.equal((await search(w.alice, { limit: 101 })).statusCode, 400);
    const rel = json(
      await search(
        w.alice,
        {
          searchTerm: ['red', 'car'],
          relevancy: true,
          sortBy: [{ metadataDefinitionSearchField: 'relevance', order: 'desc' }],
        },
        '/v1/search',
      ),
    );
    assert.ok(rel.result.length >= 3);
    assert.equal(rel.result[0].filename, 'Red Car.jpg');
  });

  it('rejects bad input naming the field', async () => {
    for (const [payload, field] of [
      [{ operation: 'XOR' }, 'body.operation'],
      [{ keywordSearchField: 'everything' }, 'body.keywordSearchField'],
      [{ sortBy: [{ metadataDefinitionSearchField: 'x', order: 'up' }] }, 'body.sortBy.0.order'],
      [{ filters: ['nonsense'] }, 'body.filters.0'],
      [{ from: -1 }, 'body.from'],
      [{ from: 9990, limit: 50 }, 'body.from'],
    ] as const) {
      const res = await search(w.alice, payload);
      assert.equal(res.statusCode, 400, `${JSON.stringify(payload)} → ${res.body}`);
      assert.ok(
        json(res).details.some((d: { field: string }) => d.field === field),
        res.body,
      );
    }
  });

  it('scans the whole result with an opaque cursor', async () => {
    const seen: string[] = [];
    let cursor: string | null | undefined;
    do {
      const res = await search(w.alice, { limit: 1, cursor, includeDeleted: true }, '/v1/asset/scan');
      assert.equal(res.statusCode, 200, res.body);
      const body = json(res);
      seen.push(...body.result.map((r: { filename: string }) => r.filename));
      cursor = body.cursor;
    } while (cursor);
    assert.deepEqual(seen.sort(), ['Red Car.jpg', 'blue-car.png', 'logo-final.svg', 'logotype.pdf', 'old-car.jpg']);
    const bad = await search(w.alice, { cursor: 'garbage' }, '/v1/asset/scan');
    assert.equal(bad.statusCode, 400);
  });

  it('starts a scan `from` a position of the result, and its cursor continues from there', async () => {
    const sortBy = [{ metadataDefinitionSearchField: 'filename', order: 'asc' }];
    const whole = json(
      await search(w.alice, { limit: 1000, includeDeleted: true, sortBy }, '/v1/asset/scan'),
    ).result.map((r: { filename: string }) => r.filename);
    assert.equal(whole.length, 5);
    const first = json(await search(w.alice, { limit: 2, from: 2, includeDeleted: true, sortBy }, '/v1/asset/scan'));
    assert.deepEqual(
      first.result.map((r: { filename: string }) => r.filename),
      whole.slice(2, 4),
    );
    const rest = json(
      await search(w.alice, { limit: 10, cursor: first.cursor, includeDeleted: true, sortBy }, '/v1/asset/scan'),
    );
    assert.deepEqual(
      rest.result.map((r: { filename: string }) => r.filename),
      whole.slice(4),
    );
    assert.equal(rest.cursor, null);
    const past = json(await search(w.alice, { from: 99, includeDeleted: true, sortBy }, '/v1/asset/scan'));
    assert.deepEqual([past.result.length, past.cursor], [0, null]);
    for (const body of [{ from: -1 }, { from: 1.5 }, { from: 1, cursor: first.cursor, sortBy }]) {
      const res = await search(w.alice, { includeDeleted: true, ...body }, '/v1/asset/scan');
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(json(res).details[0].field, 'body.from', res.body);
    }
  });

  it('scans without duplicates or gaps while assets are added, changed and removed', async () => {
    const c = ctx();
    const org = await createTestOrg(c);
    const g = await createGroup(c, org.orgId);
    const t = await createTemplate(c, org.orgId, { [g]: ['view'] });
    const user = await createTestUser(c, org, { groupIds: [g] });
    const { removeDocuments } = await import('./index.ts');
    const docs = Array.from({ length: 30 }, (_, i) =>
      docInput(org.orgId, {
        filename: `scan-${i}.jpg`,
        securityTemplateIds: [t],
        createdEpoch: 1_700_000_000_000 + i,
        updatedEpoch: 1_700_000_000_000 + i,
      }),
    );
    await indexDocs(c, docs);
    for (const sortBy of [undefined, [{ metadataDefinitionSearchField: 'createdEpoch', order: 'desc' }]]) {
      const seen: string[] = [];
      const removed = new Set<string>();
      let cursor: string | null = null;
      let round = 0;
      do {
        const res = await c.inject({
          method: 'POST',
          url: '/v1/asset/scan',
          headers: user.headers,
          payload: { limit: 4, ...(cursor ? { cursor } : {}), ...(sortBy ? { sortBy } : {}) },
        });
        assert.equal(res.statusCode, 200, res.body);
        const body = json(res);
        seen.push(...body.result.map((r: { objectId: string }) => r.objectId));
        cursor = body.cursor;
        round += 1;
        // Between pages: re-index (change) two assets, remove one, add one.
        const changed = docs
          .slice(round, round + 2)
          .map((d) => ({ ...d, metadataText: `changed ${round}`, updatedEpoch: d.updatedEpoch + 1000 * round }));
        await indexDocs(c, changed);
        const victim = docs[29 - round]!;
        if (!removed.has(victim.assetId)) {
          await removeDocuments(c.deps.db, c.deps.engine, [victim.assetId]);
          removed.add(victim.assetId);
        }
        const fresh = docInput(org.orgId, {
          filename: `late-${round}-${Math.random()}.jpg`,
          securityTemplateIds: [t],
          createdEpoch: 1_600_000_000_000 + round,
        });
        await indexDocs(c, [fresh]);
      } while (cursor);
      assert.equal(new Set(seen).size, seen.length, 'no duplicates');
      for (const d of docs)
        if (!removed.has(d.assetId))
          assert.ok(seen.includes(d.assetId), `${d.filename} was never removed, so it must be seen`);
      // Restore for the second order.
      await indexDocs(c, docs);
    }
  });

  for (const url of ['/v1/search/keyword', '/v1/search', '/v1/asset/scan']) {
    securitySuite(ctx, url, { method: 'POST', readScope: true, prepare: () => ({ url, body: { searchTerm: ['*'] } }) });
  }
});
