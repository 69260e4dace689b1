import type { DbOrTrx } from '../../core/db/connect.ts';
import { AppError, type ErrorDetail } from '../../core/http/errors.ts';

/**
 * The asset side of metadata documents. The metadata feature owns attributes, templates and
 * validation; until an organization's template can be resolved there, documents are checked for
 * shape only and kept as sent. Both encodings of reference §7.17 are accepted.
 */
export interface LegacyItem {
  metadataDefinitionId: string;
  metadataDefinitionValue?: unknown;
  metadataDefinitionTableValue?: unknown[][];
}

export interface SimpleItem {
  name: string;
  value?: unknown;
}

export interface PreparedMetadata {
  doc: LegacyItem[];
  /** searchField (or attribute id) → value */
  denormalized: Record<string, unknown>;
}

/** Name-based items are kept under this id prefix until the metadata feature maps names to ids. */
const NAME_PREFIX = 'name:';

function fail(details: ErrorDetail[]): never {
  const first = details[0]!;
  throw new AppError('validation_failed', `${first.field}: ${first.message}`, { details });
}

export async function prepareLegacy(_db: DbOrTrx, _orgId: string, _templateId: string | null, doc: unknown, field = 'body.metadata'): Promise<PreparedMetadata> {
  if (doc === null || doc === undefined) return { doc: [], denormalized: {} };
  if (!Array.isArray(doc)) fail([{ field, message: 'must be an array of {metadataDefinitionId, metadataDefinitionValue}' }]);
  const details: ErrorDetail[] = [];
  const out: LegacyItem[] = [];
  const seen = new Set<string>();
  doc.forEach((item, i) => {
    const at = `${field}.${i}`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) return void details.push({ field: at, message: 'must be an object' });
    const { metadataDefinitionId, metadataDefinitionValue, metadataDefinitionTableValue } = item as Record<string, unknown>;
    if (typeof metadataDefinitionId !== 'string' || metadataDefinitionId.length === 0 || metadataDefinitionId.length > 200) {
      return void details.push({ field: `${at}.metadataDefinitionId`, message: 'is required (the attribute id)' });
    }
    if (seen.has(metadataDefinitionId)) return void details.push({ field: `${at}.metadataDefinitionId`, message: 'appears twice' });
    seen.add(metadataDefinitionId);
    if (metadataDefinitionTableValue !== undefined && !(Array.isArray(metadataDefinitionTableValue) && metadataDefinitionTableValue.every(Array.isArray))) {
      return void details.push({ field: `${at}.metadataDefinitionTableValue`, message: 'must be an array of rows (arrays of cells)' });
    }
    const entry: LegacyItem = { metadataDefinitionId };
    if (metadataDefinitionValue !== undefined) entry.metadataDefinitionValue = metadataDefinitionValue;
    if (metadataDefinitionTableValue !== undefined) entry.metadataDefinitionTableValue = metadataDefinitionTableValue as unknown[][];
    out.push(entry);
  });
  if (details.length > 0) fail(details);
  return { doc: out, denormalized: denormalize(out) };
}

export async function prepareSimplified(_db: DbOrTrx, _orgId: string, _templateId: string | null, doc: unknown, field = 'body.metadata'): Promise<PreparedMetadata> {
  if (doc === null || doc === undefined) return { doc: [], denormalized: {} };
  if (!Array.isArray(doc)) fail([{ field, message: 'must be an array of {name, value}' }]);
  const details: ErrorDetail[] = [];
  const legacy: LegacyItem[] = [];
  const seen = new Set<string>();
  doc.forEach((item, i) => {
    const at = `${field}.${i}`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) return void details.push({ field: at, message: 'must be an object' });
    const { name, value } = item as Record<string, unknown>;
    if (typeof name !== 'string' || name.trim() === '' || name.length > 200) return void details.push({ field: `${at}.name`, message: 'is required (the attribute name)' });
    const key = name.trim().toLowerCase();
    if (seen.has(key)) return void details.push({ field: `${at}.name`, message: 'appears twice' });
    seen.add(key);
    const entry: LegacyItem = { metadataDefinitionId: NAME_PREFIX + name.trim() };
    if (value !== undefined) entry.metadataDefinitionValue = value;
    legacy.push(entry);
  });
  if (details.length > 0) fail(details);
  return { doc: legacy, denormalized: denormalize(legacy) };
}

/** Per-attribute upsert: attributes sent replace their old values, the others are kept. */
export function mergeMetadata(existing: readonly LegacyItem[], changes: readonly LegacyItem[], mode: 'replace' | 'append' = 'replace'): LegacyItem[] {
  const byId = new Map(existing.map((item) => [item.metadataDefinitionId, item]));
  for (const change of changes) {
    const old = byId.get(change.metadataDefinitionId);
    if (mode === 'append' && old) {
      byId.set(change.metadataDefinitionId, appendItem(old, change));
    } else {
      byId.set(change.metadataDefinitionId, change);
    }
  }
  return [...byId.values()];
}

function appendItem(old: LegacyItem, change: LegacyItem): LegacyItem {
  if (change.metadataDefinitionTableValue) return { ...old, metadataDefinitionTableValue: [...(old.metadataDefinitionTableValue ?? []), ...change.metadataDefinitionTableValue] };
  const a = old.metadataDefinitionValue;
  const b = change.metadataDefinitionValue;
  if (typeof a === 'string' && typeof b === 'string') return { ...old, metadataDefinitionValue: a === '' ? b : `${a} ${b}` };
  if (Array.isArray(a) && Array.isArray(b)) {
    const seen = new Set(a.map((v) => JSON.stringify(v)));
    return { ...old, metadataDefinitionValue: [...a, ...b.filter((v) => !seen.has(JSON.stringify(v)))] };
  }
  return change;
}

export function denormalize(doc: readonly LegacyItem[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const item of doc) {
    const key = item.metadataDefinitionId.startsWith(NAME_PREFIX) ? item.metadataDefinitionId.slice(NAME_PREFIX.length) : item.metadataDefinitionId;
    out[key] = item.metadataDefinitionTableValue ?? item.metadataDefinitionValue ?? null;
  }
  return out;
}

export function toSimplified(doc: readonly LegacyItem[]): SimpleItem[] {
  return doc.map((item) => ({
    name: item.metadataDefinitionId.startsWith(NAME_PREFIX) ? item.metadataDefinitionId.slice(NAME_PREFIX.length) : item.metadataDefinitionId,
    value: item.metadataDefinitionTableValue ?? item.metadataDefinitionValue ?? null,
  }));
}

export function isEmptyValue(value: unknown): boolean {
  return value === null || value === undefined || value === '' || (Array.isArray(value) && value.length === 0);
}
