import { parseDate } from './dates.ts';
import type {
  AttributeDef,
  CompiledTemplate,
  LegacyItem,
  LegacyValue,
  Problem,
  VocabRef,
  VocabularyDef,
  VocabularyValue,
} from './model.ts';

/** Limits that keep one document bounded, whatever the definitions say. */
export const LIMITS = { items: 2000, rows: 1000, textLength: 100_000, multiValues: 1000 };

export interface ValidateOptions {
  /**
   * `create`: the document is the whole metadata of an asset; required attributes must have a
   * value (after defaults). `patch`: only the attributes sent are checked; with `current`, the
   * merged document is checked for required values too.
   */
  mode?: 'create' | 'patch';
  /** Apply the template's `attributesDefaultValue` to attributes the document leaves out (create). */
  applyDefaults?: boolean;
  /** System writes may set read-only attributes (file name, size …); user writes may not. */
  allowReadonly?: boolean;
  /** Path prefix of the document in the request, for problem paths. Default `body.metadata`. */
  path?: string;
  /** Patch: the asset's current canonical document, merged under the patch. */
  current?: LegacyItem[];
}

export interface ValidationResult {
  ok: boolean;
  /** Every problem found, each with its path. */
  problems: Problem[];
  /**
   * The canonical (legacy, id-based) document: items in template order, vocabulary values as
   * `{valueId}`, dates as `yyyy-MM-dd`, empty items kept as `{metadataDefinitionId}` only in a
   * patch (they clear the attribute). Trustworthy only when `ok`.
   */
  document: LegacyItem[];
}

type Encoding = 'legacy' | 'simplified';
const INVALID = Symbol('invalid');
type Parsed = LegacyItem | null | typeof INVALID;

interface Ctx {
  t: CompiledTemplate;
  problems: Problem[];
  allowReadonly: boolean;
}

/**
 * A path into the request, built as a chain and rendered to text only when a problem is reported
 * (valid documents, the common case, never pay for path strings).
 */
interface Path {
  readonly up: Path | null;
  readonly seg: string | number;
}
const at = (up: Path, seg: string | number): Path => ({ up, seg });
function render(path: Path): string {
  const parts: (string | number)[] = [];
  for (let p: Path | null = path; p; p = p.up) parts.push(p.seg);
  let out = String(parts.pop());
  while (parts.length > 0) {
    const seg = parts.pop()!;
    out += typeof seg === 'number' ? `[${seg}]` : `.${seg}`;
  }
  return out;
}

interface Lookup {
  byId: Map<string, AttributeDef>;
  /** exact and lower-cased names */
  byName: Map<string, AttributeDef>;
}

// Per table/cascade lookups, built once per definition object (definitions are immutable once compiled).
const lookups = new WeakMap<AttributeDef, Lookup>();
function lookupOf(def: AttributeDef, children: AttributeDef[]): Lookup {
  let found = lookups.get(def);
  if (!found) {
    found = { byId: new Map(), byName: new Map() };
    for (const c of children) {
      found.byId.set(c.id, c);
      if (!found.byName.has(c.name)) found.byName.set(c.name, c);
      if (!found.byName.has(c.name.toLowerCase())) found.byName.set(c.name.toLowerCase(), c);
    }
    lookups.set(def, found);
  }
  return found;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const describe = (v: unknown) =>
  v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : typeof v;
const show = (s: string) => JSON.stringify(s.length > 60 ? `${s.slice(0, 57)}...` : s);

function isEmptyRaw(v: unknown): boolean {
  return v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0);
}

/**
 * Validates a metadata document against a template, in either encoding (reference §7.17): legacy
 * id-based items (`metadataDefinitionId` / `metadataDefinitionValue` / `metadataDefinitionTableValue`)
 * or the 1.5 simplified name-based items (`{name, value}`); one document may even mix them. Checks
 * types, required, read-only, lengths, dates, vocabulary membership, single/multiple select, table
 * shape and cascade consistency (inside table rows too), and reports every problem at once.
 */
