import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { denormalize, mergeMetadata, presentLegacy, toLegacy, toSimplified } from './encodings.ts';
import { sampleTemplate } from '../../../../test/helpers/sample-template.ts';
import type { LegacyItem } from './model.ts';
import { validateMetadata } from './validate.ts';

const t = sampleTemplate();
const A = (name: string) => t.byName.get(name.toLowerCase())!;
const col = (table: string, name: string) => A(table).columns!.find((c) => c.name === name)!;
const v = (vocabName: string, valueName: string) =>
  [...t.vocabularies.values()].find((x) => x.name === vocabName)!.byName.get(valueName.toLowerCase())!.id;
const paths = (r: { problems: { path: string }[] }) => r.problems.map((p) => p.path);

/** One document touching every attribute kind, in the simplified encoding. */
const simplified = [
  { name: 'Title', value: 'Spring campaign' },
  { name: 'Notes', value: 'line one\nline two' },
  { name: 'Release Date', value: '02/29/2024' },
  { name: 'Color', value: 'Blue' },
  { name: 'Channels', value: ['Web', 'Print'] },
  {
    name: 'Palette',
    value: [
      { name: 'Color', value: 'Red' },
      { name: 'Shade', value: ['Crimson', 'Scarlet'] },
    ],
  },
  {
    name: 'Usage',
    value: [
      [
        { name: 'Channel', value: 'Web' },
        { name: 'Until', value: '31.12.2025' },
        {
          name: 'Tint',
          value: [
            { name: 'Color', value: 'Blue' },
            { name: 'Shade', value: ['Navy'] },
          ],
        },
      ],
      [
        { name: 'Channel', value: 'TV' },
        { name: 'Note', value: 'regional' },
      ],
    ],
  },
  { name: 'Summary', value: [[{ name: 'Headline', value: 'Fresh' }]] },
];

/** The same document in the legacy encoding (canonical form). */
const legacy: LegacyItem[] = [
  { metadataDefinitionId: A('Title').id, metadataDefinitionValue: 'Spring campaign' },
  { metadataDefinitionId: A('Notes').id, metadataDefinitionValue: 'line one\nline two' },
  { metadataDefinitionId: A('Release Date').id, metadataDefinitionValue: '2024-02-29' },
  { metadataDefinitionId: A('Color').id, metadataDefinitionValue: { valueId: v('Colors', 'Blue') } },
  {
    metadataDefinitionId: A('Channels').id,
    metadataDefinitionValue: [{ valueId: v('Channels', 'Web') }, { valueId: v('Channels', 'Print') }],
  },
  {
    metadataDefinitionId: A('Palette').id,
    metadataDefinitionValue: [
      { metadataDefinitionId: A('Palette').levels![0]!.id, metadataDefinitionValue: { valueId: v('Colors', 'Red') } },
      {
        metadataDefinitionId: A('Palette').levels![1]!.id,
        metadataDefinitionValue: [{ valueId: v('Shades', 'Crimson') }, { valueId: v('Shades', 'Scarlet') }],
      },
    ],
  },
  {
    metadataDefinitionId: A('Usage').id,
    metadataDefinitionTableValue: [
      [
        {
          metadataDefinitionId: col('Usage', 'Channel').id,
          metadataDefinitionValue: { valueId: v('Channels', 'Web') },
        },
        { metadataDefinitionId: col('Usage', 'Until').id, metadataDefinitionValue: '2025-12-31' },
        {
          metadataDefinitionId: col('Usage', 'Tint').id,
          metadataDefinitionValue: [
            {
              metadataDefinitionId: col('Usage', 'Tint').levels![0]!.id,
              metadataDefinitionValue: { valueId: v('Colors', 'Blue') },
            },
            {
              metadataDefinitionId: col('Usage', 'Tint').levels![1]!.id,
              metadataDefinitionValue: [{ valueId: v('Shades', 'Navy') }],
            },
          ],
        },
      ],
      [
        { metadataDefinitionId: col('Usage', 'Channel').id, metadataDefinitionValue: { valueId: v('Channels', 'TV') } },
        { metadataDefinitionId: col('Usage', 'Note').id, metadataDefinitionValue: 'regional' },
      ],
    ],
  },
  {
    metadataDefinitionId: A('Summary').id,
    metadataDefinitionTableValue: [
      [{ metadataDefinitionId: col('Summary', 'Headline').id, metadataDefinitionValue: 'Fresh' }],
    ],
  },
];

