import {
  buildVocabulary,
  compileTemplate,
  type AttributeDef,
  type CompiledTemplate,
} from '../../src/features/metadata/validation/model.ts';

/**
 * A compiled template with every attribute kind (tests and the benchmark use it): text (single
 * and multi-line), date, single and multi vocabulary, a two-level cascade, and a multi-row table
 * whose columns are text, date, vocabulary and cascade. `extraText` adds plain text attributes.
 */
export function sampleTemplate(extraText = 0): CompiledTemplate {
  const flags = {
    required: false,
    readonly: false,
    visible: true,
    facetable: false,
    sortable: false,
    restricted: false,
    system: false,
  };
  const id = (n: string) => `00000000-0000-4000-8000-${n.padStart(12, '0')}`;
  const colors = buildVocabulary(id('v1'), 'Colors', [
    { id: id('c1'), name: 'Red', parentId: null },
    { id: id('c2'), name: 'Blue', parentId: null },
    { id: id('c3'), name: 'Green', parentId: null },
  ]);
  const shades = buildVocabulary(id('v2'), 'Shades', [
    { id: id('d1'), name: 'Crimson', parentId: id('c1') },
    { id: id('d2'), name: 'Scarlet', parentId: id('c1') },
    { id: id('d3'), name: 'Navy', parentId: id('c2') },
    { id: id('d4'), name: 'Any', parentId: null },
  ]);
  const channels = buildVocabulary(
    id('v3'),
    'Channels',
    ['Web', 'Print', 'Social', 'E-Commerce', 'TV'].map((name, i) => ({ id: id(`e${i}`), name, parentId: null })),
  );
  const cascade = (suffix: string, name: string, sf: string): AttributeDef => ({
    ...flags,
    id: id(`a${suffix}`),
    name,
    searchField: sf,
    type: 'cascade',
    subType: 'cascade',
    levels: [
      {
        ...flags,
        id: id(`b${suffix}1`),
        name: 'Color',
        searchField: `${sf}_color`,
        type: 'controlledVocabulary',
        subType: 'dropdown',
        vocabularyId: colors.id,
        multiple: false,
        required: true,
      },
      {
        ...flags,
        id: id(`b${suffix}2`),
        name: 'Shade',
        searchField: `${sf}_shade`,
        type: 'controlledVocabulary',
        subType: 'dropdown',
        vocabularyId: shades.id,
        multiple: true,
      },
    ],
  });
  const attributes: AttributeDef[] = [
    {
      ...flags,
      id: id('a1'),
      name: 'Title',
      searchField: 'title',
      type: 'text',
      subType: 'textBox',
      length: 40,
      multiLine: false,
      required: true,
    },
    {
      ...flags,
      id: id('a2'),
      name: 'Notes',
      searchField: 'notes',
      type: 'text',
      subType: 'textArea',
      length: 500,
      multiLine: true,
    },
    {
      ...flags,
      id: id('a3'),
      name: 'Release Date',
      searchField: 'release_date',
      type: 'date',
      subType: 'datePicker',
      dateFormat: 'MM/dd/yyyy',
    },
    {
      ...flags,
      id: id('a4'),
      name: 'Color',
      searchField: 'color',
      type: 'controlledVocabulary',
      subType: 'dropdown',
      vocabularyId: colors.id,
      multiple: false,
    },
    {
      ...flags,
      id: id('a5'),
      name: 'Channels',
      searchField: 'channels',
      type: 'controlledVocabulary',
      subType: 'dropdown',
      vocabularyId: channels.id,
      multiple: true,
    },
    cascade('6', 'Palette', 'palette'),
    {
      ...flags,
      id: id('a7'),
      name: 'Usage',
      searchField: 'usage',
      type: 'table',
      subType: 'table',
      singleRow: false,
      columns: [
        {
          ...flags,
          id: id('a71'),
          name: 'Channel',
          searchField: 'usage_channel',
          type: 'controlledVocabulary',
          subType: 'dropdown',
          vocabularyId: channels.id,
          multiple: false,
          required: true,
        },
        {
          ...flags,
          id: id('a72'),
          name: 'Until',
          searchField: 'usage_until',
          type: 'date',
          subType: 'datePicker',
          dateFormat: 'dd.MM.yyyy',
        },
        {
          ...flags,
          id: id('a73'),
          name: 'Note',
          searchField: 'usage_note',
          type: 'text',
          subType: 'textBox',
          length: 100,
          multiLine: false,
        },
        cascade('74', 'Tint', 'usage_tint'),
      ],
    },
    {
      ...flags,
      id: id('a8'),
      name: 'Summary',
      searchField: 'summary',
      type: 'table',
      subType: 'table',
      singleRow: true,
      columns: [
        {
          ...flags,
          id: id('a81'),
          name: 'Headline',
          searchField: 'summary_headline',
          type: 'text',
          subType: 'textBox',
          length: 80,
          multiLine: false,
        },
      ],
    },
    {
      ...flags,
      id: id('a9'),
      name: 'File Size',
      searchField: 'system_file_size',
      type: 'text',
      subType: 'textBox',
      length: 32,
      readonly: true,
      system: true,
    },
  ];
  for (let i = 0; i < extraText; i++) {
    attributes.push({
      ...flags,
      id: id(`f${i}`),
      name: `Field ${i}`,
      searchField: `field_${i}`,
      type: 'text',
      subType: 'textBox',
      length: 200,
      multiLine: false,
    });
  }
  return compileTemplate({ id: id('t1'), name: 'Sample', attributes, vocabularies: [colors, shades, channels] });
}
