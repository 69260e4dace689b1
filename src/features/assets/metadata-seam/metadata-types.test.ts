import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { forEachEngine, json } from '../../../../test/helpers/context.ts';
import { createTestOrg, type TestOrg } from '../../../../test/helpers/factories.ts';
import { metadataApi } from '../../../../test/helpers/metadata.ts';

/**
 * Every attribute type, valid and invalid, in both encodings, through the asset write paths
 * (POST /v1/asset takes the legacy id-based document, POST /v1/assets/asset the 1.5 name-based one),
 * with definitions stored in each engine. Cascades inside table rows included.
 */
interface Case {
  type: string;
  attribute: string;
  legacy: { valid: unknown; invalid: unknown; invalidPath: string; table?: boolean };
  simplified: { valid: unknown; invalid: unknown; invalidPath: string };
  /** What GET /v1/asset/{id} shows for the valid value, in metadataDenormalized[searchField]. */
  denormalized: unknown;
}

forEachEngine('assets: each attribute type through the write paths, valid and invalid, in both encodings', (ctx) => {
  let org: TestOrg;
  let templateId: string;
  const ids: Record<string, string> = {};
  const search: Record<string, string> = {};
  const value: Record<string, string> = {};
  let cases: Case[] = [];

  before(async () => {
    org = await createTestOrg(ctx());
    const api = metadataApi(ctx(), org);
    const { colors, shades, red, blue } = await api.cascadeVocabularies();
    const channels = await api.vocabulary('Channels', ['Web', 'Print', 'TV']);
    Object.assign(value, {
      red,
      blue,
      crimson: api.valueId(shades, 'Crimson'),
      navy: api.valueId(shades, 'Navy'),
      web: api.valueId(channels, 'Web'),
      tv: api.valueId(channels, 'TV'),
      print: api.valueId(channels, 'Print'),
    });
    const defs = {
      headline: await api.attribute({ name: 'Headline', type: 'text', length: 10 }),
      body: await api.attribute({ name: 'Body', type: 'text', length: 50, isMultiLine: true }),
      live: await api.attribute({ name: 'Live Date', type: 'date', dateFormat: 'dd/MM/yyyy' }),
      channel: await api.attribute({
        name: 'Channel',
        type: 'controlledVocabulary',
        controlledVocabularyId: channels.metadataDefinitionId,
      }),
      channels: await api.attribute({
        name: 'Channels',
        type: 'controlledVocabulary',
        controlledVocabularyId: channels.metadataDefinitionId,
        isMultipleSelect: true,
      }),
      palette: await api.attribute({
        name: 'Palette',
        type: 'cascade',
        levels: [
          { name: 'Color', controlledVocabularyId: colors.metadataDefinitionId },
          { name: 'Shade', controlledVocabularyId: shades.metadataDefinitionId },
        ],
      }),
      note: await api.attribute({ name: 'Note', type: 'text', length: 5 }),
    };
    const usage = await api.attribute({
      name: 'Usage',
      type: 'table',
      tableFieldIds: [defs.channel.id, defs.note.id, defs.palette.id],
    });
    const summary = await api.attribute({
      name: 'Summary',
      type: 'table',
      isSingleRow: true,
      tableFieldIds: [defs.note.id],
    });
    for (const [k, d] of Object.entries({ ...defs, usage, summary })) {
      ids[k] = d.id;
      search[k] = d.searchField;
    }
    const [color, shade] = defs.palette.cascadeFieldsDenormalized.map((l: any) => l.id);
    ids.color = color;
    ids.shade = shade;
    const group = await api.group('Everything', [
      defs.headline.id,
      defs.body.id,
      defs.live.id,
      defs.channel.id,
      defs.channels.id,
      defs.palette.id,
      usage.id,
      summary.id,
    ]);
    templateId = (await api.template('Everything', [group.id])).templateId;
    const cell = (id: string, v: unknown) => ({ metadataDefinitionId: id, metadataDefinitionValue: v });
    const cascade = (c: string, s: string) => [cell(ids.color!, { valueId: c }), cell(ids.shade!, { valueId: s })];
    const V = (k: string) => `body.metadata[0].${k}`;
    cases = [
      {
        type: 'text',
        attribute: 'headline',
        legacy: { valid: 'Launch', invalid: 'Far too long for ten', invalidPath: V('metadataDefinitionValue') },
        simplified: { valid: 'Launch', invalid: 'Far too long for ten', invalidPath: V('value') },
        denormalized: 'Launch',
      },
      {
        type: 'text, single-line',
        attribute: 'headline',
        legacy: { valid: 'One line', invalid: 'two\nlines', invalidPath: V('metadataDefinitionValue') },
        simplified: { valid: 'One line', invalid: 'two\nlines', invalidPath: V('value') },
        denormalized: 'One line',
      },
      {
        type: 'text, multi-line',
        attribute: 'body',
        legacy: {
          valid: 'line one\nline two',
          invalid: `${'x'.repeat(30)}\n${'y'.repeat(30)}`,
          invalidPath: V('metadataDefinitionValue'),
        },
        simplified: { valid: 'line one\nline two', invalid: { text: 'x' }, invalidPath: V('value') },
        denormalized: 'line one\nline two',
      },
      {
        type: 'date',
        attribute: 'live',
        legacy: { valid: '29/02/2024', invalid: '30/02/2024', invalidPath: V('metadataDefinitionValue') },
        simplified: { valid: '2024-02-29', invalid: '2023-02-29', invalidPath: V('value') },
        denormalized: '2024-02-29',
      },
      {
        type: 'vocabulary, single',
        attribute: 'channel',
        legacy: {
          valid: { valueId: value.web },
          invalid: [{ valueId: value.web }, { valueId: value.tv }],
          invalidPath: V('metadataDefinitionValue'),
        },
        simplified: { valid: 'Web', invalid: 'Radio', invalidPath: V('value') },
        denormalized: 'Web',
      },
      {
        type: 'vocabulary, multiple',
        attribute: 'channels',
        legacy: {
          valid: [{ valueId: value.web }, { valueId: value.tv }],
          invalid: [{ valueId: value.red }],
          invalidPath: V('metadataDefinitionValue[0].valueId'),
        },
        simplified: { valid: ['Web', 'TV'], invalid: ['Web', 'Web'], invalidPath: V('value[1]') },
        denormalized: ['Web', 'TV'],
      },
      {
        type: 'cascade',
        attribute: 'palette',
        legacy: {
          valid: cascade(value.red!, value.crimson!),
          invalid: cascade(value.blue!, value.crimson!),
          invalidPath: V('metadataDefinitionValue[1].metadataDefinitionValue'),
        },
        simplified: {
          valid: [
            { name: 'Color', value: 'Red' },
            { name: 'Shade', value: 'Crimson' },
          ],
          invalid: [{ name: 'Shade', value: 'Navy' }],
          invalidPath: V('value[0].value'),
        },
        denormalized: { palette_color: 'Red', palette_shade: 'Crimson' },
      },
      {
        type: 'table, multi-row, cascade inside a row',
        attribute: 'usage',
        legacy: {
          table: true,
          valid: [
            [cell(ids.channel!, { valueId: value.web }), cell(ids.palette!, cascade(value.blue!, value.navy!))],
            [cell(ids.note!, 'A4')],
          ],
          invalid: [[cell(ids.note!, 'ok')], [cell(ids.palette!, cascade(value.red!, value.navy!))]],
          invalidPath: V('metadataDefinitionTableValue[1][0].metadataDefinitionValue[1].metadataDefinitionValue'),
        },
        simplified: {
          valid: [
            [
              { name: 'Channel', value: 'Web' },
              {
                name: 'Palette',
                value: [
                  { name: 'Color', value: 'Blue' },
                  { name: 'Shade', value: 'Navy' },
                ],
              },
            ],
            [{ name: 'Note', value: 'A4' }],
          ],
          invalid: [
            [
              {
                name: 'Palette',
                value: [
                  { name: 'Color', value: 'Red' },
                  { name: 'Shade', value: 'Navy' },
                ],
              },
            ],
          ],
          invalidPath: V('value[0][0].value[1].value'),
        },
        denormalized: [{ channel: 'Web', palette: { palette_color: 'Blue', palette_shade: 'Navy' } }, { note: 'A4' }],
      },
      {
        type: 'table, single-row',
        attribute: 'summary',
        legacy: {
          table: true,
          valid: [[cell(ids.note!, 'Short')]],
          invalid: [[cell(ids.note!, 'a')], [cell(ids.note!, 'b')]],
          invalidPath: V('metadataDefinitionTableValue'),
        },
        simplified: {
          valid: [[{ name: 'Note', value: 'Short' }]],
          invalid: [[{ name: 'Note', value: 'Too long here' }]],
          invalidPath: V('value[0][0].value'),
        },
        denormalized: [{ note: 'Short' }],
      },
    ];
  });

  const create = (url: string, metadata: unknown) =>
    ctx().inject({
      method: 'POST',
      url,
      headers: org.admin.headers,
      payload: { metadataTemplateId: templateId, metadata, securityTemplateIds: [org.defaultTemplateId] },
    });
  const legacyItem = (c: Case, v: unknown) =>
    c.legacy.table
      ? { metadataDefinitionId: ids[c.attribute], metadataDefinitionTableValue: v }
      : { metadataDefinitionId: ids[c.attribute], metadataDefinitionValue: v };
  const simplifiedItem = (c: Case, v: unknown) => ({
    name: c.attribute === 'live' ? 'Live Date' : c.attribute[0]!.toUpperCase() + c.attribute.slice(1),
    value: v,
  });

  it('valid values are stored, and read back the same through both encodings', async () => {
    for (const c of cases) {
      for (const [encoding, url, item] of [
        ['legacy', '/v1/asset', legacyItem(c, c.legacy.valid)],
        ['simplified', '/v1/assets/asset', simplifiedItem(c, c.simplified.valid)],
      ] as const) {
        const res = await create(url, [item]);
        assert.equal(res.statusCode, 200, `${c.type} (${encoding}): ${res.body}`);
        const objectId = res.json().objectId ?? res.json().data?.objectId;
        const stored = json(
          await ctx().inject({ method: 'GET', url: `/v1/asset/${objectId}`, headers: org.admin.headers }),
        );
        assert.deepEqual(
          stored.metadataDenormalized[search[c.attribute]!],
          c.denormalized,
          `${c.type} (${encoding}) denormalized`,
        );
        const simple = json(
          await ctx().inject({
            method: 'GET',
            url: `/v1/assets/asset/${objectId}?system=false&empty=false`,
            headers: org.admin.headers,
          }),
        ).data.metadata;
        assert.ok(
          simple.some((m: any) => m.name === simplifiedItem(c, null).name),
          `${c.type} (${encoding}) reads back by name`,
        );
      }
    }
  });

  it('invalid values are refused with 400 naming the exact path; nothing is stored', async () => {
    const before = (await ctx().deps.db.selectFrom('assets').select('id').where('org_id', '=', org.orgId).execute())
      .length;
    for (const c of cases) {
      for (const [encoding, url, item, path] of [
        ['legacy', '/v1/asset', legacyItem(c, c.legacy.invalid), c.legacy.invalidPath],
        ['simplified', '/v1/assets/asset', simplifiedItem(c, c.simplified.invalid), c.simplified.invalidPath],
      ] as const) {
        const res = await create(url, [item]);
        assert.equal(res.statusCode, 400, `${c.type} (${encoding}): ${res.body}`);
        assert.equal(res.json().code, 'validation_failed');
        assert.equal(res.json().details[0].field, path, `${c.type} (${encoding}): ${res.body}`);
      }
    }
    assert.equal(
      (await ctx().deps.db.selectFrom('assets').select('id').where('org_id', '=', org.orgId).execute()).length,
      before,
    );
  });
});
