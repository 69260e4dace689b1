import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine, json, type TestContext } from '../../../test/helpers/context.ts';
import { createTestOrg, createTestUser, type TestOrg, type TestUser } from '../../../test/helpers/factories.ts';
import { securitySuite } from '../../../test/helpers/security.ts';
import { createGroup, createTemplate, docInput, indexDocs } from '../../../test/helpers/search.ts';
import type { SearchDocumentInput } from '../search/index.ts';

interface World {
  org: TestOrg;
  open: string;
  secret: string;
  shelf: string;
  alice: TestUser;
  bob: TestUser;
  carol: TestUser;
  docs: SearchDocumentInput[];
}

/** Alice (group A) views `open` and `secret`; Bob (group B) only `open`; both view the `shelf` template collections use. */
async function world(ctx: TestContext): Promise<World> {
  const org = await createTestOrg(ctx);
  const a = await createGroup(ctx, org.orgId);
  const b = await createGroup(ctx, org.orgId);
  const open = await createTemplate(ctx, org.orgId, { [a]: ['view'], [b]: ['view'] });
  const secret = await createTemplate(ctx, org.orgId, { [a]: ['view'] });
  const shelf = await createTemplate(ctx, org.orgId, { [a]: ['view', 'edit_metadata'], [b]: ['view'] });
  const alice = await createTestUser(ctx, org, { groupIds: [a], privileges: ['collection', 'delete'] });
  const bob = await createTestUser(ctx, org, { groupIds: [b], privileges: ['collection'] });
  const carol = await createTestUser(ctx, org, { groupIds: [a], privileges: [] });
  const docs = [
    docInput(org.orgId, {
      filename: 'open-1.jpg',
      securityTemplateIds: [open],
      metadataText: 'beach',
      facets: [{ facet: 'File Type', value: 'jpg' }],
    }),
    docInput(org.orgId, {
      filename: 'open-2.png',
      securityTemplateIds: [open],
      metadataText: 'beach',
      facets: [{ facet: 'File Type', value: 'png' }],
    }),
    docInput(org.orgId, {
      filename: 'secret-1.jpg',
      securityTemplateIds: [secret],
      metadataText: 'beach',
      facets: [{ facet: 'File Type', value: 'jpg' }],
    }),
    docInput(org.orgId, {
      filename: 'secret-2.jpg',
      securityTemplateIds: [secret],
      metadataText: 'mountain',
      facets: [{ facet: 'File Type', value: 'jpg' }],
    }),
  ];
  await indexDocs(ctx, docs);
  return { org, open, secret, shelf, alice, bob, carol, docs };
}

const rnd = () => Math.random().toString(36).slice(2, 8);