export function validateMetadata(t: CompiledTemplate, input: unknown, options: ValidateOptions = {}): ValidationResult {
  const prefix = options.path ?? 'body.metadata';
  const ctx: Ctx = { t, problems: [], allowReadonly: options.allowReadonly ?? false };
  const mode = options.mode ?? 'create';
  if (!Array.isArray(input)) {
    return {
      ok: false,
      problems: [{ path: prefix, message: `must be an array of metadata items, not ${describe(input)}` }],
      document: [],
    };
  }
  if (input.length > LIMITS.items) {
    return {
      ok: false,
      problems: [{ path: prefix, message: `has ${input.length} items; at most ${LIMITS.items}` }],
      document: [],
    };
  }
  const root: Path = { up: null, seg: prefix };
  const given = new Map<string, LegacyItem>();
  const invalid = new Set<string>();
  input.forEach((raw, i) => {
    const path = at(root, i);
    const found = resolveItem(ctx, t.byId, t.byName, raw, path, 'attribute');
    if (!found) return;
    const { def, encoding } = found;
    if (given.has(def.id) || invalid.has(def.id)) {
      ctx.problems.push({ path: render(path), message: `${show(def.name)} appears more than once` });
      return;
    }
    const parsed = parseAttribute(ctx, def, raw as Record<string, unknown>, encoding, path);
    if (parsed === INVALID) invalid.add(def.id);
    else given.set(def.id, parsed ?? { metadataDefinitionId: def.id });
  });

  // Defaults: only for attributes the document leaves out entirely, on create.
  if (mode === 'create' && options.applyDefaults) {
    for (const d of t.defaults) {
      const def = t.attributes.find((a) => a.searchField === d.searchField);
      if (!def || given.has(def.id) || invalid.has(def.id)) continue;
      const parsed = parseAttribute(
        { ...ctx, allowReadonly: true },
        def,
        { name: def.name, value: d.value },
        'simplified',
        { up: null, seg: `template.attributesDefaultValue.${d.searchField}` },
      );
      if (parsed !== INVALID && parsed) given.set(def.id, parsed);
    }
  }

  const merged = new Map<string, LegacyItem>();
  if (mode === 'patch' && options.current) {
    for (const item of options.current)
      if (t.byId.has(item.metadataDefinitionId) && hasValue(item)) merged.set(item.metadataDefinitionId, item);
  }
  for (const [id, item] of given) merged.set(id, item);

  if (mode === 'create' || options.current) {
    for (const def of t.attributes) {
      if (!def.required || def.readonly) continue;
      if (invalid.has(def.id)) continue; // already reported
      const item = merged.get(def.id);
      if (!item || !hasValue(item))
        ctx.problems.push({ path: `${prefix}.${def.searchField}`, message: `${show(def.name)} is required` });
    }
  }

  const document: LegacyItem[] = [];
  const source = mode === 'patch' && !options.current ? given : merged;
  for (const def of t.attributes) {
    const item = source.get(def.id);
    if (!item) continue;
    if (hasValue(item)) document.push(item);
    else if (mode === 'patch' && !options.current) document.push({ metadataDefinitionId: def.id });
  }
  return { ok: ctx.problems.length === 0, problems: ctx.problems, document };
}

export function hasValue(item: LegacyItem): boolean {
  return item.metadataDefinitionValue !== undefined || item.metadataDefinitionTableValue !== undefined;
}