describe('metadata validation: valid documents in both encodings', () => {
  it('the simplified document validates to the canonical legacy document', () => {
    const r = validateMetadata(t, simplified);
    assert.deepEqual(r.problems, []);
    assert.deepEqual(r.document, legacy);
  });

  it('the legacy document validates to itself; dates may be in the declared format', () => {
    assert.deepEqual(validateMetadata(t, legacy).document, legacy);
    const declared = structuredClone(legacy);
    declared[2]!.metadataDefinitionValue = '02/29/2024';
    assert.deepEqual(validateMetadata(t, declared).document, legacy);
  });

  it('a mixed document (some items legacy, some simplified) is accepted', () => {
    const mixed = [...legacy.slice(0, 4), ...simplified.slice(4)];
    assert.deepEqual(validateMetadata(t, mixed).document, legacy);
  });

  it('converts to simplified with names and declared date formats, and back', () => {
    const s = toSimplified(t, legacy);
    assert.deepEqual(s.find((i) => i.name === 'Release Date')?.value, '02/29/2024');
    assert.deepEqual(s.find((i) => i.name === 'Channels')?.value, ['Web', 'Print']);
    assert.deepEqual(toLegacy(t, s).document, legacy);
  });

  it('liberal forms: vocabulary by {valueName}, by id string, ids in any case, cascade as a path of names, a single table row as flat cells', () => {
    const r = validateMetadata(t, [
      { name: 'Title', value: 'x' },
      { metadataDefinitionId: A('Color').id.toUpperCase(), metadataDefinitionValue: { valueName: 'red' } },
      { name: 'Channels', value: [v('Channels', 'Web')] },
      { name: 'Palette', value: ['Red', ['Crimson']] },
      { name: 'Summary', value: [{ name: 'Headline', value: 'h' }] },
    ]);
    assert.deepEqual(r.problems, []);
    assert.deepEqual(r.document[1], {
      metadataDefinitionId: A('Color').id,
      metadataDefinitionValue: { valueId: v('Colors', 'Red') },
    });
    assert.equal(r.document[4]!.metadataDefinitionTableValue!.length, 1);
  });

  it('denormalizes to searchField → value', () => {
    const d = denormalize(t, legacy);
    assert.equal(d.title, 'Spring campaign');
    assert.equal(d.release_date, '2024-02-29');
    assert.equal(d.color, 'Blue');
    assert.deepEqual(d.channels, ['Web', 'Print']);
    assert.deepEqual(d.palette, { palette_color: 'Red', palette_shade: ['Crimson', 'Scarlet'] });
    assert.deepEqual(d.usage, [
      {
        usage_channel: 'Web',
        usage_until: '2025-12-31',
        usage_tint: { usage_tint_color: 'Blue', usage_tint_shade: ['Navy'] },
      },
      { usage_channel: 'TV', usage_note: 'regional' },
    ]);
  });

  it('presentLegacy writes dates in the declared format, tables included', () => {
    const out = presentLegacy(t, legacy);
    assert.equal(out[2]!.metadataDefinitionValue, '02/29/2024');
    assert.equal(out[6]!.metadataDefinitionTableValue![0]![1]!.metadataDefinitionValue, '31.12.2025');
  });
});

