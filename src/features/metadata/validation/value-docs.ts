/**
 * How /openapi.json declares metadata values (core/http/doc-schema.ts `docAs`): the attributes are
 * the organization's own, so a document is keyed by its attribute ids, names or search fields and
 * stays open, but every value has one of the shapes below, by attribute type (model.ts:
 * `LegacyValue`, `SimplifiedValue`; encodings.ts: `denormalize`). A cascade holds one item per
 * level; a table holds rows of cells, and a cell may be a cascade. Plain JSON Schema, no `$ref`.
 */
type Json = Record<string, unknown>;

const str = (description?: string): Json => ({ type: 'string', ...(description ? { description } : {}) });
const strings = (description: string): Json => ({ type: 'array', items: { type: 'string' }, description });

const VocabRef: Json = {
  type: 'object',
  description: 'A controlled-vocabulary value, by id',
  required: ['valueId'],
  properties: { valueId: str('The value id (GET /v1/metadata/vocabulary/{id})') },
};

/** What one non-table, non-cascade attribute holds in the legacy (id-based) encoding, as answered. */
const legacyScalar: Json[] = [
  str('text, or a date as stored (YYYY-MM-DD) or in the attribute’s dateFormat'),
  strings('multi-value text (keywords)'),
  VocabRef,
  { type: 'array', items: VocabRef, description: 'multi-select vocabulary' },
];
const legacyLevel: Json = {
  type: 'object',
  description: 'One level of a cascade',
  required: ['metadataDefinitionId'],
  properties: { metadataDefinitionId: str('The level'), metadataDefinitionValue: { anyOf: legacyScalar } },
};
const legacyCell: Json = {
  type: 'object',
  description: 'One cell of a table row: its column and value',
  required: ['metadataDefinitionId'],
  properties: {
    metadataDefinitionId: str('The column'),
    metadataDefinitionValue: {
      anyOf: [...legacyScalar, { type: 'array', items: legacyLevel, description: 'a cascade column' }],
    },
  },
};