/** Which definition an item names, and in which encoding it is written. */
function resolveItem(
  ctx: Ctx,
  byId: Map<string, AttributeDef>,
  byName: Map<string, AttributeDef>,
  raw: unknown,
  path: Path,
  what: string,
): { def: AttributeDef; encoding: Encoding } | undefined {
  if (!isObject(raw)) {
    ctx.problems.push({
      path: render(path),
      message: `must be an object ({metadataDefinitionId, metadataDefinitionValue} or {name, value}), not ${describe(raw)}`,
    });
    return undefined;
  }
  if (raw.metadataDefinitionId !== undefined) {
    if (typeof raw.metadataDefinitionId !== 'string') {
      ctx.problems.push({ path: render(at(path, 'metadataDefinitionId')), message: 'must be a string' });
      return undefined;
    }
    const def = byId.get(raw.metadataDefinitionId) ?? byId.get(raw.metadataDefinitionId.toLowerCase());
    if (!def) {
      ctx.problems.push({
        path: render(at(path, 'metadataDefinitionId')),
        message: `${show(raw.metadataDefinitionId)} is not an ${what} of ${what === 'attribute' ? `template ${show(ctx.t.name)}` : 'this attribute'}`,
      });
      return undefined;
    }
    return { def, encoding: 'legacy' };
  }
  if (raw.name !== undefined) {
    if (typeof raw.name !== 'string') {
      ctx.problems.push({ path: render(at(path, 'name')), message: 'must be a string' });
      return undefined;
    }
    const def = byName.get(raw.name) ?? byName.get(raw.name.trim().toLowerCase());
    if (!def) {
      ctx.problems.push({
        path: render(at(path, 'name')),
        message: `${show(raw.name)} is not an ${what} of ${what === 'attribute' ? `template ${show(ctx.t.name)}` : 'this attribute'}`,
      });
      return undefined;
    }
    return { def, encoding: 'simplified' };
  }
  ctx.problems.push({
    path: render(path),
    message: 'names no attribute: send metadataDefinitionId (legacy) or name (simplified)',
  });
  return undefined;
}

/** One attribute's item → its canonical legacy item (null when empty), or INVALID after recording problems. */
function parseAttribute(
  ctx: Ctx,
  def: AttributeDef,
  raw: Record<string, unknown>,
  encoding: Encoding,
  path: Path,
): Parsed {
  let value: unknown;
  let valuePath: Path;
  if (encoding === 'legacy') {
    const table = raw.metadataDefinitionTableValue;
    if (def.type === 'table' && table !== undefined) {
      value = table;
      valuePath = at(path, 'metadataDefinitionTableValue');
    } else {
      value = raw.metadataDefinitionValue;
      valuePath = at(path, 'metadataDefinitionValue');
      if (table !== undefined) {
        ctx.problems.push({
          path: render(at(path, 'metadataDefinitionTableValue')),
          message: `${show(def.name)} is not a table attribute`,
        });
        return INVALID;
      }
    }
  } else {
    value = raw.value;
    valuePath = at(path, 'value');
  }
  if (isEmptyRaw(value)) return null;
  if (def.readonly && !ctx.allowReadonly) {
    ctx.problems.push({ path: render(valuePath), message: `${show(def.name)} is read-only` });
    return INVALID;
  }
  const before = ctx.problems.length;
  const out = parseValue(ctx, def, value, encoding, valuePath);
  if (out === INVALID || ctx.problems.length > before) return INVALID;
  if (out === null) return null;
  return out;
}

function parseValue(ctx: Ctx, def: AttributeDef, value: unknown, encoding: Encoding, path: Path): Parsed {
  switch (def.type) {
    case 'text':
      return parseText(ctx, def, value, path);
    case 'date':
      return parseDateValue(ctx, def, value, path);
    case 'controlledVocabulary': {
      const v = parseVocab(ctx, def, value, encoding, path);
      return v === INVALID ? INVALID : v === null ? null : { metadataDefinitionId: def.id, metadataDefinitionValue: v };
    }
    case 'table':
      return parseTable(ctx, def, value, encoding, path);
    case 'cascade':
      return parseCascade(ctx, def, value, encoding, path);
  }
}

function parseText(ctx: Ctx, def: AttributeDef, value: unknown, path: Path): Parsed {
  if (def.multiple) return parseTexts(ctx, def, value, path);
  const text = oneText(ctx, def, value, path);
  return text === undefined ? INVALID : { metadataDefinitionId: def.id, metadataDefinitionValue: text };
}

/** A multi-value text attribute (keywords): a string or an array of strings; blanks and repeats dropped. */
function parseTexts(ctx: Ctx, def: AttributeDef, value: unknown, path: Path): Parsed {
  const list = Array.isArray(value) ? value : [value];
  if (list.length > LIMITS.multiValues) {
    ctx.problems.push({ path: render(path), message: `${show(def.name)} takes at most ${LIMITS.multiValues} values` });
    return INVALID;
  }
  const out: string[] = [];
  for (const [i, item] of list.entries()) {
    const text = oneText(ctx, def, item, Array.isArray(value) ? at(path, i) : path);
    if (text === undefined) return INVALID;
    const trimmed = text.trim();
    if (trimmed !== '' && !out.includes(trimmed)) out.push(trimmed);
  }
  return out.length === 0 ? null : { metadataDefinitionId: def.id, metadataDefinitionValue: out };
}

