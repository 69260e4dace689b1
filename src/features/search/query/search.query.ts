import { invalidField } from '../../../core/http/errors.ts';
import { lookupTable } from '../../../core/lookup.ts';
import { FIELD_WEIGHT, TEXT_FIELDS, foldKey, tokenize, type TextField } from '../search.tokenize.ts';

/**
 * The query language of reference §8.1, parsed once into an engine-neutral form:
 * - `"*"` (or nothing) matches everything;
 * - `"Name: value"` (colon and space) is a facet term: assets whose facet `Name` has `value`;
 * - `"\"exact words\""` is a phrase (the words adjacent, in order, inside one field);
 * - `"logo*"` matches tokens starting with `logo`;
 * - any other string matches assets holding every one of its words (in any searched field).
 * Terms combine with `operation` (AND by default). `filters` (legacy `("Name":"Value")` strings)
 * and `ranges` always narrow the result (AND), whatever the operation.
 */
export type Operation = 'AND' | 'OR';
export type KeywordField = 'filename' | 'assetId' | 'metadata' | 'content';

export interface TextTerm {
  kind: 'text';
  tokens: string[];
  phrase: boolean;
  prefix: boolean;
}
export interface FacetTerm {
  kind: 'facet';
  facet: string;
  value: string;
  facetKey: string;
  valueKey: string;
}
export interface AllTerm {
  kind: 'all';
}
export type Term = TextTerm | FacetTerm | AllTerm;

export interface RangeFilter {
  /** `createdEpoch`, `lastUpdatedEpoch`, or a date/number attribute's search field. */
  field: string;
  from: number | null;
  to: number | null;
}

export interface SortKey {
  field: string;
  order: 'asc' | 'desc';
}

/** What a search asks, independent of which endpoint carried it (and what saved searches store). */
export interface SearchSpec {
  searchTerm: string[];
  operation: Operation;
  keywordSearchField?: KeywordField;
  filters: string[];
  ranges: RangeFilter[];
  includeDeleted: boolean;
  includeVersions: boolean;
  sortBy: SortKey[];
  relevancy: boolean;
}

export interface ParsedQuery {
  operation: Operation;
  fields: readonly TextField[];
  terms: Term[];
  filters: FacetTerm[];
  ranges: RangeFilter[];
  includeDeleted: boolean;
  includeVersions: boolean;
  sort: SortKey[];
  relevance: boolean;
}

/** Keyed by a caller's field name, lower-cased: a null-prototype table (`constructor` is no column). */
export const SYSTEM_SORTS = lookupTable<'created_epoch' | 'updated_epoch' | 'filename_key'>({
  createdepoch: 'created_epoch',
  lastupdatedepoch: 'updated_epoch',
  filename: 'filename_key',
});

const FIELDS: Record<KeywordField, TextField[]> = {
  filename: ['filename'],
  assetId: ['asset'],
  metadata: ['metadata'],
  content: ['content'],
};