export const legacyValueDoc: Json = {
  description:
    'By the attribute type: text (a string, or a list for multi-value text), a date, a vocabulary value {valueId} (a list of them for multi-select), or a cascade (one {metadataDefinitionId, metadataDefinitionValue} per level)',
  anyOf: [...legacyScalar, { type: 'array', items: legacyLevel, description: 'cascade: one item per level' }],
  examples: ['Harbour at dusk', { valueId: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b' }],
};

export const legacyTableDoc: Json = {
  type: 'array',
  description: 'Table attributes: rows of cells',
  items: { type: 'array', items: legacyCell },
};

/** What a client may send in the legacy encoding (the validator also takes numbers as text and vocabulary values by name). */
const VocabToken: Json = {
  type: 'object',
  description: 'A vocabulary value by id, or by name (valueName or name)',
  properties: { valueId: str(), valueName: str(), name: str() },
};
const inputScalar: Json[] = [
  str('text, a date, or a vocabulary value’s id or name'),
  { type: 'number', description: 'taken as text' },
  { type: 'null', description: 'clears the attribute' },
  VocabToken,
];
const inputLevel: Json = {
  type: 'object',
  required: ['metadataDefinitionId'],
  properties: {
    metadataDefinitionId: str(),
    metadataDefinitionValue: { anyOf: [...inputScalar, { type: 'array', items: { anyOf: inputScalar } }] },
  },
};
const inputCell: Json = {
  type: 'object',
  required: ['metadataDefinitionId'],
  properties: {
    metadataDefinitionId: str('The column'),
    metadataDefinitionValue: {
      anyOf: [...inputScalar, { type: 'array', items: { anyOf: [...inputScalar, inputLevel] } }],
    },
  },
};
const legacyInputValue: Json = {
  description: legacyValueDoc.description,
  anyOf: [...inputScalar, { type: 'array', items: { anyOf: [...inputScalar, inputLevel] } }],
  examples: legacyValueDoc.examples,
};
const legacyInputTable: Json = {
  type: 'array',
  description: 'Table attributes: rows of cells',
  items: { type: 'array', items: inputCell },
};

/** The 1.5 name-based encoding, as answered. */
const simplifiedScalar: Json[] = [
  str('text, a date in the attribute’s dateFormat, or a vocabulary value’s name'),
  strings('multi-value text or multi-select vocabulary names'),
  { type: 'null', description: 'no value' },
];
const simplifiedLevel: Json = {
  type: 'object',
  required: ['name'],
  properties: { name: str('The level or column'), value: { anyOf: simplifiedScalar } },
};
const simplifiedCell: Json = {
  type: 'object',
  required: ['name'],
  properties: {
    name: str('The column'),
    value: { anyOf: [...simplifiedScalar, { type: 'array', items: simplifiedLevel, description: 'a cascade column' }] },
  },
};
export const simplifiedValueDoc: Json = {
  description:
    'By the attribute type: text, a date, vocabulary names (a list for multi-select), a cascade ([{name, value}] per level) or a table (rows of [{name, value}] cells)',
  anyOf: [
    ...simplifiedScalar,
    { type: 'array', items: simplifiedLevel, description: 'cascade: one {name, value} per level' },
    { type: 'array', items: { type: 'array', items: simplifiedCell }, description: 'table: rows of cells' },
  ],
  examples: ['Harbour at dusk', ['Web', 'Print']],
};

/** What a client may send in the name-based encoding: a cascade level or table cell is {name, value}. */
const namedLevel: Json = {
  type: 'object',
  required: ['name'],
  properties: {
    name: str('The level'),
    value: { anyOf: [...inputScalar, { type: 'array', items: { anyOf: inputScalar } }] },
  },
};
const namedInput: Json = {
  type: 'object',
  required: ['name'],
  properties: {
    name: str('The level or column'),
    value: { anyOf: [...inputScalar, { type: 'array', items: { anyOf: [...inputScalar, namedLevel] } }] },
  },
};
const simplifiedInputValue: Json = {
  description: simplifiedValueDoc.description,
  anyOf: [
    ...inputScalar,
    {
      type: 'array',
      items: {
        anyOf: [...inputScalar, namedInput, { type: 'array', items: namedInput, description: 'a table row' }],
      },
    },
  ],
  examples: simplifiedValueDoc.examples,
};

/** One item of a metadata document a client sends: legacy (by id) or name-based. */
export const metadataItemInputDoc: Json = {
  description:
    'Legacy {metadataDefinitionId, metadataDefinitionValue | metadataDefinitionTableValue} or name-based {name, value} (reference §7.17)',
  anyOf: [
    {
      type: 'object',
      title: 'By attribute id',
      required: ['metadataDefinitionId'],
      properties: {
        metadataDefinitionId: str('The attribute'),
        metadataDefinitionValue: legacyInputValue,
        metadataDefinitionTableValue: legacyInputTable,
      },
    },
    {
      type: 'object',
      title: 'By attribute name',
      required: ['name'],
      properties: { name: str('The attribute’s name'), value: simplifiedInputValue },
    },
  ],
};

export const legacyValueInputDoc = legacyInputValue;
export const legacyTableInputDoc = legacyInputTable;
export const simplifiedValueInputDoc = simplifiedInputValue;

const denormalScalar: Json[] = [
  str('text, a date (YYYY-MM-DD) or a vocabulary value’s name'),
  strings('multi-value text or multi-select vocabulary names'),
];
const denormalCascade: Json = {
  type: 'object',
  description: 'cascade: level search field → value',
  additionalProperties: { anyOf: denormalScalar },
};
/** `metadataDenormalized`: searchField → value. */
export const denormalizedDoc: Json = {
  type: 'object',
  description:
    "searchField → value, the map search, sort and facets read (the keys are the organization's own attributes' search fields): text and dates as strings, vocabulary values by name (a list for multi-select), cascades as {levelSearchField: value}, tables as rows of {columnSearchField: value}",
  additionalProperties: {
    anyOf: [
      ...denormalScalar,
      denormalCascade,
      {
        type: 'array',
        description: 'table: one object per row',
        items: { type: 'object', additionalProperties: { anyOf: [...denormalScalar, denormalCascade] } },
      },
    ],
  },
  examples: [{ title: 'Harbour at dusk', keywords: ['boats', 'dusk'], channel: 'Web', published: '2026-11-22' }],
};

/** A simplified item's value when system fields are listed too (GET /v1/assets/asset/{id}?system=true). */
export const simplifiedOrSystemValueDoc: Json = {
  ...simplifiedValueDoc,
  description: `${simplifiedValueDoc.description as string}; system fields: system_created_epoch and system_last_updated_date (ms since the epoch), system_created_by, system_last_updated_by, system_mime_type, system_checksum (strings or null), system_is_federated and system_skip_transcode (booleans)`,
  anyOf: [
    ...(simplifiedValueDoc.anyOf as Json[]),
    { type: 'integer', description: 'a system epoch field (ms)' },
    { type: 'boolean', description: 'a system flag' },
  ],
};