function oneText(ctx: Ctx, def: AttributeDef, value: unknown, path: Path): string | undefined {
  let text: string;
  if (typeof value === 'string') text = value;
  else if (typeof value === 'number' && Number.isFinite(value)) text = String(value);
  else {
    ctx.problems.push({ path: render(path), message: `${show(def.name)} takes text, not ${describe(value)}` });
    return undefined;
  }
  const max = Math.min(def.length ?? LIMITS.textLength, LIMITS.textLength);
  const before = ctx.problems.length;
  // UTF-16 length bounds the code-point count from above, so most texts skip the exact count.
  if (text.length > max && [...text].length > max)
    ctx.problems.push({ path: render(path), message: `${show(def.name)} is longer than ${max} characters` });
  if (!def.multiLine && /[\r\n]/.test(text))
    ctx.problems.push({ path: render(path), message: `${show(def.name)} is a single-line field: no line breaks` });
  return ctx.problems.length > before ? undefined : text;
}

function parseDateValue(ctx: Ctx, def: AttributeDef, value: unknown, path: Path): Parsed {
  if (typeof value !== 'string') {
    ctx.problems.push({
      path: render(path),
      message: `${show(def.name)} takes a date as text (${def.dateFormat ?? 'yyyy-MM-dd'}), not ${describe(value)}`,
    });
    return INVALID;
  }
  const date = parseDate(value, def.dateFormat);
  if (!date) {
    ctx.problems.push({
      path: render(path),
      message: `${show(value)} is not a date in the format ${def.dateFormat ?? 'yyyy-MM-dd'} (or yyyy-MM-dd)`,
    });
    return INVALID;
  }
  return { metadataDefinitionId: def.id, metadataDefinitionValue: date };
}

function vocabularyOf(ctx: Ctx, def: AttributeDef, path: Path): VocabularyDef | undefined {
  const vocab = def.vocabularyId ? ctx.t.vocabularies.get(def.vocabularyId) : undefined;
  if (!vocab)
    ctx.problems.push({
      path: render(path),
      message: `${show(def.name)} has no vocabulary; ask an administrator to fix the attribute`,
    });
  return vocab;
}

/** One vocabulary token: `{valueId}`, `{valueName}`/`{name}`, or a string (an id or a name). */
function resolveToken(
  ctx: Ctx,
  def: AttributeDef,
  vocab: VocabularyDef,
  token: unknown,
  encoding: Encoding,
  path: Path,
): VocabularyValue | undefined {
  let found: VocabularyValue | undefined;
  let label: string;
  if (typeof token === 'string') {
    found = encoding === 'legacy' ? vocab.byId.get(token) : vocab.byName.get(token);
    if (!found) {
      const key = token.trim();
      const lower = key.toLowerCase();
      found =
        encoding === 'legacy'
          ? (vocab.byId.get(lower) ?? vocab.byId.get(key) ?? vocab.byName.get(lower))
          : (vocab.byName.get(lower) ?? vocab.byId.get(lower) ?? vocab.byId.get(key));
    }
    label = token;
  } else if (isObject(token) && typeof token.valueId === 'string') {
    found = vocab.byId.get(token.valueId) ?? vocab.byId.get(token.valueId.toLowerCase());
    label = token.valueId;
    path = at(path, 'valueId');
  } else if (isObject(token) && (typeof token.valueName === 'string' || typeof token.name === 'string')) {
    label = (token.valueName ?? token.name) as string;
    found = vocab.byName.get(label.trim().toLowerCase());
  } else {
    ctx.problems.push({
      path: render(path),
      message: `${show(def.name)} takes a value of vocabulary ${show(vocab.name)} (${encoding === 'legacy' ? '{valueId}' : 'its name'}), not ${describe(token)}`,
    });
    return undefined;
  }
  if (!found)
    ctx.problems.push({
      path: render(path),
      message: `${show(label)} is not a value of vocabulary ${show(vocab.name)}`,
    });
  return found;
}

