// Validating one 40-attribute metadata document (text, dates, single and multi vocabularies, a
// cascade, a 3-row table with a cascade column, a single-row table, 31 more text fields) in both
// encodings, against a plain JSON-schema check of the same document compiled by Ajv in the same
// run (Ajv's discriminator picks each item's branch by name or id). Ajv checks shapes, types, max lengths and vocabulary names as enums; Tessera also checks
// calendar dates, cascade consistency (inside table rows too), single/multi select, duplicates,
// required and read-only fields, and converts the document to its canonical id-based form.
import { Ajv } from 'ajv';
import { toLegacy, toSimplified, validateMetadata } from '../src/features/metadata/index.ts';
import { sampleTemplate } from '../test/helpers/sample-template.ts';
import type { AttributeDef, CompiledTemplate } from '../src/features/metadata/validation/model.ts';
import { fmt, printTable } from './lib.ts';

const t = sampleTemplate(31);
const N = Number(process.env.BENCH_N ?? 20_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

const simplified = [
  { name: 'Title', value: 'Spring campaign hero' },
  { name: 'Notes', value: 'Shot on location.\nApproved by brand.' },
  { name: 'Release Date', value: '03/15/2025' },
  { name: 'Color', value: 'Blue' },
  { name: 'Channels', value: ['Web', 'Social', 'Print'] },
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
        { name: 'Note', value: 'global' },
        {
          name: 'Tint',
          value: [
            { name: 'Color', value: 'Blue' },
            { name: 'Shade', value: ['Navy'] },
          ],
        },
      ],
      [
        { name: 'Channel', value: 'Print' },
        { name: 'Until', value: '30.06.2026' },
        {
          name: 'Tint',
          value: [
            { name: 'Color', value: 'Red' },
            { name: 'Shade', value: ['Crimson'] },
          ],
        },
      ],
      [
        { name: 'Channel', value: 'TV' },
        { name: 'Note', value: 'regional only' },
      ],
    ],
  },
  { name: 'Summary', value: [[{ name: 'Headline', value: 'Fresh colours for spring' }]] },
  ...Array.from({ length: 31 }, (_, i) => ({ name: `Field ${i}`, value: `value number ${i} of the document` })),
];
const attributeCount = new Set(simplified.map((i) => i.name)).size + 1; // + the read-only File Size
const first = validateMetadata(t, simplified);
if (!first.ok) throw new Error(JSON.stringify(first.problems));
const legacy = first.document;

// --- the plain JSON-schema baseline ---
function names(t: CompiledTemplate, def: AttributeDef): string[] {
  return t.vocabularies.get(def.vocabularyId!)!.values.map((v) => v.name);
}
function simplifiedValue(def: AttributeDef): object {
  switch (def.type) {
    case 'text':
      return { type: 'string', maxLength: def.length };
    case 'date':
      return { type: 'string', pattern: '^\\d{1,2}[./-]\\d{1,2}[./-]\\d{4}$|^\\d{4}-\\d{2}-\\d{2}$' };
    case 'controlledVocabulary':
      return def.multiple
        ? { type: 'array', uniqueItems: true, items: { enum: names(t, def) } }
        : { enum: names(t, def) };
    case 'cascade':
      return {
        type: 'array',
        items: byName(
          def.levels!.map((l) => ({
            type: 'object',
            required: ['name'],
            properties: { name: { const: l.name }, value: simplifiedValue(l) },
          })),
        ),
      };
    case 'table':
      return {
        type: 'array',
        maxItems: def.singleRow ? 1 : 1000,
        items: { type: 'array', items: byName(def.columns!.map(simplifiedItem)) },
      };
  }
}
// The fastest plain form: Ajv's discriminator picks the branch by the item's name / id.
const byName = (branches: object[]) => ({
  type: 'object',
  required: ['name'],
  discriminator: { propertyName: 'name' },
  oneOf: branches,
});
const byId = (branches: object[]) => ({
  type: 'object',
  required: ['metadataDefinitionId'],
  discriminator: { propertyName: 'metadataDefinitionId' },
  oneOf: branches,
});
function simplifiedItem(def: AttributeDef): object {
  return { type: 'object', required: ['name'], properties: { name: { const: def.name }, value: simplifiedValue(def) } };
}
const ref = { type: 'object', required: ['valueId'], properties: { valueId: { type: 'string', format: 'uuid' } } };
function legacyItem(def: AttributeDef): object {
  const value =
    def.type === 'text'
      ? { type: 'string', maxLength: def.length }
      : def.type === 'date'
        ? { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' }
        : def.type === 'controlledVocabulary'
          ? def.multiple
            ? { type: 'array', items: ref }
            : ref
          : def.type === 'cascade'
            ? { type: 'array', items: byId(def.levels!.map(legacyItem)) }
            : undefined;
  return {
    type: 'object',
    required: ['metadataDefinitionId'],
    properties: {
      metadataDefinitionId: { const: def.id },
      ...(value ? { metadataDefinitionValue: value } : {}),
      ...(def.type === 'table'
        ? {
            metadataDefinitionTableValue: {
              type: 'array',
              items: { type: 'array', items: byId(def.columns!.map(legacyItem)) },
            },
          }
        : {}),
    },
  };
}
const ajv = new Ajv({ allErrors: true, discriminator: true, validateFormats: false });
const ajvSimplified = ajv.compile({ type: 'array', maxItems: 2000, items: byName(t.attributes.map(simplifiedItem)) });
const ajvLegacy = ajv.compile({ type: 'array', maxItems: 2000, items: byId(t.attributes.map(legacyItem)) });
if (!ajvSimplified(simplified) || !ajvLegacy(legacy))
  throw new Error(`baseline schema rejects the document: ${JSON.stringify(ajvSimplified.errors ?? ajvLegacy.errors)}`);

function rate(fn: () => unknown): number {
  for (let i = 0; i < 2000; i++) fn();
  let best = 0;
  for (let r = 0; r < ROUNDS; r++) {
    const start = performance.now();
    for (let i = 0; i < N; i++) fn();
    best = Math.max(best, N / ((performance.now() - start) / 1000));
  }
  return best;
}

const baselineS = rate(() => ajvSimplified(simplified));
const baselineL = rate(() => ajvLegacy(legacy));
const rows: [string, number, number][] = [
  ['Ajv JSON schema, simplified (baseline)', baselineS, baselineS],
  ['Tessera validateMetadata, simplified', rate(() => validateMetadata(t, simplified)), baselineS],
  ['Ajv JSON schema, legacy (baseline)', baselineL, baselineL],
  ['Tessera validateMetadata, legacy', rate(() => validateMetadata(t, legacy)), baselineL],
  ['Tessera toSimplified (legacy → names)', rate(() => toSimplified(t, legacy)), baselineL],
  ['Tessera toLegacy (names → ids, validated)', rate(() => toLegacy(t, simplified)), baselineS],
];
printTable(
  `Validating a ${attributeCount}-attribute metadata document (tables and cascades included), best of ${ROUNDS} × ${N}`,
  ['check', 'documents/s', 'µs/document', 'vs Ajv (same encoding)'],
  rows.map(([name, r, base]) => [name, Math.round(r).toLocaleString('en-US'), fmt(1e6 / r, 1), `${fmt(r / base, 2)}×`]),
);
