/**
 * The one tokenizer both engines rely on. Tessera turns text into tokens itself, so SQLite FTS5
 * (which then only splits on the spaces) and PostgreSQL (which receives lexemes literally, as a
 * `tsvector`/`tsquery` value, never through its own parser or locale) index and match exactly the
 * same tokens: lower-cased, diacritics removed, split on anything that is not a letter or digit.
 */
const SPLIT = /[^\p{L}\p{N}]+/u;
const MARKS = /\p{M}+/gu;
/** Longer tokens are cut (PostgreSQL lexemes are limited; nobody searches 64+ letter words). */
export const MAX_TOKEN_LENGTH = 64;
/** Per document; PostgreSQL positions stop at 16383, so beyond this phrases could differ. */
export const MAX_DOC_TOKENS = 16000;

export function tokenize(text: string): string[] {
  if (!text) return [];
  const folded = text.normalize('NFKD').replace(MARKS, '').toLowerCase();
  const out: string[] = [];
  for (const part of folded.split(SPLIT)) {
    if (part.length === 0) continue;
    out.push(part.length > MAX_TOKEN_LENGTH ? part.slice(0, MAX_TOKEN_LENGTH) : part);
  }
  return out;
}

/** Lower-cased, diacritic-free, single-spaced: how facet names and values are compared. */
export function foldKey(text: string): string {
  return text.normalize('NFKD').replace(MARKS, '').toLowerCase().replace(/\s+/g, ' ').trim();
}

/** The four text fields of a document, in index order (FTS5 columns; PostgreSQL weights A–D). */
export const TEXT_FIELDS = ['filename', 'asset', 'metadata', 'content'] as const;
export type TextField = (typeof TEXT_FIELDS)[number];
export const FIELD_WEIGHT: Record<TextField, 'A' | 'B' | 'C' | 'D'> = {
  filename: 'A',
  asset: 'B',
  metadata: 'C',
  content: 'D',
};

export type DocumentTokens = Record<TextField, string[]>;

/** Tokens of each field, capped so the whole document stays within MAX_DOC_TOKENS. */
export function documentTokens(text: Record<TextField, string>): DocumentTokens {
  let budget = MAX_DOC_TOKENS;
  const out = {} as DocumentTokens;
  for (const field of TEXT_FIELDS) {
    const tokens = tokenize(text[field]).slice(0, Math.max(0, budget));
    budget -= tokens.length;
    out[field] = tokens;
  }
  return out;
}

/**
 * A PostgreSQL `tsvector` literal: every lexeme with its positions and field weight. Lexemes only
 * hold letters and digits, so they need no escaping; positions run on across fields.
 */
export function tsvectorLiteral(doc: DocumentTokens): string {
  const positions = new Map<string, string[]>();
  let pos = 0;
  for (const field of TEXT_FIELDS) {
    const weight = FIELD_WEIGHT[field];
    for (const token of doc[field]) {
      pos += 1;
      const list = positions.get(token);
      const entry = `${Math.min(pos, 16383)}${weight}`;
      if (list) list.push(entry);
      else positions.set(token, [entry]);
    }
  }
  const parts: string[] = [];
  for (const [token, list] of positions) parts.push(`'${token}':${list.join(',')}`);
  return parts.join(' ');
}

const hex = (uuid: string) => uuid.toLowerCase().replace(/[^0-9a-z]/g, '');

/**
 * Tokens of the FTS5 `acl` column (never searched by text terms, which always name their columns):
 * one per security template, prefixed by the document's state, so the visibility filter is an OR
 * of a handful of short posting lists (template ids are unique, so they also fix the organization).
 * States: `a` live current version, `b` deleted current, `c` live older version, `d` deleted older.
 */
export function aclState(deleted: boolean, current: boolean): 'a' | 'b' | 'c' | 'd' {
  return current ? (deleted ? 'b' : 'a') : deleted ? 'd' : 'c';
}

export function aclText(templateIds: readonly string[], deleted: boolean, current: boolean): string {
  const state = aclState(deleted, current);
  return templateIds.map((t) => `${state}${hex(t)}`).join(' ');
}

/** The FTS5 expression: any viewable template, in any allowed state. */
export function aclMatch(templateIds: readonly string[], includeDeleted: boolean, includeVersions: boolean): string {
  const states = [
    'a',
    ...(includeDeleted ? ['b'] : []),
    ...(includeVersions ? ['c'] : []),
    ...(includeDeleted && includeVersions ? ['d'] : []),
  ];
  const tokens = templateIds.flatMap((t) => states.map((s) => `"${s}${hex(t)}"`));
  return `{acl} : (${tokens.join(' OR ')})`;
}