forEachEngine('collections', (ctx) => {
  let w: World;
  const call = (
    user: TestUser | TestOrg['admin'],
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    url: string,
    payload?: unknown,
  ) =>
    ctx().inject({
      method,
      url,
      headers: { ...user.headers },
      payload: payload ?? (method === 'GET' || method === 'DELETE' ? undefined : {}),
    });
  const file = (i: number) => w.docs[i]!.fileId!;

  it('sets up a world', async () => {
    w = await world(ctx());
  });

  it('creates a private collection visible to its creator only; fileIds and objectIds both accepted', async () => {
    const res = await call(w.alice, 'POST', '/v1/collection', {
      collectionType: 'private',
      name: `Mine ${rnd()}`,
      collectionDocument: [file(0), w.docs[2]!.assetId],
      metadataDocument: '[]',
    });
    assert.equal(res.statusCode, 200, res.body);
    const created = json(res);
    assert.equal(created.statusCode, 'success');
    assert.equal(created.message, 'Collection successfully created');
    const got = await call(w.alice, 'GET', `/v1/collection/${created.collectionId}/`);
    assert.equal(got.statusCode, 200, got.body);
    assert.deepEqual(json(got).collectionDocument, [file(0), file(2)]);
    assert.equal(json(got).collectionType, 'private');
    assert.equal(json(got).shared, 'N');
    assert.equal(json(got).userCognitoId, w.alice.userId);
    assert.equal((await call(w.bob, 'GET', `/v1/collection/${created.collectionId}`)).statusCode, 404);
    assert.equal((await call(w.org.admin, 'GET', `/v1/collection/${created.collectionId}`)).statusCode, 404);
    assert.equal((await call(w.carol, 'GET', `/v1/collection/${created.collectionId}`)).statusCode, 403);
  });

  it('rejects bad input naming the field; duplicate names are 409; hidden assets look missing', async () => {
    const name = `Dup ${rnd()}`;
    assert.equal((await call(w.alice, 'POST', '/v1/collection', { collectionType: 'private', name })).statusCode, 200);
    const dup = await call(w.bob, 'POST', '/v1/collection', { collectionType: 'private', name: name.toUpperCase() });
    assert.equal(dup.statusCode, 409, dup.body);
    for (const [user, payload, field] of [
      [w.alice, { name: 'x' }, 'body.collectionType'],
      [w.alice, { collectionType: 'public', name: 'x' }, 'body.collectionType'],
      [w.alice, { collectionType: 'private' }, 'body.name'],
      [w.alice, { collectionType: 'secured', name: `s ${rnd()}` }, 'body.securityTemplateIds'],
      [
        w.alice,
        { collectionType: 'private', name: `p ${rnd()}`, securityTemplateIds: [w.shelf] },
        'body.securityTemplateIds',
      ],
      [
        w.bob,
        { collectionType: 'secured', name: `s ${rnd()}`, securityTemplateIds: [w.secret] },
        'body.securityTemplateIds.0',
      ],
      [
        w.bob,
        { collectionType: 'private', name: `p ${rnd()}`, collectionDocument: [file(0), file(2)] },
        'body.collectionDocument.1',
      ],
      [
        w.alice,
        { collectionType: 'private', name: `p ${rnd()}`, collectionDocument: ['nope'] },
        'body.collectionDocument.0',
      ],
      [
        w.alice,
        { collectionType: 'private', name: `p ${rnd()}`, metadataDocument: '{not json' },
        'body.metadataDocument',
      ],
    ] as const) {
      const res = await call(user, 'POST', '/v1/collection', payload);
      assert.equal(res.statusCode, 400, `${JSON.stringify(payload)} → ${res.body}`);
      assert.ok(
        json(res).details.some((d: { field: string }) => d.field === field),
        res.body,
      );
    }
  });

  it('shows each viewer of a secured collection only what they may view, in counts and facets too', async () => {
    const res = await call(w.alice, 'POST', '/v1/collection', {
      collectionType: 'secured',
      name: `Shared ${rnd()}`,
      securityTemplateIds: [w.shelf],
      collectionDocument: [file(0), file(1), file(2), file(3)],
    });
    assert.equal(res.statusCode, 200, res.body);
    const id = json(res).collectionId;
    const a = json(await call(w.alice, 'GET', `/v1/collection/${id}`));
    const b = json(await call(w.bob, 'GET', `/v1/collection/${id}`));
    assert.deepEqual(a.collectionDocument, [file(0), file(1), file(2), file(3)]);
    assert.deepEqual(b.collectionDocument, [file(0), file(1)]);
    assert.equal(b.memberCount, 2);
    assert.equal(a.shared, 'Y');
    assert.deepEqual(a.securityTemplateIds, [w.shelf]);

    const pageA = json(
      await call(w.alice, 'GET', `/v1/collection/${id}/assets?limit=2&aggregations=true&sortBy=filename&order=asc`),
    );
    const pageB = json(
      await call(w.bob, 'GET', `/v1/collection/${id}/assets?limit=2&aggregations=true&sortBy=filename&order=asc`),
    );
    assert.equal(pageA.totalCount, 4);
    assert.equal(pageB.totalCount, 2);
    assert.deepEqual(
      pageA.result.map((r: { filename: string }) => r.filename),
      ['open-1.jpg', 'open-2.png'],
    );
    assert.deepEqual(
      pageB.result.map((r: { filename: string }) => r.filename),
      ['open-1.jpg', 'open-2.png'],
    );
    assert.equal(pageA.result[0].objectId, w.docs[0]!.assetId);
    const types = (p: { facets: { facet_name: string; values: unknown[] }[] }) =>
      p.facets.find((f) => f.facet_name === 'File Type')?.values;
    assert.deepEqual(types(pageA), [
      { key: 'jpg', doc_count: 3 },
      { key: 'png', doc_count: 1 },
    ]);
    assert.deepEqual(types(pageB), [
      { key: 'jpg', doc_count: 1 },
      { key: 'png', doc_count: 1 },
    ]);

    const inside = json(await call(w.bob, 'POST', `/v1/collection/${id}/search`, { searchTerm: ['beach'] }));
    assert.equal(inside.totalCount, 2);
    assert.equal(
      json(await call(w.alice, 'POST', `/v1/collection/${id}/search`, { searchTerm: ['beach'] })).totalCount,
      3,
    );

    // Bob may view but not edit (no Edit Metadata through the collection's template).
    assert.equal((await call(w.bob, 'PATCH', `/v1/collection/${id}`, { name: 'hijack' })).statusCode, 403);
    // Alice replaces the membership she can see; nothing hidden from her exists here. Bob's view follows.
    const patch = await call(w.alice, 'PATCH', `/v1/collection/${id}`, { collectionDocument: [file(3), file(1)] });
    assert.equal(patch.statusCode, 200, patch.body);
    assert.equal(json(patch).message, 'Collection update was successful');
    // A replace also sets the order: the members come back as sent.
    assert.deepEqual(json(await call(w.alice, 'GET', `/v1/collection/${id}`)).collectionDocument, [file(3), file(1)]);
    assert.deepEqual(json(await call(w.bob, 'GET', `/v1/collection/${id}`)).collectionDocument, [file(1)]);
  });

  it('a replace by a caller who sees less keeps the members hidden from that caller', async () => {
    const t = await createTemplate(ctx(), w.org.orgId, {});
    void t;
    // Bob owns this one; Alice adds a secret asset Bob cannot see; Bob's replace must not drop it.
    const res = await call(w.bob, 'POST', '/v1/collection', {
      collectionType: 'secured',
      name: `Bobs ${rnd()}`,
      securityTemplateIds: [w.open],
      collectionDocument: [file(0)],
    });
    const id = json(res).collectionId;
    const groupA = await createGroup(ctx(), w.org.orgId);
    void groupA;
    // Alice edits through ownership? No: she needs Edit Metadata through `open`, which she lacks; the admin adds instead.
    const added = await call(w.bob, 'PATCH', `/v1/collections/${id}`, {
      collectionUpdates: { operation: 'add', fileIds: [file(2)] },
    });
    assert.equal(added.statusCode, 400, 'Bob cannot add what he cannot view');
    // Put it in directly, as another curator with access could have.
    await ctx()
      .deps.db.insertInto('collection_members')
      .values({ org_id: w.org.orgId, collection_id: id, file_id: file(2), position: 9, added_at: 0 })
      .execute();
    assert.equal(
      (await call(w.bob, 'PATCH', `/v1/collection/${id}`, { collectionDocument: [file(1)] })).statusCode,
      200,
    );
    assert.deepEqual(json(await call(w.bob, 'GET', `/v1/collection/${id}`)).collectionDocument, [file(1)]);
    const rows = await ctx()
      .deps.db.selectFrom('collection_members')
      .select('file_id')
      .where('collection_id', '=', id)
      .execute();
    assert.deepEqual(rows.map((r) => r.file_id).sort(), [file(1), file(2)].sort());
  });

  it('PATCH /v1/collections/{id}: name, security, add/remove/replace, partial metadata; events', async () => {
    const name = `New ${rnd()}`;
    const id = json(
      await call(w.alice, 'POST', '/v1/collection', {
        collectionType: 'private',
        name,
        metadataDocument: [
          { name: 'Title', value: 'A' },
          { name: 'Season', value: 'Summer' },
        ],
      }),
    ).collectionId;
    let res = await call(w.alice, 'PATCH', `/v1/collections/${id}`, {
      collectionName: `${name} renamed`,
      collectionUpdates: [
        { operation: 'add', fileIds: [file(0), file(2)] },
        { operation: 'remove', fileIds: [file(0)] },
      ],
      metadata: [{ name: 'Title', value: 'B' }],
    });
    assert.equal(res.statusCode, 200, res.body);
    let c = json(res).data;
    assert.equal(c.name, `${name} renamed`);
    assert.deepEqual(c.collectionDocument, [file(2)]);
    assert.deepEqual(c.metadataDocument, [
      { name: 'Title', value: 'B' },
      { name: 'Season', value: 'Summer' },
    ]);
    res = await call(w.alice, 'PATCH', `/v1/collections/${id}`, {
      collectionUpdates: { operation: 'replace', fileIds: [w.docs[1]!.assetId] },
      securityTemplateIds: [w.shelf],
    });
    assert.equal(res.statusCode, 200, res.body);
    c = json(res).data;
    assert.deepEqual(c.collectionDocument, [file(1)]);
    assert.equal(c.collectionType, 'secured');
    assert.deepEqual(c.securityTemplateIds, [w.shelf]);
    assert.equal(
      (await call(w.bob, 'GET', `/v1/collection/${id}`)).statusCode,
      200,
      'now shared with Bob through the template',
    );
    const bad = await call(w.alice, 'PATCH', `/v1/collections/${id}`, {
      collectionUpdates: { operation: 'merge', fileIds: [] },
    });
    assert.equal(bad.statusCode, 400);
    assert.equal(json(bad).details[0].field, 'body.collectionUpdates.operation');
    const other = `Other ${rnd()}`;
    await call(w.alice, 'POST', '/v1/collection', { collectionType: 'private', name: other });
    assert.equal((await call(w.alice, 'PATCH', `/v1/collections/${id}`, { collectionName: other })).statusCode, 409);
    const events = await ctx()
      .deps.db.selectFrom('events')
      .select(['type', 'body'])
      .where('org_id', '=', w.org.orgId)
      .execute();
    const about = events.filter((e) => JSON.parse(e.body).collection?.id === id).map((e) => e.type);
    for (const type of [
      'collection.created',
      'collection.updated',
      'collection.assets.updated',
      'collection.metadata.updated',
      'collection.security.updated',
    ]) {
      assert.ok(about.includes(type), `${type} in ${about.join(', ')}`);
    }
  });

  it('deletes: private needs Delete, secured needs Purge; member assets are untouched', async () => {
    const created = await call(w.bob, 'POST', '/v1/collection', {
      collectionType: 'private',
      name: `Del ${rnd()}`,
      collectionDocument: [file(0)],
    });
    assert.equal(created.statusCode, 200, created.body);
    const priv = json(created).collectionId;
    const refused = await call(w.bob, 'DELETE', `/v1/collection/${priv}`);
    assert.equal(refused.statusCode, 403, refused.body);
    const sec = json(
      await call(w.alice, 'POST', '/v1/collection', {
        collectionType: 'secured',
        name: `Del ${rnd()}`,
        securityTemplateIds: [w.shelf],
        collectionDocument: [file(0)],
      }),
    ).collectionId;
    assert.equal((await call(w.alice, 'DELETE', `/v1/collection/${sec}`)).statusCode, 403, 'Alice lacks Purge');
    const mine = json(
      await call(w.alice, 'POST', '/v1/collection', {
        collectionType: 'private',
        name: `Del ${rnd()}`,
        collectionDocument: [file(0)],
      }),
    ).collectionId;
    const del = await call(w.alice, 'DELETE', `/v1/collection/${mine}`);
    assert.equal(del.statusCode, 200, del.body);
    assert.deepEqual(json(del), [{ status: 'success', message: 'Collection delete operation succeeded' }]);
    assert.equal((await call(w.alice, 'GET', `/v1/collection/${mine}`)).statusCode, 404);
    const gone = await ctx()
      .deps.db.selectFrom('events')
      .select('body')
      .where('org_id', '=', w.org.orgId)
      .where('type', '=', 'collection.deleted')
      .execute();
    assert.ok(
      gone.some((e) => JSON.parse(e.body).collection.id === mine),
      'collection.deleted fired',
    );
    const adminView = await createTestUser(ctx(), w.org, {
      groupIds: [w.org.groups.administrators],
      privileges: ['collection', 'purge'],
    });
    void adminView;
    const still = json(await call(w.alice, 'POST', '/v1/search/keyword', { searchTerm: ['*'] }));
    assert.equal(still.totalCount, 4, 'assets survive their collection');
  });

  it('POST /v1/search/collection finds only collections the caller may see', async () => {
    const tag = rnd();
    await call(w.alice, 'POST', '/v1/collection', { collectionType: 'private', name: `Zebra ${tag} private` });
    await call(w.alice, 'POST', '/v1/collection', {
      collectionType: 'secured',
      name: `Zebra ${tag} shared`,
      securityTemplateIds: [w.shelf],
      collectionDocument: [file(0), file(2)],
    });
    const a = json(
      await call(w.alice, 'POST', '/v1/search/collection', {
        searchTerm: [`zebra ${tag}`],
        sortBy: [{ metadataDefinitionSearchField: 'name', order: 'asc' }],
      }),
    );
    assert.deepEqual(
      a.result.map((c: { name: string }) => c.name),
      [`Zebra ${tag} private`, `Zebra ${tag} shared`],
    );
    const b = json(await call(w.bob, 'POST', '/v1/search/collection', { searchTerm: [`zebra ${tag}`] }));
    assert.deepEqual(
      b.result.map((c: { name: string }) => c.name),
      [`Zebra ${tag} shared`],
    );
    assert.deepEqual(b.result[0].collectionDocument, [file(0)]);
    assert.equal(typeof b.result[0].customerId, 'number');
    const typed = json(
      await call(w.alice, 'POST', '/v1/search/collection', {
        searchTerm: [`zebra ${tag}`, 'Collection Type: private'],
      }),
    );
    assert.deepEqual(
      typed.result.map((c: { name: string }) => c.name),
      [`Zebra ${tag} private`],
    );
  });

  it("round-trips the reference's training flow: keyword search, then a collection of the result's objectIds", async () => {
    const found = json(
      await call(w.alice, 'POST', '/v1/search/keyword', {
        from: 0,
        limit: 100,
        searchTerm: ['beach'],
        operation: 'AND',
        sortBy: [{ metadataDefinitionSearchField: 'createdepoch', order: 'asc' }],
      }),
    );
    const objectIds = found.result.map((r: { objectId: string }) => r.objectId);
    assert.equal(objectIds.length, 3);
    const res = await call(w.alice, 'POST', '/v1/collection', {
      collectionType: 'private',
      name: `Training ${rnd()}`,
      collectionDocument: objectIds,
      metadataTemplateId: null,
      metadataDocument: '[]',
    });
    assert.equal(res.statusCode, 200, res.body);
    const got = json(await call(w.alice, 'GET', `/v1/collection/${json(res).collectionId}`));
    assert.equal(got.collectionDocument.length, 3);
  });

  const make = async (c: TestContext, org: TestOrg, type: 'private' | 'secured' = 'secured') => {
    const res = await c.inject({
      method: 'POST',
      url: '/v1/collection',
      headers: org.admin.headers,
      payload: {
        collectionType: type,
        name: `sec ${rnd()}`,
        securityTemplateIds: type === 'secured' ? [org.defaultTemplateId] : [],
      },
    });
    assert.equal(res.statusCode, 200, res.body);
    return json(res).collectionId as string;
  };
  securitySuite(ctx, 'POST /v1/collection', {
    method: 'POST',
    privileges: ['collection'],
    prepare: () => ({ url: '/v1/collection', body: { collectionType: 'private', name: `s ${rnd()}` } }),
  });
  securitySuite(ctx, 'GET /v1/collection/{id}', {
    method: 'GET',
    privileges: ['collection'],
    resource: true,
    prepare: async (c, org) => ({ url: `/v1/collection/${await make(c, org)}` }),
  });
  securitySuite(ctx, 'PATCH /v1/collection/{id}', {
    method: 'PATCH',
    privileges: ['collection'],
    resource: true,
    prepare: async (c, org) => ({ url: `/v1/collection/${await make(c, org)}`, body: { name: `n ${rnd()}` } }),
  });
  securitySuite(ctx, 'PATCH /v1/collections/{id}', {
    method: 'PATCH',
    privileges: ['collection'],
    resource: true,
    prepare: async (c, org) => ({
      url: `/v1/collections/${await make(c, org)}`,
      body: { collectionName: `n ${rnd()}` },
    }),
  });
  securitySuite(ctx, 'DELETE /v1/collection/{id}', {
    method: 'DELETE',
    privileges: ['collection', 'purge'],
    resource: true,
    prepare: async (c, org) => ({ url: `/v1/collection/${await make(c, org)}` }),
  });
  securitySuite(ctx, 'GET /v1/collection/{id}/assets', {
    method: 'GET',
    privileges: ['collection'],
    resource: true,
    prepare: async (c, org) => ({ url: `/v1/collection/${await make(c, org)}/assets` }),
  });
  securitySuite(ctx, 'POST /v1/collection/{id}/search', {
    method: 'POST',
    privileges: ['collection'],
    resource: true,
    readScope: true,
    prepare: async (c, org) => ({ url: `/v1/collection/${await make(c, org)}/search`, body: {} }),
  });
  securitySuite(ctx, 'POST /v1/search/collection', {
    method: 'POST',
    readScope: true,
    prepare: () => ({ url: '/v1/search/collection', body: { searchTerm: ['*'] } }),
  });
});
