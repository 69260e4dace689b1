import { formatDate } from './dates.ts';
import type { AttributeDef, CompiledTemplate, LegacyItem, SimplifiedItem, SimplifiedValue, VocabRef } from './model.ts';
import { hasValue, validateMetadata, type ValidationResult } from './validate.ts';

const refs = (v: unknown): VocabRef[] =>
  Array.isArray(v) ? (v as VocabRef[]) : v && typeof v === 'object' ? [v as VocabRef] : [];

function valueName(t: CompiledTemplate, def: AttributeDef, ref: VocabRef): string {
  return t.vocabularies.get(def.vocabularyId ?? '')?.byId.get(ref.valueId)?.name ?? ref.valueId;
}

/** A text value as its attribute reads now: a list for multi-value (keywords), one string otherwise (a list stored before a change is joined). */
function textValue(def: AttributeDef, value: unknown): string | string[] {
  if (def.multiple) return Array.isArray(value) ? (value as string[]) : [String(value)];
  return Array.isArray(value) ? value.join(', ') : (value as string);
}

function simplifyValue(t: CompiledTemplate, def: AttributeDef, item: LegacyItem): SimplifiedValue {
  if (!hasValue(item)) return null;
  switch (def.type) {
    case 'text':
      return textValue(def, item.metadataDefinitionValue);
    case 'date':
      return formatDate(item.metadataDefinitionValue as string, def.dateFormat);
    case 'controlledVocabulary': {
      const names = refs(item.metadataDefinitionValue).map((r) => valueName(t, def, r));
      return def.multiple ? names : (names[0] ?? null);
    }
    case 'cascade': {
      const levels = new Map((def.levels ?? []).map((l) => [l.id, l]));
      return (item.metadataDefinitionValue as LegacyItem[]).flatMap((level) => {
        const levelDef = levels.get(level.metadataDefinitionId);
        return levelDef ? [{ name: levelDef.name, value: simplifyValue(t, levelDef, level) }] : [];
      });
    }
    case 'table': {
      const columns = new Map((def.columns ?? []).map((c) => [c.id, c]));
      return (item.metadataDefinitionTableValue ?? []).map((row) =>
        row.flatMap((cell) => {
          const column = columns.get(cell.metadataDefinitionId);
          return column ? [{ name: column.name, value: simplifyValue(t, column, cell) }] : [];
        }),
      );
    }
  }
}

/**
 * Canonical legacy document → the 1.5 simplified (name-based) encoding: attributes and columns by
 * display name, vocabulary values by name (arrays for multi-select), dates in the attribute's
 * declared format, tables as rows of `{name, value}` cells, cascades as `{name, value}` per level.
 */
export function toSimplified(t: CompiledTemplate, document: readonly LegacyItem[]): SimplifiedItem[] {
  const out: SimplifiedItem[] = [];
  for (const item of document) {
    const def = t.byId.get(item.metadataDefinitionId);
    if (!def) continue;
    out.push({ name: def.name, value: simplifyValue(t, def, item) });
  }
  return out;
}

/**
 * Simplified (or mixed) document → canonical legacy document, through the validator, so every
 * problem comes back with its path. Read-only attributes pass (this is a conversion, not a write).
 */
export function toLegacy(t: CompiledTemplate, document: unknown, path = 'body.metadata'): ValidationResult {
  return validateMetadata(t, document, { mode: 'patch', allowReadonly: true, path });
}

function denormalValue(t: CompiledTemplate, def: AttributeDef, item: LegacyItem): unknown {
  switch (def.type) {
    case 'text':
      return textValue(def, item.metadataDefinitionValue);
    case 'date':
      return item.metadataDefinitionValue;
    case 'controlledVocabulary': {
      const names = refs(item.metadataDefinitionValue).map((r) => valueName(t, def, r));
      return def.multiple ? names : names[0];
    }
    case 'cascade': {
      const out: Record<string, unknown> = {};
      const levels = new Map((def.levels ?? []).map((l) => [l.id, l]));
      for (const level of item.metadataDefinitionValue as LegacyItem[]) {
        const levelDef = levels.get(level.metadataDefinitionId);
        if (levelDef) out[levelDef.searchField] = denormalValue(t, levelDef, level);
      }
      return out;
    }
    case 'table': {
      const columns = new Map((def.columns ?? []).map((c) => [c.id, c]));
      return (item.metadataDefinitionTableValue ?? []).map((row) => {
        const out: Record<string, unknown> = {};
        for (const cell of row) {
          const column = columns.get(cell.metadataDefinitionId);
          if (column && hasValue(cell)) out[column.searchField] = denormalValue(t, column, cell);
        }
        return out;
      });
    }
  }
}

/**
 * `metadataDenormalized`: searchField → value, the map search, sort and facets read. Text and dates
 * (ISO) as strings, vocabulary values by name (arrays for multi-select), tables as arrays of
 * `{columnSearchField: value}`, cascades as `{levelSearchField: value}`.
 */
export function denormalize(t: CompiledTemplate, document: readonly LegacyItem[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const item of document) {
    const def = t.byId.get(item.metadataDefinitionId);
    if (def && hasValue(item)) out[def.searchField] = denormalValue(t, def, item);
  }
  return out;
}

/**
 * Applies a canonical patch to a canonical document: an item replaces the attribute's value, an
 * empty item (`{metadataDefinitionId}`) clears it; the result is in template order and keeps only
 * attributes of the template (so it also projects a document onto a new template).
 */
export function mergeMetadata(
  t: CompiledTemplate,
  current: readonly LegacyItem[],
  patch: readonly LegacyItem[] = [],
): LegacyItem[] {
  const byId = new Map<string, LegacyItem>();
  for (const item of current) if (hasValue(item)) byId.set(item.metadataDefinitionId, item);
  for (const item of patch) {
    if (hasValue(item)) byId.set(item.metadataDefinitionId, item);
    else byId.delete(item.metadataDefinitionId);
  }
  return t.attributes.flatMap((a) => {
    const item = byId.get(a.id);
    return item ? [item] : [];
  });
}

/** Legacy items with dates in the attributes' declared formats, as reference clients read them. */
export function presentLegacy(t: CompiledTemplate, document: readonly LegacyItem[]): LegacyItem[] {
  const fix = (def: AttributeDef | undefined, item: LegacyItem): LegacyItem => {
    if (!def || !hasValue(item)) return item;
    if (def.type === 'date')
      return { ...item, metadataDefinitionValue: formatDate(item.metadataDefinitionValue as string, def.dateFormat) };
    if (def.type === 'table') {
      const columns = new Map((def.columns ?? []).map((c) => [c.id, c]));
      return {
        ...item,
        metadataDefinitionTableValue: item.metadataDefinitionTableValue!.map((row) =>
          row.map((cell) => fix(columns.get(cell.metadataDefinitionId), cell)),
        ),
      };
    }
    return item;
  };
  return document.map((item) => fix(t.byId.get(item.metadataDefinitionId), item));
}
