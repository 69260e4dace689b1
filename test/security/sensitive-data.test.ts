import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ALL_PERMISSIONS, ALL_PRIVILEGES } from '../../src/core/authz/catalog.ts';
import { createAsset } from '../helpers/assets.ts';
import { metadataApi } from '../helpers/metadata.ts';
import { forEachEngine, json, type TestContext } from '../helpers/context.ts';
import { createTestOrg, createTestUser } from '../helpers/factories.ts';
import { createGroup, createTemplate } from '../helpers/permissions.ts';
import { startReceiver } from '../helpers/receiver.ts';
import { runDeliveryOnce } from '../../src/features/webhooks/index.ts';
import { sign } from '../../src/features/webhooks/delivery/credentials/signing.ts';

/**
 * Issue 23, defect 3: attributes marked isRestricted are seen and written only with the Sensitive
 * Data privilege. For anyone else they do not exist in asset reads (both encodings, versions), in
 * search results, facets and saved searches, no text search finds their values, and naming one in
 * a filter, sort, range or write is a 403 naming the attribute.
 */
const SECRET = 'zqxsalary4711';

async function setUp(ctx: TestContext) {
  const org = await createTestOrg(ctx);
  const api = metadataApi(ctx, org);
  const salary = await api.attribute({
    name: 'Salary',
    type: 'text',
    isRestricted: true,
    facetable: true,
    sortable: true,
  });
  const headline = await api.attribute({ name: 'Headline', type: 'text', facetable: true });
  const group = await api.group('Pay', [salary.id, headline.id]);
  const template = (await api.template('Contracts', [group.id])).templateId as string;
  const people = await createGroup(ctx, org);
  const security = await createTemplate(ctx, org, [
    [people, ALL_PERMISSIONS],
    [org.groups.administrators, ALL_PERMISSIONS],
  ]);
  const reader = await createTestUser(ctx, org, {
    privileges: ALL_PRIVILEGES.filter((p) => p !== 'sensitive_data'),
    groupIds: [people],
  });
  const holder = await createTestUser(ctx, org, { privileges: ['sensitive_data', 'upload'], groupIds: [people] });
  const asset = await createAsset(ctx, org, {
    metadataTemplateId: template,
    securityTemplateIds: [security],
    metadata: [
      { metadataDefinitionId: salary.id, metadataDefinitionValue: SECRET },
      { metadataDefinitionId: headline.id, metadataDefinitionValue: 'public words' },
    ],
  });
  return { org, salary, headline, template, security, reader, holder, asset };
}

const post = (ctx: TestContext, url: string, headers: Record<string, string>, payload: unknown) =>
  ctx.inject({ method: 'POST', url, headers, payload: payload as object });

