import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine } from '../../../../test/helpers/context.ts';
import { createTestOrg } from '../../../../test/helpers/factories.ts';
import {
  defaultTemplateId,
  denormalize,
  loadTemplate,
  loadTemplateCached,
  toLegacy,
  toSimplified,
  validateMetadata,
} from '../index.ts';
import { metadataApi } from '../../../../test/helpers/metadata.ts';

/**
 * The validation library against definitions stored in each engine (built through the admin API):
 * every attribute type, valid and invalid, in both encodings, cascades inside table rows too.
 */
forEachEngine('metadata: validating documents against stored templates', (ctx) => {
  async function setup() {
    const org = await createTestOrg(ctx());
    const api = metadataApi(ctx(), org);
    const { colors, shades, red } = await api.cascadeVocabularies();
    const channels = await api.vocabulary('Channels', ['Web', 'Print', 'TV']);
    const headline = await api.attribute({ name: 'Headline', type: 'text', length: 10, required: true });
    const live = await api.attribute({ name: 'Live Date', type: 'date', dateFormat: 'dd/MM/yyyy' });
    const channel = await api.attribute({
      name: 'Channel',
      type: 'controlledVocabulary',
      controlledVocabularyId: channels.metadataDefinitionId,
      isMultipleSelect: true,
    });
    const palette = await api.attribute({
      name: 'Palette',
      type: 'cascade',
      levels: [
        { name: 'Color', controlledVocabularyId: colors.metadataDefinitionId },
        { name: 'Shade', controlledVocabularyId: shades.metadataDefinitionId },
      ],
    });
    const note = await api.attribute({ name: 'Note', type: 'text', length: 20 });
    const usage = await api.attribute({
      name: 'Usage',
      type: 'table',
      tableFieldIds: [channel.id, note.id, palette.id],
    });
    const group = await api.group('Campaign', [headline.id, live.id, usage.id, palette.id]);
    const template = await api.template('Campaign', [group.id], {
      attributesDefaultValue: [{ searchField: 'usage_rights', value: 'Royalty Free' }],
    });
    const t = (await loadTemplate(ctx().deps.db, org.orgId, template.templateId))!;
    return {
      org,
      api,
      t,
      ids: {
        headline: headline.id,
        live: live.id,
        usage: usage.id,
        palette: palette.id,
        channel: channel.id,
        note: note.id,
        red,
        levels: palette.cascadeFieldsDenormalized.map((l: any) => l.id),
      },
      vocab: { colors, shades, channels },
    };
  }

  it('loads a template: its groups in order, then the system group; vocabularies; defaults', async () => {
    const { t, org } = await setup();
    assert.deepEqual(
      t.attributes.slice(0, 4).map((a) => a.name),
      ['Headline', 'Live Date', 'Usage', 'Palette'],
    );
    assert.equal(t.attributes.at(-1)!.searchField, 'rights_start_date');
    assert.equal(
      t.byName
        .get('usage')!
        .columns!.map((c) => c.name)
        .join(),
      'Channel,Note,Palette',
    );
    assert.equal(t.byName.get('palette')!.levels!.length, 2);
    assert.equal(t.defaults[0]!.searchField, 'usage_rights');
    assert.equal(await loadTemplate(ctx().deps.db, org.orgId, '00000000-0000-4000-8000-000000000000'), undefined);
    const other = await createTestOrg(ctx());
    assert.equal(
      await loadTemplate(ctx().deps.db, other.orgId, t.id),
      undefined,
      "another organization's template is not found",
    );
    assert.ok(await defaultTemplateId(ctx().deps.db, org.orgId));
  });

  it('a valid document in either encoding gives the same canonical document; defaults apply on create', async () => {
    const { t, ids, vocab } = await setup();
    const simplified = [
      { name: 'Headline', value: 'Launch' },
      { name: 'Live Date', value: '31/01/2025' },
      {
        name: 'Usage',
        value: [
          [
            { name: 'Channel', value: ['Web', 'TV'] },
            {
              name: 'Palette',
              value: [
                { name: 'Color', value: 'Red' },
                { name: 'Shade', value: 'Crimson' },
              ],
            },
          ],
          [
            { name: 'Channel', value: ['Print'] },
            { name: 'Note', value: 'A4' },
          ],
        ],
      },
    ];
    const a = validateMetadata(t, simplified, { mode: 'create', applyDefaults: true });
    assert.deepEqual(a.problems, []);
    const channelValue = (name: string) => ({
      valueId: vocab.channels.metadataDocument.values.find((v: any) => v.valueName === name).valueId,
    });
    const crimson = vocab.shades.metadataDocument.values.find((v: any) => v.valueName === 'Crimson').valueId;
    const legacy = [
      { metadataDefinitionId: ids.headline, metadataDefinitionValue: 'Launch' },
      { metadataDefinitionId: ids.live, metadataDefinitionValue: '31/01/2025' },
      {
        metadataDefinitionId: ids.usage,
        metadataDefinitionTableValue: [
          [
            { metadataDefinitionId: ids.channel, metadataDefinitionValue: [channelValue('Web'), channelValue('TV')] },
            {
              metadataDefinitionId: ids.palette,
              metadataDefinitionValue: [
                { metadataDefinitionId: ids.levels[0], metadataDefinitionValue: { valueId: ids.red } },
                { metadataDefinitionId: ids.levels[1], metadataDefinitionValue: { valueId: crimson } },
              ],
            },
          ],
          [
            { metadataDefinitionId: ids.channel, metadataDefinitionValue: [channelValue('Print')] },
            { metadataDefinitionId: ids.note, metadataDefinitionValue: 'A4' },
          ],
        ],
      },
    ];
    const b = validateMetadata(t, legacy, { mode: 'create', applyDefaults: true });
    assert.deepEqual(b.problems, []);
    assert.deepEqual(b.document, a.document);
    const d = denormalize(t, a.document);
    assert.equal(d.live_date, '2025-01-31');
    assert.equal(d.usage_rights, 'Royalty Free');
    assert.deepEqual((d.usage as any[])[0].palette, { palette_color: 'Red', palette_shade: 'Crimson' });
    assert.deepEqual(toLegacy(t, toSimplified(t, a.document)).document, a.document);
  });

  it('invalid values of every type are reported together, with paths, in both encodings', async () => {
    const { t, ids } = await setup();
    const simplified = validateMetadata(t, [
      { name: 'Headline', value: 'Far too long for ten' },
      { name: 'Live Date', value: '31/02/2025' },
      {
        name: 'Usage',
        value: [
          [
            { name: 'Channel', value: ['Radio'] },
            {
              name: 'Palette',
              value: [
                { name: 'Color', value: 'Blue' },
                { name: 'Shade', value: 'Crimson' },
              ],
            },
          ],
        ],
      },
      { name: 'Palette', value: [{ name: 'Shade', value: 'Navy' }] },
      { name: 'File Size', value: '10' },
    ]);
    assert.deepEqual(
      simplified.problems.map((p) => p.path),
      [
        'body.metadata[0].value',
        'body.metadata[1].value',
        'body.metadata[2].value[0][0].value[0]',
        'body.metadata[2].value[0][1].value[1].value',
        'body.metadata[3].value[0].value',
        'body.metadata[4].value',
      ],
    );
    const legacy = validateMetadata(t, [
      { metadataDefinitionId: ids.headline, metadataDefinitionValue: 'Far too long for ten' },
      { metadataDefinitionId: ids.live, metadataDefinitionValue: '2025-13-01' },
      {
        metadataDefinitionId: ids.usage,
        metadataDefinitionTableValue: [
          [
            {
              metadataDefinitionId: ids.palette,
              metadataDefinitionValue: [
                { metadataDefinitionId: ids.levels[1], metadataDefinitionValue: { valueId: ids.red } },
              ],
            },
          ],
        ],
      },
    ]);
    assert.deepEqual(
      legacy.problems.map((p) => p.path),
      [
        'body.metadata[0].metadataDefinitionValue',
        'body.metadata[1].metadataDefinitionValue',
        'body.metadata[2].metadataDefinitionTableValue[0][0].metadataDefinitionValue[0].metadataDefinitionValue.valueId',
      ],
    );
    const vocabulary = validateMetadata(t, [
      { metadataDefinitionId: ids.headline, metadataDefinitionValue: 'ok' },
      {
        metadataDefinitionId: ids.usage,
        metadataDefinitionTableValue: [
          [{ metadataDefinitionId: ids.channel, metadataDefinitionValue: [{ valueId: ids.red }] }],
        ],
      },
    ]);
    assert.deepEqual(
      vocabulary.problems.map((p) => p.path),
      ['body.metadata[1].metadataDefinitionTableValue[0][0].metadataDefinitionValue[0].valueId'],
    );
    assert.match(vocabulary.problems[0]!.message, /is not a value of vocabulary "Channels"/);
    assert.deepEqual(
      validateMetadata(t, [{ metadataDefinitionId: ids.live, metadataDefinitionValue: '01/02/2025' }]).problems.map(
        (p) => p.path,
      ),
      ['body.metadata.headline'],
      'required Headline missing',
    );
  });

  it('the cached loader reuses a compiled template until any process changes a definition', async () => {
    const { api, t, vocab, org } = await setup();
    const db = ctx().deps.db;
    const first = await loadTemplateCached(db, org.orgId, t.id);
    assert.equal(await loadTemplateCached(db, org.orgId, t.id), first, 'same compiled object while nothing changed');
    // A change made through another instance (another process's cache is not this one's).
    const other = await ctx().secondInstance();
    const res = await other.app.inject({
      method: 'PATCH',
      url: `/v1/metadata/vocabulary/${vocab.channels.metadataDefinitionId}`,
      headers: org.admin.headers,
      payload: { add: ['Radio'] },
    });
    assert.equal(res.statusCode, 200, res.body);
    const fresh = await loadTemplateCached(db, org.orgId, t.id);
    assert.notEqual(fresh, first);
    assert.ok(fresh!.vocabularies.get(vocab.channels.metadataDefinitionId)!.byName.has('Radio'));
    assert.equal(await loadTemplateCached(db, org.orgId, '00000000-0000-4000-8000-000000000000'), undefined);
    void api;
  });

  it('a definition change takes effect on the next load: a renamed value is accepted by its new name only', async () => {
    const { api, t, vocab, org } = await setup();
    await api.call(
      'PATCH',
      `/v1/metadata/vocabulary/${vocab.channels.metadataDefinitionId}`,
      { update: [{ valueId: api.valueId(vocab.channels, 'TV'), valueName: 'Television' }] },
      200,
    );
    const fresh = (await loadTemplate(ctx().deps.db, org.orgId, t.id))!;
    const doc = (value: string) => [
      { name: 'Headline', value: 'x' },
      { name: 'Usage', value: [[{ name: 'Channel', value: [value] }]] },
    ];
    assert.ok(validateMetadata(fresh, doc('Television')).ok);
    assert.equal(validateMetadata(fresh, doc('TV')).ok, false);
  });
});