const FACET_TERM = /^([^:"]+?):\s+(.+)$/s;
const FILTER = /^\(?\s*"([^"]+)"\s*:\s*"([^"]*)"\s*\)?$/;

export function facetTerm(facet: string, value: string): FacetTerm {
  return {
    kind: 'facet',
    facet: facet.trim(),
    value: value.trim(),
    facetKey: foldKey(facet),
    valueKey: foldKey(value),
  };
}

export function parseTerm(raw: string, field = 'searchTerm'): Term {
  const text = raw.trim();
  if (text === '' || text === '*') return { kind: 'all' };
  if (text.length > 500) throw invalidField(field, 'a search term is at most 500 characters');
  const facet = FACET_TERM.exec(text);
  if (facet) return facetTerm(facet[1]!, facet[2]!);
  if (text.length >= 2 && text.startsWith('"') && text.endsWith('"')) {
    const tokens = tokenize(text.slice(1, -1));
    return tokens.length === 0 ? { kind: 'all' } : { kind: 'text', tokens, phrase: tokens.length > 1, prefix: false };
  }
  const prefix = text.endsWith('*');
  const tokens = tokenize(prefix ? text.slice(0, -1) : text);
  if (tokens.length === 0) return { kind: 'all' };
  return { kind: 'text', tokens, phrase: false, prefix };
}

export function parseFilter(raw: string, index: number): FacetTerm {
  const m = FILTER.exec(raw.trim()) ?? FACET_TERM.exec(raw.trim().replace(/^\(|\)$/g, ''));
  if (!m) throw invalidField(`body.filters.${index}`, 'expected ("Attribute Name":"Value")');
  return facetTerm(m[1]!, m[2]!);
}

export function parseQuery(spec: SearchSpec): ParsedQuery {
  if (spec.searchTerm.length > 50) throw invalidField('body.searchTerm', 'at most 50 terms');
  const terms = spec.searchTerm.map((t, i) => parseTerm(t, `body.searchTerm.${i}`));
  const filters = spec.filters.map((f, i) => parseFilter(f, i));
  const sort: SortKey[] = [];
  let relevance = spec.relevancy;
  for (const [i, key] of spec.sortBy.entries()) {
    const name = key.field.trim();
    if (name === '') throw invalidField(`body.sortBy.${i}.metadataDefinitionSearchField`, 'must not be empty');
    if (name.toLowerCase() === 'relevance') {
      relevance = true;
      continue;
    }
    sort.push({ field: name, order: key.order });
  }
  if (sort.length > 3) throw invalidField('body.sortBy', 'at most 3 sort keys besides relevance');
  return {
    operation: spec.operation,
    fields: spec.keywordSearchField ? FIELDS[spec.keywordSearchField] : TEXT_FIELDS,
    terms,
    filters,
    ranges: spec.ranges,
    includeDeleted: spec.includeDeleted,
    includeVersions: spec.includeVersions,
    sort,
    relevance,
  };
}

// --- engine text expressions ---

const ftsToken = (token: string) => `"${token}"`;

function fts5Term(term: TextTerm, fields: readonly TextField[]): string {
  // Always name the columns: the `acl` column must never match a text term.
  const filter = `{${fields.join(' ')}} : `;
  if (term.phrase) return `${filter}${term.tokens.map(ftsToken).join(' + ')}`;
  const parts = term.tokens.map((t, i) =>
    term.prefix && i === term.tokens.length - 1 ? `${ftsToken(t)}*` : ftsToken(t),
  );
  return `${filter}(${parts.join(' AND ')})`;
}

/** The FTS5 MATCH expression for the text terms joined by `op`. Tokens are letters/digits only. */
export function fts5Expression(terms: readonly TextTerm[], fields: readonly TextField[], op: Operation): string {
  return terms.map((t) => `(${fts5Term(t, fields)})`).join(op === 'AND' ? ' AND ' : ' OR ');
}

function pgLexeme(token: string, prefix: boolean, weights: string): string {
  return `'${token}'${prefix || weights ? ':' : ''}${prefix ? '*' : ''}${weights}`;
}

function pgTerm(term: TextTerm, fields: readonly TextField[]): string {
  const all = fields.length === TEXT_FIELDS.length;
  const weights = all ? '' : fields.map((f) => FIELD_WEIGHT[f]).join('');
  if (term.phrase) {
    // Per field, so a phrase never runs across the end of one field into the next (as in FTS5).
    return fields
      .map((f) => `(${term.tokens.map((t) => pgLexeme(t, false, FIELD_WEIGHT[f])).join(' <-> ')})`)
      .join(' | ');
  }
  return term.tokens.map((t, i) => pgLexeme(t, term.prefix && i === term.tokens.length - 1, weights)).join(' & ');
}

/** The `tsquery` literal (cast, never parsed by to_tsquery) equivalent to fts5Expression. */
export function tsqueryExpression(terms: readonly TextTerm[], fields: readonly TextField[], op: Operation): string {
  return terms.map((t) => `(${pgTerm(t, fields)})`).join(op === 'AND' ? ' & ' : ' | ');
}
