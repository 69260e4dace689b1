import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine, json } from '../../../../../test/helpers/context.ts';
import { createTestOrg } from '../../../../../test/helpers/factories.ts';
import { metadataApi } from '../../../../../test/helpers/metadata.ts';

const NONE = '00000000-0000-4000-8000-000000000000';

forEachEngine('metadata: groups', (ctx) => {
  it('GET /v1/metadata/groups pages, searches and sorts; limit is at most 100', async () => {
    const org = await createTestOrg(ctx());
    const api = metadataApi(ctx(), org);
    for (const name of ['Brand', 'Legal', 'Product Info', 'Rights', 'brand extras']) {
      await api.group(name, []);
      ctx().clock.advance(1000);
    }
    const all = json(await api.call('GET', '/v1/metadata/groups', undefined, 200));
    assert.equal(all.hitCount, 6, 'five plus the system group');
    assert.deepEqual(
      all.results.map((g: any) => g.name),
      ['Brand', 'brand extras', 'Legal', 'Product Info', 'Rights', 'System'],
    );
    const g = all.results[0];
    for (const key of [
      'id',
      'name',
      'searchField',
      'isGroupNameVisible',
      'createdEpoch',
      'createdDate',
      'lastUpdatedEpoch',
      'lastUpdatedDate',
    ])
      assert.ok(key in g, key);
    const page = json(await api.call('GET', '/v1/metadata/groups?from=1&limit=2', undefined, 200));
    assert.equal(page.hitCount, 6);
    assert.deepEqual(
      page.results.map((x: any) => x.name),
      ['brand extras', 'Legal'],
    );
    const search = json(await api.call('GET', '/v1/metadata/groups?searchTerm=BRAND'));
    assert.deepEqual([search.hitCount, search.results.map((x: any) => x.name)], [2, ['Brand', 'brand extras']]);
    const desc = json(await api.call('GET', '/v1/metadata/groups?sortField=createdEpoch&order=desc&limit=2'));
    assert.deepEqual(
      desc.results.map((x: any) => x.name),
      ['brand extras', 'Rights'],
    );
    assert.equal(json(await api.call('GET', '/v1/metadata/groups?searchTerm=%25')).hitCount, 0, '% is literal');
    assert.equal(
      json(await api.call('GET', '/v1/metadata/groups?limit=101', undefined, 400)).details[0].field,
      'query.limit',
    );
    assert.equal(
      json(await api.call('GET', '/v1/metadata/groups?sortField=size', undefined, 400)).details[0].field,
      'query.sortField',
    );
    assert.equal(
      json(await api.call('GET', '/v1/metadata/groups?order=up', undefined, 400)).details[0].field,
      'query.order',
    );
    assert.equal((await api.call('GET', '/v1/metadata/groups?from=-1')).statusCode, 400);
  });

  it('creates, reads, changes and deletes a group; its attributes keep their order', async () => {
    const org = await createTestOrg(ctx());
    const api = metadataApi(ctx(), org);
    const a = await api.attribute({ name: 'Alpha', type: 'text' });
    const b = await api.attribute({ name: 'Beta', type: 'text' });
    const group = await api.group('Details', [b.id, a.id]);
    assert.deepEqual(group.attributeIds, [b.id, a.id]);
    assert.equal(group.searchField, 'details');
    assert.equal(group.isGroupNameVisible, true);
    const changed = json(
      await api.call(
        'PATCH',
        `/v1/metadata/groups/${group.id}`,
        { name: 'More Details', isGroupNameVisible: false, attributeIds: [a.id] },
        200,
      ),
    );
    assert.deepEqual(
      [changed.name, changed.isGroupNameVisible, changed.attributeIds, changed.searchField],
      ['More Details', false, [a.id], 'details'],
    );
    assert.deepEqual(json(await api.call('GET', `/v1/metadata/groups/${group.id}`, undefined, 200)), changed);
    const change = json(await api.call('GET', '/v1/metadata/changes')).results.find(
      (c: any) => c.kind === 'group.attributes.changed',
    );
    assert.deepEqual(change.data.removed, [b.id]);
    await api.call('DELETE', `/v1/metadata/groups/${group.id}`, undefined, 204);
    assert.equal((await api.call('GET', `/v1/metadata/groups/${group.id}`)).statusCode, 404);
    const deleted = await ctx()
      .deps.db.selectFrom('events')
      .select('body')
      .where('org_id', '=', org.orgId)
      .where('type', '=', 'metadata.group.deleted')
      .execute();
    assert.deepEqual(JSON.parse(deleted[0]!.body).group, { id: group.id, name: 'More Details' });
    assert.equal(JSON.parse(deleted[0]!.body).eventType, 'metadata.group.deleted');
  });

  it('refuses bad groups: unknown or repeated attributes, system attributes, duplicate names, empty patches', async () => {
    const org = await createTestOrg(ctx());
    const api = metadataApi(ctx(), org);
    const a = await api.attribute({ name: 'Alpha', type: 'text' });
    assert.equal(
      json(await api.call('POST', '/v1/metadata/groups', { name: 'G', attributeIds: [NONE] }, 400)).details[0].field,
      'body.attributeIds[0]',
    );
    assert.equal(
      json(await api.call('POST', '/v1/metadata/groups', { name: 'G', attributeIds: [a.id, a.id] }, 400)).details[0]
        .field,
      'body.attributeIds[1]',
    );
    const title = json<any[]>(await api.call('GET', '/v1/metadata/attributes?searchTerm=title'))[0];
    assert.match(
      json(await api.call('POST', '/v1/metadata/groups', { name: 'G', attributeIds: [title.id] }, 400)).message,
      /system attribute/,
    );
    await api.group('Unique', []);
    assert.equal(
      json(await api.call('POST', '/v1/metadata/groups', { name: 'UNIQUE' }, 409)).details[0].field,
      'body.name',
    );
    assert.equal(json(await api.call('POST', '/v1/metadata/groups', { name: ' ' }, 400)).details[0].field, 'body.name');
    const g = await api.group('Other', []);
    assert.equal((await api.call('PATCH', `/v1/metadata/groups/${g.id}`, {}, 400)).statusCode, 400);
    assert.equal((await api.call('PATCH', `/v1/metadata/groups/${g.id}`, { name: 'unique' }, 409)).statusCode, 409);
    assert.equal((await api.call('PATCH', `/v1/metadata/groups/${NONE}`, { name: 'x' })).statusCode, 404);
  });

  it('a group used by a template cannot be deleted (409 names it); the system group never; changes that would duplicate attributes in a template are refused', async () => {
    const org = await createTestOrg(ctx());
    const api = metadataApi(ctx(), org);
    const a = await api.attribute({ name: 'Alpha', type: 'text' });
    const b = await api.attribute({ name: 'Beta', type: 'text' });
    const g1 = await api.group('One', [a.id]);
    const g2 = await api.group('Two', [b.id]);
    await api.template('Press Kit', [g1.id, g2.id]);
    assert.match(
      json(await api.call('DELETE', `/v1/metadata/groups/${g1.id}`, undefined, 409)).message,
      /used by metadata templates: Press Kit/,
    );
    const dup = await api.call('PATCH', `/v1/metadata/groups/${g2.id}`, { attributeIds: [b.id, a.id] }, 400);
    assert.match(json(dup).message, /template "Press Kit": attribute "Alpha" would appear twice, in groups/);
    const groups = json(await api.call('GET', '/v1/metadata/groups?searchTerm=system')).results;
    const system = groups.find((g: any) => g.system);
    assert.ok(system.templates.some((t: any) => t.name === 'Default'));
    assert.match(
      json(await api.call('DELETE', `/v1/metadata/groups/${system.id}`, undefined, 409)).message,
      /system group cannot be deleted/,
    );
    // Adding a template's attribute to the system group would duplicate it in that template.
    assert.equal(
      (await api.call('PATCH', `/v1/metadata/groups/${system.id}`, { attributeIds: [...system.attributeIds, a.id] }))
        .statusCode,
      400,
    );
  });
});
