import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine, json } from '../../../../../test/helpers/context.ts';
import { createTestOrg } from '../../../../../test/helpers/factories.ts';
import { metadataApi } from '../../../../../test/helpers/metadata.ts';

const NONE = '00000000-0000-4000-8000-000000000000';

forEachEngine('metadata: attributes', (ctx) => {
  it('creates each attribute type with its settings, in the reference descriptor shape', async () => {
    const org = await createTestOrg(ctx());
    const api = metadataApi(ctx(), org);
    const text = await api.attribute({
      name: 'Headline',
      type: 'text',
      length: 120,
      isMultiLine: false,
      required: true,
      facetable: true,
      sortable: true,
    });
    assert.equal(text.type, 'text');
    assert.equal(text.subType, 'textBox');
    assert.equal(text.searchField, 'headline');
    assert.equal(text.length, 120);
    assert.equal(text.dateFormat, 'N/A');
    assert.deepEqual(
      [text.required, text.readonly, text.visible, text.facetable, text.sortable],
      [true, false, true, true, true],
    );
    const body = await api.attribute({ name: 'Body Copy', type: 'Text', isMultiLine: true });
    assert.equal(body.subType, 'textArea');
    assert.equal(body.searchField, 'body_copy');
    const date = await api.attribute({ name: 'Shoot Date', type: 'date', dateFormat: 'dd.MM.yyyy' });
    assert.equal(date.dateFormat, 'dd.MM.yyyy');
    const vocab = await api.vocabulary('Markets', ['DE', 'FR']);
    const market = await api.attribute({
      name: 'Markets',
      type: 'Controlled Vocabulary',
      controlledVocabularyId: vocab.metadataDefinitionId,
      isMultipleSelect: true,
    });
    assert.equal(market.type, 'controlledVocabulary');
    assert.equal(market.isMultipleSelect, true);
    assert.equal(market.controlledVocabularyId, vocab.metadataDefinitionId);
    const { colors, shades } = await api.cascadeVocabularies();
    const cascade = await api.attribute({
      name: 'Palette',
      type: 'Cascading',
      levels: [
        { name: 'Color', controlledVocabularyId: colors.metadataDefinitionId, required: true },
        { name: 'Shade', controlledVocabularyId: shades.metadataDefinitionId, isMultipleSelect: true },
      ],
    });
    assert.equal(cascade.type, 'cascade');
    assert.deepEqual(
      cascade.cascadeFieldsDenormalized.map((l: any) => [
        l.name,
        l.cascadeOrder,
        l.searchField,
        l.isMultipleSelect,
        l.required,
      ]),
      [
        ['Color', 0, 'palette_color', false, true],
        ['Shade', 1, 'palette_shade', true, false],
      ],
    );
    const table = await api.attribute({
      name: 'Usage',
      type: 'Tabular',
      isSingleRow: false,
      tableFieldIds: [market.id, date.id, cascade.id],
    });
    assert.equal(table.type, 'table');
    assert.equal(table.isSingleRow, false);
    assert.deepEqual(
      table.tableFieldsDenormalized.map((c: any) => c.name),
      ['Markets', 'Shoot Date', 'Palette'],
    );
    assert.equal(
      table.tableFieldsDenormalized[2].cascadeFieldsDenormalized.length,
      2,
      'a cascade column carries its levels',
    );

    const list = json<any[]>(await api.call('GET', '/v1/metadata/attributes', undefined, 200));
    assert.ok(
      list.some((a) => a.searchField === 'title' && a.system === true),
      'system attributes are listed',
    );
    assert.ok(!list.some((a) => a.searchField === 'palette_color'), 'cascade levels are not top-level attributes');
    assert.deepEqual(
      json<any[]>(await api.call('GET', '/v1/metadata/attributes?searchTerm=shoot')).map((a) => a.name),
      ['Shoot Date'],
    );
    assert.deepEqual(
      json<any[]>(await api.call('GET', '/v1/metadata/attributes?type=cascading')).map((a) => a.name),
      ['Palette'],
    );
    assert.deepEqual(json(await api.call('GET', `/v1/metadata/attributes/${table.id}`, undefined, 200)), table);
  });

  it('searchField is derived from the name and unique per organization; names are unique (409)', async () => {
    const org = await createTestOrg(ctx());
    const api = metadataApi(ctx(), org);
    const a = await api.attribute({ name: 'Product Line', type: 'text' });
    assert.equal(a.searchField, 'product_line');
    const b = await api.attribute({ name: 'Product-Line!', type: 'text' });
    assert.equal(b.searchField, 'product_line_2');
    assert.equal(
      json(await api.call('POST', '/v1/metadata/attributes', { name: 'product line', type: 'text' }, 409)).details[0]
        .field,
      'body.name',
    );
    const explicit = await api.attribute({ name: 'SKU', type: 'text', searchField: 'sku_code' });
    assert.equal(explicit.searchField, 'sku_code');
    assert.equal(
      (await api.call('POST', '/v1/metadata/attributes', { name: 'Other', type: 'text', searchField: 'sku_code' }))
        .statusCode,
      409,
    );
    assert.equal(
      json(
        await api.call(
          'POST',
          '/v1/metadata/attributes',
          { name: 'Other', type: 'text', searchField: 'Bad Slug' },
          400,
        ),
      ).details[0].field,
      'body.searchField',
    );
    // Another organization has its own namespace.
    const other = await createTestOrg(ctx());
    assert.equal(
      (await metadataApi(ctx(), other).attribute({ name: 'Product Line', type: 'text' })).searchField,
      'product_line',
    );
  });

  it('refuses invalid definitions, naming the field', async () => {
    const org = await createTestOrg(ctx());
    const api = metadataApi(ctx(), org);
    const vocab = await api.vocabulary('V', ['a']);
    const cases: [Record<string, unknown>, string, RegExp?][] = [
      [{ name: 'X', type: 'colour' }, 'body.type'],
      [{ name: '', type: 'text' }, 'body.name'],
      [{ name: 'X', type: 'date', dateFormat: 'yyyyMMdd' }, 'body.dateFormat'],
      [{ name: 'X', type: 'controlledVocabulary' }, 'body.controlledVocabularyId'],
      [
        { name: 'X', type: 'controlledVocabulary', controlledVocabularyId: NONE },
        'body.controlledVocabularyId',
        /does not exist/,
      ],
      [{ name: 'X', type: 'table', tableFieldIds: [] }, 'body.tableFieldIds'],
      [{ name: 'X', type: 'table', tableFieldIds: [NONE] }, 'body.tableFieldIds[0]'],
      [
        { name: 'X', type: 'cascade', levels: [{ name: 'Only', controlledVocabularyId: vocab.metadataDefinitionId }] },
        'body.levels',
      ],
      [
        {
          name: 'X',
          type: 'cascade',
          levels: [
            { name: 'A', controlledVocabularyId: vocab.metadataDefinitionId },
            { name: 'a', controlledVocabularyId: vocab.metadataDefinitionId },
          ],
        },
        'body.levels[1].name',
      ],
      [
        {
          name: 'X',
          type: 'cascade',
          levels: [
            { name: 'A', controlledVocabularyId: vocab.metadataDefinitionId },
            { name: 'B', controlledVocabularyId: NONE },
          ],
        },
        'body.levels[1].controlledVocabularyId',
      ],
      [{ name: 'X', type: 'text', length: 0 }, 'body.length'],
    ];
    for (const [body, field, message] of cases) {
      const res = await api.call('POST', '/v1/metadata/attributes', body);
      assert.equal(res.statusCode, 400, `${JSON.stringify(body)}: ${res.body}`);
      assert.equal(json(res).details[0].field, field, JSON.stringify(body));
      if (message) assert.match(json(res).message, message);
    }
    const inner = await api.attribute({
      name: 'Inner',
      type: 'table',
      tableFieldIds: [(await api.attribute({ name: 'C', type: 'text' })).id],
    });
    assert.match(
      json(
        await api.call(
          'POST',
          '/v1/metadata/attributes',
          { name: 'Outer', type: 'table', tableFieldIds: [inner.id] },
          400,
        ),
      ).message,
      /cannot be a column of another table/,
    );
  });

  it('PATCH changes settings and flags, records a definition change; type and searchField are fixed', async () => {
    const org = await createTestOrg(ctx());
    const api = metadataApi(ctx(), org);
    const a = await api.attribute({ name: 'Caption', type: 'text', length: 100 });
    const changed = json(
      await api.call(
        'PATCH',
        `/v1/metadata/attributes/${a.id}`,
        { name: 'Short Caption', length: 50, required: true, visible: false },
        200,
      ),
    );
    assert.deepEqual(
      [changed.name, changed.length, changed.required, changed.visible, changed.searchField],
      ['Short Caption', 50, true, false, 'caption'],
    );
    assert.equal(
      json(await api.call('PATCH', `/v1/metadata/attributes/${a.id}`, { type: 'date' }, 400)).details[0].field,
      'body.type',
    );
    assert.equal(
      json(await api.call('PATCH', `/v1/metadata/attributes/${a.id}`, { searchField: 'other' }, 400)).details[0].field,
      'body.searchField',
    );
    assert.equal(
      json(await api.call('PATCH', `/v1/metadata/attributes/${a.id}`, { id: NONE }, 400)).details[0].field,
      'body.id',
    );
    assert.equal(
      json(await api.call('PATCH', `/v1/metadata/attributes/${a.id}`, { colour: 'red' }, 400)).details[0].field,
      'body.colour',
    );
    assert.equal(json(await api.call('PATCH', `/v1/metadata/attributes/${a.id}`, {}, 400)).details[0].field, 'body');
    assert.equal((await api.call('PATCH', `/v1/metadata/attributes/${NONE}`, { name: 'x' })).statusCode, 404);
    const change = json(await api.call('GET', '/v1/metadata/changes')).results.find((c: any) => c.subjectId === a.id);
    assert.equal(change.kind, 'attribute.updated');
    assert.deepEqual(change.data.previous.settings, { length: 100, multiLine: false });
    assert.deepEqual(change.data.current.settings, { length: 50, multiLine: false });
    const title = json<any[]>(await api.call('GET', '/v1/metadata/attributes?searchTerm=title')).find(
      (x) => x.searchField === 'title',
    );
    assert.equal(
      (await api.call('PATCH', `/v1/metadata/attributes/${title.id}`, { readonly: true })).statusCode,
      400,
      'a system attribute keeps its read-only flag',
    );

    // Cascade levels: kept by id, added, removed (a definition change).
    const { colors, shades } = await api.cascadeVocabularies();
    const third = await api.vocabulary('Finish', ['Matte']);
    const c = await api.attribute({
      name: 'Look',
      type: 'cascade',
      levels: [
        { name: 'Color', controlledVocabularyId: colors.metadataDefinitionId },
        { name: 'Shade', controlledVocabularyId: shades.metadataDefinitionId },
      ],
    });
    const [l1, l2] = c.cascadeFieldsDenormalized;
    const updated = json(
      await api.call(
        'PATCH',
        `/v1/metadata/attributes/${c.id}`,
        {
          levels: [
            { id: l1.id, name: 'Colour', controlledVocabularyId: colors.metadataDefinitionId },
            { name: 'Finish', controlledVocabularyId: third.metadataDefinitionId },
          ],
        },
        200,
      ),
    );
    assert.deepEqual(
      updated.cascadeFieldsDenormalized.map((l: any) => [l.id === l1.id, l.name, l.searchField]),
      [
        [true, 'Colour', 'look_color'],
        [false, 'Finish', 'look_finish'],
      ],
    );
    const levelChange = json(await api.call('GET', '/v1/metadata/changes')).results.find(
      (x: any) => x.subjectId === c.id,
    );
    assert.deepEqual(levelChange.data.removedLevels, [l2.id]);
    assert.equal(
      (
        await api.call('PATCH', `/v1/metadata/attributes/${c.id}`, {
          levels: [
            { id: NONE, name: 'A', controlledVocabularyId: colors.metadataDefinitionId },
            { name: 'B', controlledVocabularyId: colors.metadataDefinitionId },
          ],
        })
      ).statusCode,
      400,
    );
  });

  it('DELETE refuses attributes in use (groups, tables, system) with a 409 naming the user; events are published', async () => {
    const org = await createTestOrg(ctx());
    const api = metadataApi(ctx(), org);
    const a = await api.attribute({ name: 'Campaign', type: 'text' });
    const col = await api.attribute({ name: 'Cell', type: 'text' });
    await api.attribute({ name: 'Grid', type: 'table', tableFieldIds: [col.id] });
    const group = await api.group('Marketing', [a.id]);
    assert.match(
      json(await api.call('DELETE', `/v1/metadata/attributes/${a.id}`, undefined, 409)).message,
      /used by metadata groups: Marketing/,
    );
    assert.match(
      json(await api.call('DELETE', `/v1/metadata/attributes/${col.id}`, undefined, 409)).message,
      /column of table attributes: Grid/,
    );
    const title = json<any[]>(await api.call('GET', '/v1/metadata/attributes?searchTerm=title')).find(
      (x) => x.searchField === 'title',
    );
    assert.match(
      json(await api.call('DELETE', `/v1/metadata/attributes/${title.id}`, undefined, 409)).message,
      /system attribute/,
    );
    await api.call('PATCH', `/v1/metadata/groups/${group.id}`, { attributeIds: [] }, 200);
    await api.call('DELETE', `/v1/metadata/attributes/${a.id}`, undefined, 204);
    assert.equal((await api.call('GET', `/v1/metadata/attributes/${a.id}`)).statusCode, 404);
    assert.equal((await api.call('DELETE', `/v1/metadata/attributes/${a.id}`)).statusCode, 404);
    const kinds = json(await api.call('GET', '/v1/metadata/changes')).results.map((c: any) => c.kind);
    assert.ok(kinds.includes('attribute.deleted'));
    const events = await ctx()
      .deps.db.selectFrom('events')
      .select(['type', 'body'])
      .where('org_id', '=', org.orgId)
      .where('type', 'like', 'metadata.attribute.%')
      .execute();
    assert.deepEqual(events.map((e) => e.type).sort(), [
      'metadata.attribute.created',
      'metadata.attribute.created',
      'metadata.attribute.created',
      'metadata.attribute.deleted',
    ]);
    assert.deepEqual(JSON.parse(events.find((e) => e.type === 'metadata.attribute.deleted')!.body).attribute, {
      id: a.id,
      name: 'Campaign',
      searchField: 'campaign',
      type: 'text',
    });
  });

  it('concurrent creates of one name: exactly one wins, the others get 409', async () => {
    const org = await createTestOrg(ctx());
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        ctx().inject({
          method: 'POST',
          url: '/v1/metadata/attributes',
          headers: org.admin.headers,
          payload: { name: 'Racy Name', type: 'text' },
        }),
      ),
    );
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [201, 409, 409, 409, 409, 409]);
    const rows = await ctx()
      .deps.db.selectFrom('metadata_attributes')
      .select('id')
      .where('org_id', '=', org.orgId)
      .where('name_key', '=', 'racy name')
      .execute();
    assert.equal(rows.length, 1);
  });

  it("another organization's attribute is a 404 and cannot be a table column", async () => {
    const org = await createTestOrg(ctx());
    const other = await createTestOrg(ctx());
    const theirs = await metadataApi(ctx(), other).attribute({ name: 'Theirs', type: 'text' });
    const api = metadataApi(ctx(), org);
    assert.equal((await api.call('GET', `/v1/metadata/attributes/${theirs.id}`)).statusCode, 404);
    assert.equal((await api.call('PATCH', `/v1/metadata/attributes/${theirs.id}`, { name: 'Mine' })).statusCode, 404);
    assert.equal((await api.call('DELETE', `/v1/metadata/attributes/${theirs.id}`)).statusCode, 404);
    assert.equal(
      (await api.call('POST', '/v1/metadata/attributes', { name: 'T', type: 'table', tableFieldIds: [theirs.id] }))
        .statusCode,
      400,
    );
  });
});