describe('metadata validation: every rule, every problem at once with its path', () => {
  it('text: type, maximum length, single-line', () => {
    for (const doc of [
      [{ name: 'Title', value: 'x'.repeat(41) }],
      [{ metadataDefinitionId: A('Title').id, metadataDefinitionValue: 'x'.repeat(41) }],
    ]) {
      const r = validateMetadata(t, doc);
      assert.equal(r.ok, false);
      assert.match(r.problems[0]!.message, /longer than 40/);
    }
    const r = validateMetadata(t, [
      { name: 'Title', value: 'a\nb' },
      { name: 'Notes', value: { text: 1 } },
    ]);
    assert.deepEqual(paths(r), ['body.metadata[0].value', 'body.metadata[1].value']);
    assert.match(r.problems[0]!.message, /single-line/);
    assert.match(r.problems[1]!.message, /takes text/);
    assert.ok(
      validateMetadata(t, [
        { name: 'Title', value: 'x'.repeat(40) },
        { name: 'Notes', value: 'a\nb' },
      ]).ok,
    );
  });

  it('date: declared format or ISO, real calendar dates only', () => {
    const ok = ['12/31/2024', '2024-12-31', '2024-12-31T10:00:00Z', '2/9/2024'];
    for (const value of ok)
      assert.ok(
        validateMetadata(t, [
          { name: 'Title', value: 't' },
          { name: 'Release Date', value },
        ]).ok,
        value,
      );
    const bad = ['02/30/2024', '13/01/2024', '31/12/2024', 'tomorrow', '2023-02-29', ''];
    for (const value of bad.slice(0, 5)) {
      const r = validateMetadata(t, [
        { name: 'Title', value: 't' },
        { metadataDefinitionId: A('Release Date').id, metadataDefinitionValue: value },
      ]);
      assert.deepEqual(paths(r), ['body.metadata[1].metadataDefinitionValue'], value);
    }
    assert.match(
      validateMetadata(t, [{ name: 'Release Date', value: 20240101 }], { mode: 'patch' }).problems[0]!.message,
      /date as text/,
    );
  });

  it('controlled vocabulary: membership, single vs multiple, duplicates, shapes', () => {
    const r = validateMetadata(t, [
      { name: 'Title', value: 't' },
      { name: 'Color', value: 'Purple' },
      { name: 'Channels', value: ['Web', 'Web'] },
      {
        metadataDefinitionId: A('Channels').id,
        metadataDefinitionValue: [{ valueId: '00000000-0000-4000-8000-00000000dead' }],
      },
    ]);
    // The duplicate Channels item is also reported.
    assert.deepEqual(paths(r), ['body.metadata[1].value', 'body.metadata[2].value[1]', 'body.metadata[3]']);
    assert.match(r.problems[0]!.message, /"Purple" is not a value of vocabulary "Colors"/);
    const single = validateMetadata(t, [{ name: 'Color', value: ['Red', 'Blue'] }], { mode: 'patch' });
    assert.match(single.problems[0]!.message, /single-select/);
    const legacyBad = validateMetadata(
      t,
      [
        {
          metadataDefinitionId: A('Channels').id,
          metadataDefinitionValue: [{ valueId: '00000000-0000-4000-8000-00000000dead' }],
        },
      ],
      { mode: 'patch' },
    );
    assert.equal(legacyBad.problems[0]!.path, 'body.metadata[0].metadataDefinitionValue[0].valueId');
    assert.match(
      validateMetadata(t, [{ name: 'Color', value: 7 }], { mode: 'patch' }).problems[0]!.message,
      /takes a value of vocabulary/,
    );
  });

  it('cascade: a level needs the one before; a value must sit under the chosen parent; required levels', () => {
    const mismatch = validateMetadata(
      t,
      [
        {
          name: 'Palette',
          value: [
            { name: 'Color', value: 'Red' },
            { name: 'Shade', value: ['Navy'] },
          ],
        },
      ],
      { mode: 'patch' },
    );
    assert.deepEqual(paths(mismatch), ['body.metadata[0].value[1].value']);
    assert.match(mismatch.problems[0]!.message, /"Navy" belongs under "Blue"/);
    const gap = validateMetadata(t, [{ name: 'Palette', value: [{ name: 'Shade', value: ['Crimson'] }] }], {
      mode: 'patch',
    });
    assert.ok(gap.problems.some((p) => /level "Color" is required/.test(p.message)));
    assert.ok(gap.problems.some((p) => /needs a value at level "Color" first/.test(p.message)));
    // A value with no parent link fits under any parent.
    assert.ok(validateMetadata(t, [{ name: 'Palette', value: ['Green', ['Any']] }], { mode: 'patch' }).ok);
    const unknownLevel = validateMetadata(t, [{ name: 'Palette', value: [{ name: 'Hue', value: 'x' }] }], {
      mode: 'patch',
    });
    assert.equal(unknownLevel.problems[0]!.path, 'body.metadata[0].value[0].name');
    const legacyMismatch = structuredClone(legacy[5]!);
    (legacyMismatch.metadataDefinitionValue as LegacyItem[])[1]!.metadataDefinitionValue = [
      { valueId: v('Shades', 'Navy') },
    ];
    assert.equal(
      validateMetadata(t, [legacyMismatch], { mode: 'patch' }).problems[0]!.path,
      'body.metadata[0].metadataDefinitionValue[1].metadataDefinitionValue',
    );
  });

  it('tables: rows of cells, single-row, unknown and repeated columns, required columns, cascades inside rows (both encodings)', () => {
    const r = validateMetadata(
      t,
      [
        {
          name: 'Usage',
          value: [
            [
              { name: 'Channel', value: 'Web' },
              {
                name: 'Tint',
                value: [
                  { name: 'Color', value: 'Red' },
                  { name: 'Shade', value: ['Navy'] },
                ],
              },
            ],
            [{ name: 'Note', value: 'no channel' }],
            [
              { name: 'Channel', value: 'Web' },
              { name: 'Channel', value: 'TV' },
            ],
            [{ name: 'Width', value: '3' }],
            'not a row',
          ],
        },
        { name: 'Summary', value: [[{ name: 'Headline', value: 'a' }], [{ name: 'Headline', value: 'b' }]] },
      ],
      { mode: 'patch' },
    );
    assert.deepEqual(paths(r), [
      'body.metadata[0].value[0][1].value[1].value',
      'body.metadata[0].value[1]',
      'body.metadata[0].value[2][1]',
      'body.metadata[0].value[3][0].name',
      'body.metadata[0].value[4]',
      'body.metadata[1].value',
    ]);
    assert.match(r.problems[1]!.message, /column "Channel" is required in every row/);
    assert.match(r.problems[5]!.message, /single-row table/);
    const legacyTable = structuredClone(legacy[6]!);
    const tint = legacyTable.metadataDefinitionTableValue![0]![2]!;
    (tint.metadataDefinitionValue as LegacyItem[])[1]!.metadataDefinitionValue = [{ valueId: v('Shades', 'Crimson') }];
    const lr = validateMetadata(t, [legacyTable], { mode: 'patch' });
    assert.deepEqual(paths(lr), [
      'body.metadata[0].metadataDefinitionTableValue[0][2].metadataDefinitionValue[1].metadataDefinitionValue',
    ]);
    assert.match(lr.problems[0]!.message, /"Crimson" belongs under "Red"/);
  });

  it('required, read-only, unknown and repeated attributes, non-array documents', () => {
    const r = validateMetadata(t, [
      { name: 'Nope', value: 'x' },
      { name: 'File Size', value: '12' },
      { name: 'Color', value: 'Red' },
      { name: 'color', value: 'Blue' },
      5,
      {},
    ]);
    assert.deepEqual(paths(r), [
      'body.metadata[0].name',
      'body.metadata[1].value',
      'body.metadata[3]',
      'body.metadata[4]',
      'body.metadata[5]',
      'body.metadata.title',
    ]);
    assert.match(r.problems.at(-1)!.message, /"Title" is required/);
    assert.ok(
      validateMetadata(
        t,
        [
          { name: 'Title', value: 't' },
          { name: 'File Size', value: '12' },
        ],
        { allowReadonly: true },
      ).ok,
    );
    assert.equal(validateMetadata(t, { name: 'Title' }).problems[0]!.path, 'body.metadata');
    assert.ok(validateMetadata(t, [{ name: 'Title', value: '' }]).problems.some((p) => /required/.test(p.message)));
  });

  it('patch mode: only what is sent; an empty value clears; with current, the merged whole is checked', () => {
    const patch = validateMetadata(t, [{ name: 'Color', value: null }], { mode: 'patch' });
    assert.deepEqual(patch.document, [{ metadataDefinitionId: A('Color').id }]);
    const merged = validateMetadata(t, [{ name: 'Color', value: 'Red' }], { mode: 'patch', current: legacy });
    assert.equal(merged.document.length, legacy.length);
    assert.deepEqual(merged.document[3], {
      metadataDefinitionId: A('Color').id,
      metadataDefinitionValue: { valueId: v('Colors', 'Red') },
    });
    const clearRequired = validateMetadata(t, [{ name: 'Title', value: '' }], { mode: 'patch', current: legacy });
    assert.deepEqual(paths(clearRequired), ['body.metadata.title']);
    assert.deepEqual(mergeMetadata(t, legacy, [{ metadataDefinitionId: A('Notes').id }]).length, legacy.length - 1);
  });

  it('defaults fill attributes the document leaves out (create)', () => {
    const withDefaults = {
      ...t,
      defaults: [
        { searchField: 'color', value: 'Green' },
        { searchField: 'title', value: 'Untitled' },
      ],
    };
    const r = validateMetadata(withDefaults, [{ name: 'Notes', value: 'n' }], { mode: 'create', applyDefaults: true });
    assert.deepEqual(r.problems, []);
    assert.equal(denormalize(t, r.document).color, 'Green');
    assert.equal(denormalize(t, r.document).title, 'Untitled');
  });
});

