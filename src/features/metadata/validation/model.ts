/**
 * The metadata model as the validation library sees it: plain, already-loaded definitions
 * (no database access), so validating a document is pure and fast.
 */

export type AttributeType = 'text' | 'date' | 'controlledVocabulary' | 'table' | 'cascade';
export const ATTRIBUTE_TYPES: readonly AttributeType[] = ['text', 'date', 'controlledVocabulary', 'table', 'cascade'];

/** Date formats an attribute may declare (the reference's `dateFormat`). Values are stored as ISO calendar dates. */
export const DATE_FORMATS = [
  'MM/dd/yyyy',
  'dd/MM/yyyy',
  'yyyy-MM-dd',
  'yyyy/MM/dd',
  'dd.MM.yyyy',
  'MM-dd-yyyy',
  'dd-MM-yyyy',
] as const;
export type DateFormat = (typeof DATE_FORMATS)[number];

export interface AttributeFlags {
  required: boolean;
  readonly: boolean;
  visible: boolean;
  facetable: boolean;
  sortable: boolean;
  restricted: boolean;
}

export interface AttributeDef extends AttributeFlags {
  id: string;
  name: string;
  searchField: string;
  type: AttributeType;
  subType: string;
  system: boolean;
  /** text: maximum length in characters */
  length?: number;
  /** text: newlines allowed */
  multiLine?: boolean;
  /** date */
  dateFormat?: DateFormat;
  /** controlledVocabulary (and cascade levels) */
  vocabularyId?: string;
  /** controlledVocabulary: several values; text: several strings (keywords) */
  multiple?: boolean;
  /** text and date: the embedded (IPTC, XMP, EXIF) fields read at upload, in priority order */
  embeddedFields?: string[];
  /** table */
  singleRow?: boolean;
  columns?: AttributeDef[];
  /** cascade: its levels in order (each a controlledVocabulary attribute) */
  levels?: AttributeDef[];
}

export interface VocabularyValue {
  id: string;
  name: string;
  /** Cascades: the value of the previous level this one belongs under (null: any). */
  parentId: string | null;
}

export interface VocabularyDef {
  id: string;
  name: string;
  values: VocabularyValue[];
  byId: Map<string, VocabularyValue>;
  /** name (as written, and lower-cased) → value */
  byName: Map<string, VocabularyValue>;
}

/** A template ready for validation: its effective attributes (groups in order, system group last). */
export interface CompiledTemplate {
  id: string;
  name: string;
  attributes: AttributeDef[];
  byId: Map<string, AttributeDef>;
  /** display name (as written, and lower-cased) → attribute */
  byName: Map<string, AttributeDef>;
  vocabularies: Map<string, VocabularyDef>;
  /** searchField → default value (simplified encoding) */
  defaults: { searchField: string; value: unknown }[];
}

// --- the two encodings (reference §7.17) ---

export interface VocabRef {
  valueId: string;
}

/** A legacy (id-based) value of one attribute. */
export type LegacyValue = string | string[] | VocabRef | VocabRef[] | LegacyItem[];

export interface LegacyItem {
  metadataDefinitionId: string;
  metadataDefinitionValue?: LegacyValue;
  metadataDefinitionTableValue?: LegacyItem[][];
}

export type SimplifiedValue = string | string[] | SimplifiedItem[] | SimplifiedItem[][] | null;

export interface SimplifiedItem {
  name: string;
  value?: SimplifiedValue;
}

export interface Problem {
  /** JSON path into the request, e.g. `body.metadata[2].metadataDefinitionValue.valueId` */
  path: string;
  message: string;
}

export function buildVocabulary(id: string, name: string, values: VocabularyValue[]): VocabularyDef {
  const byId = new Map<string, VocabularyValue>();
  const byName = new Map<string, VocabularyValue>();
  for (const v of values) {
    byId.set(v.id, v);
    if (!byName.has(v.name.toLowerCase())) byName.set(v.name.toLowerCase(), v);
  }
  // Exact names too, so the common case needs no lower-casing (a name never shadows another's lower case).
  for (const v of values) if (!byName.has(v.name)) byName.set(v.name, v);
  return { id, name, values, byId, byName };
}

export function compileTemplate(input: {
  id: string;
  name: string;
  attributes: AttributeDef[];
  vocabularies: VocabularyDef[];
  defaults?: { searchField: string; value: unknown }[];
}): CompiledTemplate {
  const byId = new Map<string, AttributeDef>();
  const byName = new Map<string, AttributeDef>();
  for (const a of input.attributes) {
    byId.set(a.id, a);
    if (!byName.has(a.name.toLowerCase())) byName.set(a.name.toLowerCase(), a);
  }
  for (const a of input.attributes) if (!byName.has(a.name)) byName.set(a.name, a);
  return {
    id: input.id,
    name: input.name,
    attributes: input.attributes,
    byId,
    byName,
    vocabularies: new Map(input.vocabularies.map((v) => [v.id, v])),
    defaults: input.defaults ?? [],
  };
}

/** Slug used as searchField: lower case, non-alphanumerics → `_` (reference §10.1: "Colors" → "colors"). */
export function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  return slug === '' ? 'field' : /^[0-9]/.test(slug) ? `f_${slug}` : slug;
}