/** A vocabulary attribute's value → `{valueId}` or `[{valueId}]`. */
function parseVocab(
  ctx: Ctx,
  def: AttributeDef,
  value: unknown,
  encoding: Encoding,
  path: Path,
): VocabRef | VocabRef[] | null | typeof INVALID {
  const vocab = vocabularyOf(ctx, def, path);
  if (!vocab) return INVALID;
  const tokens = Array.isArray(value) ? value : [value];
  if (!def.multiple && tokens.length > 1) {
    ctx.problems.push({
      path: render(path),
      message: `${show(def.name)} is single-select: one value, not ${tokens.length}`,
    });
    return INVALID;
  }
  if (tokens.length > LIMITS.multiValues) {
    ctx.problems.push({ path: render(path), message: `${show(def.name)} has more than ${LIMITS.multiValues} values` });
    return INVALID;
  }
  const out: VocabRef[] = [];
  const seen = new Set<string>();
  tokens.forEach((token, i) => {
    const found = resolveToken(ctx, def, vocab, token, encoding, Array.isArray(value) ? at(path, i) : path);
    if (!found) return;
    if (seen.has(found.id)) {
      ctx.problems.push({
        path: render(Array.isArray(value) ? at(path, i) : path),
        message: `${show(found.name)} is chosen twice`,
      });
      return;
    }
    seen.add(found.id);
    out.push({ valueId: found.id });
  });
  if (out.length === 0) return null;
  return def.multiple ? out : out[0]!;
}

function parseCascade(ctx: Ctx, def: AttributeDef, value: unknown, encoding: Encoding, path: Path): Parsed {
  const levels = def.levels ?? [];
  if (!Array.isArray(value)) {
    ctx.problems.push({
      path: render(path),
      message: `${show(def.name)} is a cascade: an array of level items, not ${describe(value)}`,
    });
    return INVALID;
  }
  const { byId, byName } = lookupOf(def, levels);
  const chosen = new Map<string, { refs: VocabRef[]; path: Path }>();
  let bad = false;
  value.forEach((raw, i) => {
    const itemPath = at(path, i);
    // Simplified shorthand: a plain string at position i is the value of level i.
    if (encoding === 'simplified' && (typeof raw === 'string' || Array.isArray(raw))) {
      const level = levels[i];
      if (!level) {
        ctx.problems.push({ path: render(itemPath), message: `${show(def.name)} has only ${levels.length} levels` });
        bad = true;
        return;
      }
      raw = { name: level.name, value: raw };
    }
    const found = resolveItem(ctx, byId, byName, raw, itemPath, 'level');
    if (!found) {
      bad = true;
      return;
    }
    if (chosen.has(found.def.id)) {
      ctx.problems.push({ path: render(itemPath), message: `level ${show(found.def.name)} appears more than once` });
      bad = true;
      return;
    }
    const levelRaw = raw as Record<string, unknown>;
    const levelValue = found.encoding === 'legacy' ? levelRaw.metadataDefinitionValue : levelRaw.value;
    const valuePath = at(itemPath, found.encoding === 'legacy' ? 'metadataDefinitionValue' : 'value');
    if (isEmptyRaw(levelValue)) return;
    const refs = parseVocab(ctx, found.def, levelValue, found.encoding, valuePath);
    if (refs === INVALID) {
      bad = true;
      return;
    }
    if (refs !== null) chosen.set(found.def.id, { refs: Array.isArray(refs) ? refs : [refs], path: valuePath });
  });
  if (bad) return INVALID;
  if (chosen.size === 0) return null;

  // Consistency: each level needs the one before it, and each value must sit under a chosen parent.
  const items: LegacyItem[] = [];
  let previous: { level: AttributeDef; ids: Set<string> } | undefined;
  let gap: AttributeDef | undefined;
  for (const level of levels) {
    const entry = chosen.get(level.id);
    if (!entry) {
      if (level.required)
        ctx.problems.push({ path: render(path), message: `${show(def.name)}: level ${show(level.name)} is required` });
      gap ??= level;
      previous = undefined;
      continue;
    }
    if (gap) {
      ctx.problems.push({
        path: render(entry.path),
        message: `${show(def.name)}: level ${show(level.name)} needs a value at level ${show(gap.name)} first`,
      });
    } else if (previous) {
      const vocab = ctx.t.vocabularies.get(level.vocabularyId ?? '');
      for (const ref of entry.refs) {
        const v = vocab?.byId.get(ref.valueId);
        if (v && v.parentId !== null && !previous.ids.has(v.parentId)) {
          const parentVocab = ctx.t.vocabularies.get(previous.level.vocabularyId ?? '');
          const parentName = parentVocab?.byId.get(v.parentId)?.name ?? v.parentId;
          ctx.problems.push({
            path: render(entry.path),
            message: `${show(v.name)} belongs under ${show(parentName)}, which is not the value chosen at level ${show(previous.level.name)}`,
          });
        }
      }
    }
    items.push({
      metadataDefinitionId: level.id,
      metadataDefinitionValue: level.multiple ? entry.refs : entry.refs[0]!,
    });
    previous = { level, ids: new Set(entry.refs.map((r) => r.valueId)) };
  }
  return { metadataDefinitionId: def.id, metadataDefinitionValue: items };
}