describe('metadata encodings: property', () => {
  const vocabName = (name: string) =>
    fc.constantFrom(...[...t.vocabularies.values()].find((x) => x.name === name)!.values.map((x) => x.name));
  const text = (max: number) =>
    fc.string({ minLength: 1, maxLength: max }).filter((s) => s.trim() !== '' && !/[\r\n]/.test(s));
  const date = fc
    .date({ min: new Date('1900-01-01T00:00:00Z'), max: new Date('2199-12-31T00:00:00Z'), noInvalidDate: true })
    .map((d) => d.toISOString().slice(0, 10));
  const palette = fc.constantFrom(
    ['Red', ['Crimson']],
    ['Red', ['Crimson', 'Scarlet']],
    ['Blue', ['Navy']],
    ['Green', ['Any']],
    ['Green'],
  );
  const row = fc
    .record({
      channel: vocabName('Channels'),
      until: fc.option(date, { nil: undefined }),
      note: fc.option(text(100), { nil: undefined }),
      tint: fc.option(palette, { nil: undefined }),
    })
    .map((r) => [
      { name: 'Channel', value: r.channel },
      ...(r.until ? [{ name: 'Until', value: r.until }] : []),
      ...(r.note ? [{ name: 'Note', value: r.note }] : []),
      ...(r.tint ? [{ name: 'Tint', value: r.tint }] : []),
    ]);
  const doc = fc
    .record({
      title: text(40),
      notes: fc.option(
        fc.string({ minLength: 1, maxLength: 500 }).filter((s) => s.trim() !== ''),
        { nil: undefined },
      ),
      date: fc.option(date, { nil: undefined }),
      color: fc.option(vocabName('Colors'), { nil: undefined }),
      channels: fc.option(fc.uniqueArray(vocabName('Channels'), { minLength: 1, maxLength: 5 }), { nil: undefined }),
      palette: fc.option(palette, { nil: undefined }),
      usage: fc.option(fc.array(row, { minLength: 1, maxLength: 4 }), { nil: undefined }),
    })
    .map((d) => [
      { name: 'Title', value: d.title },
      ...(d.notes ? [{ name: 'Notes', value: d.notes }] : []),
      ...(d.date ? [{ name: 'Release Date', value: d.date }] : []),
      ...(d.color ? [{ name: 'Color', value: d.color }] : []),
      ...(d.channels ? [{ name: 'Channels', value: d.channels }] : []),
      ...(d.palette ? [{ name: 'Palette', value: d.palette }] : []),
      ...(d.usage ? [{ name: 'Usage', value: d.usage }] : []),
    ]);

  it('legacy → simplified → legacy is the identity for valid documents', () => {
    fc.assert(
      fc.property(doc, (input) => {
        const first = validateMetadata(t, input);
        assert.deepEqual(first.problems, []);
        const back = toLegacy(t, toSimplified(t, first.document));
        assert.deepEqual(back.problems, []);
        assert.deepEqual(back.document, first.document);
        // And the legacy document validates to itself.
        assert.deepEqual(validateMetadata(t, first.document).document, first.document);
      }),
      { numRuns: 300 },
    );
  });

  it('never throws on arbitrary input: always a result with problems', () => {
    fc.assert(
      fc.property(
        fc.anything(),
        fc.array(
          fc.record({ name: fc.constantFrom('Title', 'Color', 'Usage', 'Palette', 'x'), value: fc.anything() }),
          { maxLength: 5 },
        ),
        (junk, items) => {
          for (const input of [junk, items]) {
            const r = validateMetadata(t, input, { mode: 'patch' });
            assert.equal(typeof r.ok, 'boolean');
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