forEachEngine('security: Sensitive Data (isRestricted attributes)', (ctx) => {
  it('asset reads leave restricted attributes out for a caller without Sensitive Data: both encodings, latest, versions (cached views too)', async () => {
    const { asset, reader, holder, salary } = await setUp(ctx());
    const reads = [
      `/v1/asset/${asset.objectId}`,
      `/v1/assets/asset/${asset.objectId}`,
      `/v1/assets/asset/${asset.objectId}?empty=true`,
      `/v1/asset/${asset.objectId}/latest`,
      `/v1/asset/${asset.objectId}/version`,
    ];
    for (const url of reads) {
      // The holder first, then the reader twice: a view cached for one kind of reader never serves the other.
      const seen = await ctx().inject({ method: 'GET', url, headers: holder.headers });
      assert.equal(seen.statusCode, 200, seen.body);
      assert.match(seen.body, new RegExp(SECRET), `holder ${url}`);
      for (let i = 0; i < 2; i++) {
        const res = await ctx().inject({ method: 'GET', url, headers: reader.headers });
        assert.equal(res.statusCode, 200, res.body);
        assert.doesNotMatch(res.body, new RegExp(`${SECRET}|${salary.id}|"Salary"|"salary"`), `reader ${url}`);
        assert.match(res.body, /public words/, `reader ${url}`);
      }
    }
  });

  it('searches, scans, facets and saved searches show no restricted value or facet; filters, sorts and ranges on one are a 403 naming it', async () => {
    const { reader, holder, org } = await setUp(ctx());
    const bodies: [string, unknown][] = [
      ['/v1/search/keyword', { searchTerm: ['*'], facets: ['Salary', 'Headline'] }],
      [
        '/v1/search',
        {
          searchTerm: ['*'],
          includes: ['metadataDocument.salary', 'metadataDocument.headline', 'metadataDenormalized', 'metadata'],
        },
      ],
      ['/v1/asset/scan', { aggregations: true }],
    ];
    for (const [url, body] of bodies) {
      const full = await post(ctx(), url, holder.headers, body);
      assert.equal(full.statusCode, 200, full.body);
      assert.match(full.body, new RegExp(SECRET), `holder ${url}`);
      const res = await post(ctx(), url, reader.headers, body);
      assert.equal(res.statusCode, 200, res.body);
      assert.match(res.body, /public words/, `reader ${url}`);
      assert.doesNotMatch(res.body, new RegExp(`${SECRET}|"Salary"|"salary"`), `reader ${url}`);
    }
    // No text search finds a restricted value (its match would tell who holds it).
    const found = json(await post(ctx(), '/v1/search/keyword', reader.headers, { searchTerm: [SECRET] }));
    assert.equal(found.totalCount, 0);
    // Naming a restricted attribute is refused: a count or an order over it would show its values.
    for (const [url, body] of [
      ['/v1/search/keyword', { searchTerm: ['*'], filters: [`("Salary":"${SECRET}")`] }],
      ['/v1/search/keyword', { searchTerm: [`Salary: ${SECRET}`] }],
      ['/v1/search', { searchTerm: ['*'], sortBy: [{ metadataDefinitionSearchField: 'salary', order: 'asc' }] }],
      ['/v1/search', { searchTerm: ['*'], dateRanges: [{ field: 'salary', from: 0, to: 10 }] }],
      ['/v1/asset/scan', { filters: [`("salary":"${SECRET}")`] }],
    ] as const) {
      const res = await post(ctx(), url, reader.headers, body);
      assert.equal(res.statusCode, 403, `${url} ${JSON.stringify(body)}: ${res.body}`);
      assert.match(json(res).message, /Sensitive Data.*"Salary"/);
      assert.notEqual((await post(ctx(), url, holder.headers, body)).statusCode, 403, `holder ${url}`);
    }
    // A saved search (shared with the reader's group by the administrator) runs without them too.
    const saved = await post(ctx(), '/v1/saved-searches', org.admin.headers, {
      name: 'All',
      query: { searchTerm: ['*'] },
    });
    assert.equal(saved.statusCode, 201, saved.body);
    const id = json(saved).id;
    const runs = await post(ctx(), `/v1/saved-searches/${id}/run`, org.admin.headers, {});
    assert.match(runs.body, new RegExp(SECRET));
    const me = await post(ctx(), '/v1/saved-searches', reader.headers, { name: 'Mine', query: { searchTerm: ['*'] } });
    const mine = await post(ctx(), `/v1/saved-searches/${json(me).id}/run`, reader.headers, {});
    assert.equal(mine.statusCode, 200, mine.body);
    assert.match(mine.body, /public words/);
    assert.doesNotMatch(mine.body, new RegExp(`${SECRET}|"Salary"`));
  });

  it('writes to a restricted attribute without Sensitive Data are a 403 naming it, in every encoding and route; other attributes still change', async () => {
    const { asset, reader, holder, salary, headline, template, security, org } = await setUp(ctx());
    const read = async () =>
      json(await ctx().inject({ method: 'GET', url: `/v1/asset/${asset.objectId}`, headers: org.admin.headers }))
        .metadataDenormalized;
    const attempts: { method: 'PATCH' | 'POST'; url: string; payload: unknown }[] = [
      {
        method: 'PATCH',
        url: `/v1/asset/${asset.objectId}`,
        payload: { metadata: [{ metadataDefinitionId: salary.id, metadataDefinitionValue: 'changed' }] },
      },
      {
        method: 'PATCH',
        url: `/v1/asset/${asset.objectId}`,
        payload: { metadata: [{ metadataDefinitionId: salary.id }] },
      },
      {
        method: 'PATCH',
        url: `/v1/assets/asset/${asset.objectId}`,
        payload: { metadata: [{ name: 'Salary', value: 'changed' }] },
      },
      {
        method: 'PATCH',
        url: `/v1/assets/asset/${asset.objectId}`,
        payload: { metadata: [{ name: 'salary', value: null }] },
      },
      {
        method: 'PATCH',
        url: '/v1/asset',
        payload: {
          metadataTemplateId: template,
          objectIds: [asset.objectId],
          metadataDocument: [
            { metadataDefinitionId: salary.id, metadataDefinitionValue: 'changed', operation: 'replace' },
          ],
        },
      },
      {
        method: 'POST',
        url: '/v1/asset',
        payload: {
          metadataTemplateId: template,
          securityTemplateIds: [security],
          metadata: [{ metadataDefinitionId: salary.id, metadataDefinitionValue: 'mine' }],
        },
      },
      {
        method: 'POST',
        url: '/v1/assets/asset',
        payload: {
          metadataTemplateId: template,
          securityTemplateIds: [security],
          metadata: [{ name: 'Salary', value: 'mine' }],
        },
      },
      {
        method: 'POST',
        url: '/v1/assets/bulk',
        payload: {
          assets: [
            {
              metadataTemplateId: template,
              securityTemplateIds: [security],
              metadata: [{ name: 'Salary', value: 'mine' }],
            },
          ],
        },
      },
    ];
    for (const a of attempts) {
      const res = await ctx().inject({
        method: a.method,
        url: a.url,
        headers: reader.headers,
        payload: a.payload as object,
      });
      assert.equal(res.statusCode, 403, `${a.method} ${a.url} ${JSON.stringify(a.payload)}: ${res.body}`);
      assert.match(json(res).message, /Sensitive Data.*"Salary"/);
    }
    assert.equal((await read()).salary, SECRET);
    // Other attributes change; the hidden value stays (a round trip of what the reader sees keeps it).
    const seen = json(
      await ctx().inject({ method: 'GET', url: `/v1/asset/${asset.objectId}`, headers: reader.headers }),
    );
    const edited = seen.metadata.map((i: { metadataDefinitionId: string }) =>
      i.metadataDefinitionId === headline.id ? { ...i, metadataDefinitionValue: 'new words' } : i,
    );
    const ok = await ctx().inject({
      method: 'PATCH',
      url: `/v1/asset/${asset.objectId}`,
      headers: reader.headers,
      payload: { metadata: edited },
    });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.deepEqual([(await read()).salary, (await read()).headline], [SECRET, 'new words']);
    // The holder of Sensitive Data writes it.
    const byHolder = await ctx().inject({
      method: 'PATCH',
      url: `/v1/assets/asset/${asset.objectId}`,
      headers: holder.headers,
      payload: { metadata: [{ name: 'Salary', value: 'raised' }] },
    });
    assert.equal(byHolder.statusCode, 200, byHolder.body);
    assert.equal((await read()).salary, 'raised');
  });

  it('a restricted column of a table attribute is hidden inside the table on read, and refused on write (rows sent back keep the hidden cells)', async () => {
    const org = await createTestOrg(ctx());
    const api = metadataApi(ctx(), org);
    const name = await api.attribute({ name: 'Member', type: 'text' });
    const pay = await api.attribute({ name: 'Pay', type: 'text', isRestricted: true });
    const crew = await api.attribute({ name: 'Crew', type: 'table', tableFieldIds: [name.id, pay.id] });
    const group = await api.group('Crew group', [crew.id]);
    const template = (await api.template('Crew template', [group.id])).templateId as string;
    const people = await createGroup(ctx(), org);
    const security = await createTemplate(ctx(), org, [
      [people, ALL_PERMISSIONS],
      [org.groups.administrators, ALL_PERMISSIONS],
    ]);
    const reader = await createTestUser(ctx(), org, {
      privileges: ALL_PRIVILEGES.filter((p) => p !== 'sensitive_data'),
      groupIds: [people],
    });
    const holder = await createTestUser(ctx(), org, { privileges: ['sensitive_data', 'upload'], groupIds: [people] });
    const rows = [
      [
        { metadataDefinitionId: name.id, metadataDefinitionValue: 'Ann' },
        { metadataDefinitionId: pay.id, metadataDefinitionValue: SECRET },
      ],
    ];
    const asset = await createAsset(ctx(), org, {
      metadataTemplateId: template,
      securityTemplateIds: [security],
      metadata: [{ metadataDefinitionId: crew.id, metadataDefinitionTableValue: rows }],
    });
    const reads = [
      `/v1/asset/${asset.objectId}`,
      `/v1/assets/asset/${asset.objectId}`,
      `/v1/asset/${asset.objectId}/latest`,
      `/v1/asset/${asset.objectId}/version`,
    ];
    for (const url of reads) {
      assert.match(
        (await ctx().inject({ method: 'GET', url, headers: holder.headers })).body,
        new RegExp(SECRET),
        `holder ${url}`,
      );
      for (let i = 0; i < 2; i++) {
        const res = await ctx().inject({ method: 'GET', url, headers: reader.headers });
        assert.equal(res.statusCode, 200, res.body);
        assert.doesNotMatch(res.body, new RegExp(`${SECRET}|${pay.id}|"Pay"|"pay"`), `reader ${url}`);
        assert.match(res.body, /Ann/, `reader ${url}`);
      }
    }
    const search = await post(ctx(), '/v1/search/keyword', reader.headers, { keyword: 'Ann', includes: ['metadata'] });
    assert.equal(search.statusCode, 200, search.body);
    assert.doesNotMatch(search.body, new RegExp(SECRET));

    const stored = async () =>
      JSON.stringify(
        json(await ctx().inject({ method: 'GET', url: `/v1/asset/${asset.objectId}`, headers: org.admin.headers }))
          .metadata,
      );
    // Writing the restricted column: a 403 naming it, nothing changes.
    const change = await ctx().inject({
      method: 'PATCH',
      url: `/v1/asset/${asset.objectId}`,
      headers: reader.headers,
      payload: {
        metadata: [
          {
            metadataDefinitionId: crew.id,
            metadataDefinitionTableValue: [
              [
                { metadataDefinitionId: name.id, metadataDefinitionValue: 'Ann' },
                { metadataDefinitionId: pay.id, metadataDefinitionValue: 'changed' },
              ],
            ],
          },
        ],
      },
    });
    assert.equal(change.statusCode, 403, change.body);
    assert.match(change.body, /Sensitive Data.*Pay/);
    const newRow = await ctx().inject({
      method: 'PATCH',
      url: `/v1/asset/${asset.objectId}`,
      headers: reader.headers,
      payload: {
        metadata: [
          {
            metadataDefinitionId: crew.id,
            metadataDefinitionTableValue: [
              [{ metadataDefinitionId: name.id, metadataDefinitionValue: 'Ann' }],
              [
                { metadataDefinitionId: name.id, metadataDefinitionValue: 'Bo' },
                { metadataDefinitionId: pay.id, metadataDefinitionValue: '1' },
              ],
            ],
          },
        ],
      },
    });
    assert.equal(newRow.statusCode, 403, newRow.body);
    const dropped = await ctx().inject({
      method: 'PATCH',
      url: `/v1/asset/${asset.objectId}`,
      headers: reader.headers,
      payload: { metadata: [{ metadataDefinitionId: crew.id }] },
    });
    assert.equal(dropped.statusCode, 403, 'clearing the table would clear the hidden cell');
    assert.match(await stored(), new RegExp(SECRET));
    // Sending back what the reader saw, with a visible cell changed: allowed, the hidden cell stays.
    const seen = json(
      await ctx().inject({ method: 'GET', url: `/v1/asset/${asset.objectId}`, headers: reader.headers }),
    ).metadata;
    const table = seen.find((i: { metadataDefinitionId: string }) => i.metadataDefinitionId === crew.id);
    table.metadataDefinitionTableValue[0][0].metadataDefinitionValue = 'Anna';
    const ok = await ctx().inject({
      method: 'PATCH',
      url: `/v1/asset/${asset.objectId}`,
      headers: reader.headers,
      payload: { metadata: [table] },
    });
    assert.equal(ok.statusCode, 200, ok.body);
    const after = await stored();
    assert.match(after, /Anna/);
    assert.match(after, new RegExp(SECRET));
    // The holder changes it.
    const byHolder = await ctx().inject({
      method: 'PATCH',
      url: `/v1/asset/${asset.objectId}`,
      headers: holder.headers,
      payload: {
        metadata: [
          {
            metadataDefinitionId: crew.id,
            metadataDefinitionTableValue: [
              [
                { metadataDefinitionId: name.id, metadataDefinitionValue: 'Anna' },
                { metadataDefinitionId: pay.id, metadataDefinitionValue: 'raised' },
              ],
            ],
          },
        ],
      },
    });
    assert.equal(byHolder.statusCode, 200, byHolder.body);
    assert.match(await stored(), /raised/);
  });

  it('collection metadata: restricted attributes and table columns are left out of reads and refused on write without Sensitive Data', async () => {
    const { org, salary, headline, reader, security } = await setUp(ctx());
    const api = metadataApi(ctx(), org);
    const name = await api.attribute({ name: 'Member', type: 'text' });
    const pay = await api.attribute({ name: 'Pay', type: 'text', isRestricted: true });
    const crew = await api.attribute({ name: 'Crew', type: 'table', tableFieldIds: [name.id, pay.id] });
    const document = [
      { metadataDefinitionId: salary.id, metadataDefinitionValue: SECRET },
      { metadataDefinitionId: headline.id, metadataDefinitionValue: 'public words' },
      {
        metadataDefinitionId: crew.id,
        metadataDefinitionTableValue: [
          [
            { metadataDefinitionId: name.id, metadataDefinitionValue: 'Ann' },
            { metadataDefinitionId: pay.id, metadataDefinitionValue: `${SECRET}pay` },
          ],
        ],
      },
    ];
    const made = await post(ctx(), '/v1/collection', org.admin.headers, {
      collectionType: 'secured',
      name: `c ${Math.random()}`,
      securityTemplateIds: [security],
      metadataDocument: document,
    });
    assert.equal(made.statusCode, 200, made.body);
    const id = json(made).collectionId as string;
    const url = `/v1/collection/${id}`;
    assert.match(
      (await ctx().inject({ method: 'GET', url, headers: org.admin.headers })).body,
      new RegExp(`${SECRET}pay`),
    );
    const seen = await ctx().inject({ method: 'GET', url, headers: reader.headers });
    assert.equal(seen.statusCode, 200, seen.body);
    assert.doesNotMatch(seen.body, new RegExp(`${SECRET}|${salary.id}|${pay.id}`));
    assert.match(seen.body, /public words/);
    assert.match(seen.body, /Ann/);

    const refused = [
      [{ metadataDefinitionId: salary.id, metadataDefinitionValue: 'changed' }],
      [{ name: 'Salary', value: 'changed' }],
      [
        {
          metadataDefinitionId: crew.id,
          metadataDefinitionTableValue: [[{ metadataDefinitionId: pay.id, metadataDefinitionValue: 'changed' }]],
        },
      ],
      [{ metadataDefinitionId: crew.id, metadataDefinitionTableValue: [] }],
    ];
    for (const metadata of refused) {
      const res = await ctx().inject({
        method: 'PATCH',
        url: `/v1/collections/${id}`,
        headers: reader.headers,
        payload: { metadata },
      });
      assert.equal(res.statusCode, 403, `${JSON.stringify(metadata)}: ${res.body}`);
      assert.match(res.body, /Sensitive Data/);
    }
    const create = await post(ctx(), '/v1/collection', reader.headers, {
      collectionType: 'private',
      name: `r ${Math.random()}`,
      metadataDocument: [{ metadataDefinitionId: salary.id, metadataDefinitionValue: 'x' }],
    });
    assert.equal(create.statusCode, 403, create.body);
    // What the reader saw, sent back with a visible change: the hidden values stay.
    const table = json(seen).metadataDocument.find(
      (m: { metadataDefinitionId: string }) => m.metadataDefinitionId === crew.id,
    );
    table.metadataDefinitionTableValue[0][0].metadataDefinitionValue = 'Anna';
    const ok = await ctx().inject({
      method: 'PATCH',
      url: `/v1/collections/${id}`,
      headers: reader.headers,
      payload: { metadata: [table, { metadataDefinitionId: headline.id, metadataDefinitionValue: 'new words' }] },
    });
    assert.equal(ok.statusCode, 200, ok.body);
    const after = (await ctx().inject({ method: 'GET', url, headers: org.admin.headers })).body;
    for (const expected of [SECRET, `${SECRET}pay`, 'Anna', 'new words']) assert.match(after, new RegExp(expected));
    assert.doesNotMatch(JSON.stringify(json(ok)), new RegExp(SECRET), "the update answer is the reader's view");
  });

  it('webhooks: collection.metadata.updated carries restricted values only to an endpoint whose owner holds Sensitive Data (checked at each delivery)', async () => {
    const { org, salary, headline, security, reader } = await setUp(ctx());
    const owner = await createTestUser(ctx(), org, {
      privileges: ['webhooks_administration', 'sensitive_data'],
    });
    const receivers = { admin: await startReceiver(), reader: await startReceiver(), owner: await startReceiver() };
    try {
      const endpoint = async (headers: Record<string, string>, url: string) => {
        const res = await post(ctx(), '/webhooks/endpoint', headers, [
          { description: 'Sensitive', url, eventTypes: ['collection.metadata.updated'] },
        ]);
        assert.equal(res.statusCode, 200, res.body);
        return json(res) as { id: string; secret: string };
      };
      const admin = await endpoint(org.admin.headers, receivers.admin.url);
      const byReader = await endpoint(reader.headers, receivers.reader.url);
      await endpoint(owner.headers, receivers.owner.url);
      const made = await post(ctx(), '/v1/collection', org.admin.headers, {
        collectionType: 'secured',
        name: `w ${Math.random()}`,
        securityTemplateIds: [security],
      });
      assert.equal(made.statusCode, 200, made.body);
      const id = json(made).collectionId as string;
      const update = async (n: number) => {
        const res = await ctx().inject({
          method: 'PATCH',
          url: `/v1/collections/${id}`,
          headers: org.admin.headers,
          payload: {
            metadata: [
              { metadataDefinitionId: salary.id, metadataDefinitionValue: `${SECRET}${n}` },
              { metadataDefinitionId: headline.id, metadataDefinitionValue: `public words ${n}` },
            ],
          },
        });
        assert.equal(res.statusCode, 200, res.body);
        await runDeliveryOnce(ctx().deps);
      };
      const last = (r: { received: { body: string; headers: Record<string, unknown> }[] }) => {
        const got = r.received.at(-1);
        assert.ok(got, 'delivered');
        return got;
      };
      await update(1);
      const toAdmin = last(receivers.admin);
      const toReader = last(receivers.reader);
      const toOwner = last(receivers.owner);
      // The administrator's endpoint and a Sensitive Data holder's get the restricted value.
      for (const got of [toAdmin, toOwner]) {
        assert.match(got.body, new RegExp(`${SECRET}1`));
        assert.match(got.body, /public words 1/);
      }
      // An endpoint made by someone without Sensitive Data: the attribute is left out, the rest stays.
      assert.doesNotMatch(toReader.body, new RegExp(`${SECRET}|${salary.id}`));
      const event = JSON.parse(toReader.body);
      assert.equal(event.eventType, 'collection.metadata.updated');
      assert.deepEqual(event.collection.metadata, [{ attributeId: headline.id, value: 'public words 1' }]);
      // What was sent is what was signed.
      const header = (got: { body: string; headers: Record<string, unknown> }, secret: string) => {
        const expected = sign(
          secret,
          String(got.headers['webhook-id']),
          Number(got.headers['webhook-timestamp']),
          got.body,
        );
        assert.ok(String(got.headers['webhook-signature']).split(' ').includes(expected), 'signature covers the body');
      };
      header(toReader, byReader.secret);
      header(toAdmin, admin.secret);

      // The owner loses Sensitive Data: from the next delivery on, their endpoint no longer gets restricted values.
      const role = await ctx()
        .deps.db.selectFrom('users')
        .select('role_id')
        .where('id', '=', owner.userId)
        .executeTakeFirstOrThrow();
      await ctx()
        .deps.db.updateTable('roles')
        .set({ privileges: JSON.stringify(['webhooks_administration']) })
        .where('id', '=', role.role_id)
        .execute();
      await update(2);
      assert.doesNotMatch(last(receivers.owner).body, new RegExp(`${SECRET}|${salary.id}`));
      assert.match(last(receivers.owner).body, /public words 2/);
      assert.match(last(receivers.admin).body, new RegExp(`${SECRET}2`));
      // An endpoint with no recorded owner (made before owners were recorded) never gets them.
      await ctx()
        .deps.db.updateTable('webhook_endpoints')
        .set({ created_by: null })
        .where('id', '=', admin.id)
        .execute();
      await update(3);
      assert.doesNotMatch(last(receivers.admin).body, new RegExp(`${SECRET}|${salary.id}`));
    } finally {
      for (const r of Object.values(receivers)) await r.close();
    }
  });
});