function parseTable(ctx: Ctx, def: AttributeDef, value: unknown, _encoding: Encoding, path: Path): Parsed {
  const columns = def.columns ?? [];
  if (!Array.isArray(value)) {
    ctx.problems.push({
      path: render(path),
      message: `${show(def.name)} is a table: an array of rows, not ${describe(value)}`,
    });
    return INVALID;
  }
  // A single row sent as a flat array of cells is accepted as one row.
  const rows: unknown[] = value.length > 0 && value.every((r) => isObject(r)) ? [value] : value;
  if (def.singleRow && rows.length > 1) {
    ctx.problems.push({
      path: render(path),
      message: `${show(def.name)} is a single-row table: 1 row, not ${rows.length}`,
    });
    return INVALID;
  }
  if (rows.length > LIMITS.rows) {
    ctx.problems.push({ path: render(path), message: `${show(def.name)} has more than ${LIMITS.rows} rows` });
    return INVALID;
  }
  const { byId, byName } = lookupOf(def, columns);
  const out: LegacyItem[][] = [];
  let bad = false;
  rows.forEach((row, r) => {
    const rowPath = rows === value ? at(path, r) : path;
    if (!Array.isArray(row)) {
      ctx.problems.push({ path: render(rowPath), message: `a row must be an array of cells, not ${describe(row)}` });
      bad = true;
      return;
    }
    const cells = new Map<string, LegacyItem | null>();
    const invalid = new Set<string>();
    row.forEach((cell, c) => {
      const cellPath = at(rowPath, c);
      const found = resolveItem(ctx, byId, byName, cell, cellPath, 'column');
      if (!found) {
        bad = true;
        return;
      }
      if (cells.has(found.def.id)) {
        ctx.problems.push({
          path: render(cellPath),
          message: `column ${show(found.def.name)} appears more than once in this row`,
        });
        bad = true;
        return;
      }
      const parsed = parseAttribute(ctx, found.def, cell as Record<string, unknown>, found.encoding, cellPath);
      if (parsed === INVALID) {
        bad = true;
        invalid.add(found.def.id);
        cells.set(found.def.id, null);
        return;
      }
      cells.set(found.def.id, parsed);
    });
    const present = columns.map((c) => cells.get(c.id)).filter((c): c is LegacyItem => Boolean(c));
    if (present.length === 0 && invalid.size === 0) return;
    for (const column of columns) {
      if (column.required && !column.readonly && !cells.get(column.id) && !invalid.has(column.id)) {
        ctx.problems.push({
          path: render(rowPath),
          message: `${show(def.name)}: column ${show(column.name)} is required in every row`,
        });
        bad = true;
      }
    }
    out.push(present);
  });
  if (bad) return INVALID;
  if (out.length === 0) return null;
  return { metadataDefinitionId: def.id, metadataDefinitionTableValue: out };
}

export type { LegacyValue };
