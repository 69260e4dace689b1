import type { Principal } from '../../../core/authz/principal.ts';
import type { DbOrTrx } from '../../../core/db/connect.ts';
import { invalidField } from '../../../core/http/errors.ts';
import {
  assertRestrictedUnchanged,
  templateUse,
  denormalize as denormalizeWith,
  hasValue,
  loadTemplateCached,
  mergeMetadata as mergeWith,
  metadataInvalid,
  presentLegacy as presentLegacyWith,
  toSimplified as toSimplifiedWith,
  validateMetadata,
  type CompiledTemplate,
  type LegacyItem,
  type SimplifiedItem,
} from '../../metadata/index.ts';

/**
 * The asset side of metadata documents: every write is validated by the metadata feature
 * against the asset's template (either encoding of reference §7.17) and stored canonical
 * (legacy, id-based), with the searchField → value map beside it.
 */
export type { LegacyItem, SimplifiedItem };

export interface PreparedMetadata {
  doc: LegacyItem[];
  denormalized: Record<string, unknown>;
}

/**
 * Compiled templates are read on every asset read and write: the metadata feature's cache keeps
 * them per process and checks the organization's definitions version (one primary-key read), so
 * a definition change made by any process is seen by the next request (a time-based cache let
 * reads and validation lag behind a renamed value).
 */
export async function templateOf(
  db: DbOrTrx,
  orgId: string,
  templateId: string | null,
): Promise<CompiledTemplate | undefined> {
  if (!templateId) return undefined;
  return loadTemplateCached(db, orgId, templateId);
}

/** The template for a write: it must exist in the organization and be open to the caller. */
export async function templateForWrite(
  db: DbOrTrx,
  principal: Principal,
  templateId: string,
  field = 'body.metadataTemplateId',
): Promise<CompiledTemplate> {
  const t = await templateOf(db, principal.orgId, templateId);
  const use = t ? await templateUse(db, principal, templateId) : 'unknown';
  if (!t || use === 'unknown')
    throw invalidField(
      field,
      'Invalid metadataTemplateId: no metadata template of this organization you may use has this id',
    );
  if (use === 'not_for_assets')
    throw invalidField(
      field,
      'Invalid metadataTemplateId: this is an action template (its templateType has neither default nor asset); assets need a template of type default or asset',
    );
  return t;
}

/** A whole document (a new asset): required attributes and defaults apply. */
export function prepareCreate(
  principal: Principal,
  t: CompiledTemplate,
  doc: unknown,
  field = 'body.metadata',
): PreparedMetadata {
  const r = validateMetadata(t, doc ?? [], { mode: 'create', applyDefaults: true, path: field });
  if (!r.ok) throw metadataInvalid(r.problems);
  // Without Sensitive Data a restricted attribute keeps its default (the document without input).
  if (t.attributes.some((a) => a.restricted || a.columns?.some((c) => c.restricted)))
    assertRestrictedUnchanged(
      t,
      principal,
      validateMetadata(t, [], { mode: 'create', applyDefaults: true, path: field }).document,
      r.document,
      field,
    );
  return { doc: r.document, denormalized: denormalizeWith(t, r.document) };
}

/** A change: what is sent replaces (an empty item clears), the rest of `current` stays. */
export function preparePatch(
  principal: Principal,
  t: CompiledTemplate,
  doc: unknown,
  current: readonly LegacyItem[],
  field = 'body.metadata',
): PreparedMetadata {
  const r = validateMetadata(t, doc ?? [], { mode: 'patch', current: [...current], path: field });
  if (!r.ok) throw metadataInvalid(r.problems);
  assertRestrictedUnchanged(t, principal, mergeWith(t, current), r.document, field);
  return { doc: r.document, denormalized: denormalizeWith(t, r.document) };
}

/**
 * One item as the template stores it (vocabulary values by name or id resolved, dates and numbers
 * in their stored form), checked like a patch of that item alone; a bad value throws the same
 * 400 naming `field`. For comparing values a caller sent with stored ones (bulk edit's remove).
 */
export function normalizeItem(t: CompiledTemplate, item: LegacyItem, field: string): LegacyItem | undefined {
  const r = validateMetadata(t, [item], { mode: 'patch', current: [], path: field });
  if (!r.ok) throw metadataInvalid(r.problems);
  return r.document.find((i) => i.metadataDefinitionId === item.metadataDefinitionId);
}

/** A document moved onto a (possibly different) template: attributes it lacks are dropped. */
export function project(t: CompiledTemplate, doc: readonly LegacyItem[]): PreparedMetadata {
  const merged = mergeWith(t, doc);
  return { doc: merged, denormalized: denormalizeWith(t, merged) };
}

/** Read-only system attributes (file name, size, type) set by Tessera itself. */
export function withSystemValues(
  t: CompiledTemplate | undefined,
  doc: readonly LegacyItem[],
  values: { filename?: string; size?: number | null; type?: string | null },
): PreparedMetadata | undefined {
  if (!t) return undefined;
  const patch: LegacyItem[] = [];
  const set = (searchField: string, value: string | undefined) => {
    const def = t.attributes.find((a) => a.searchField === searchField);
    if (def && value !== undefined) patch.push({ metadataDefinitionId: def.id, metadataDefinitionValue: value });
  };
  set('system_filename', values.filename);
  set('system_file_size', values.size === null || values.size === undefined ? undefined : String(values.size));
  set('system_file_type', values.type ?? undefined);
  if (patch.length === 0) return undefined;
  const merged = mergeWith(t, doc, patch);
  return { doc: merged, denormalized: denormalizeWith(t, merged) };
}

export function forLegacyRead(t: CompiledTemplate | undefined, doc: readonly LegacyItem[]): LegacyItem[] {
  return t ? presentLegacyWith(t, doc) : [...doc];
}

export function forSimplifiedRead(t: CompiledTemplate | undefined, doc: readonly LegacyItem[]): SimplifiedItem[] {
  return t ? toSimplifiedWith(t, doc) : [];
}

export function isEmptyValue(value: unknown): boolean {
  return value === null || value === undefined || value === '' || (Array.isArray(value) && value.length === 0);
}

export { hasValue };

/**
 * Embedded (IPTC, XMP, EXIF) values as a patch of the attributes that declare them: only empty
 * attributes unless `overwrite`; read-only attributes never. Each value is fitted to its attribute
 * (lists joined for single-value text, cut to the attribute's length, line breaks folded where not
 * allowed) and validated alone, so one unusable field never keeps the others out.
 */
export function embeddedPatch(
  t: CompiledTemplate,
  current: readonly LegacyItem[],
  values: Readonly<Record<string, string | string[]>>,
  overwrite: boolean,
): LegacyItem[] {
  const set = new Set(current.filter(hasValue).map((i) => i.metadataDefinitionId));
  const patch: LegacyItem[] = [];
  for (const def of t.attributes) {
    if (!def.embeddedFields?.length || def.readonly || (set.has(def.id) && !overwrite)) continue;
    const found = def.embeddedFields.map((f) => values[f]).find((v) => v !== undefined && v.length > 0);
    if (found === undefined) continue;
    const fit = (s: string) => {
      const one = def.multiLine ? s : s.replace(/\s*[\r\n]+\s*/g, ' ');
      const max = def.length ?? 100_000;
      return [...one].length > max ? [...one].slice(0, max).join('') : one;
    };
    const value =
      def.type === 'text' && def.multiple
        ? [found].flat().map(fit)
        : def.type === 'text'
          ? fit([found].flat().join(', '))
          : [found].flat()[0]!;
    const item: LegacyItem = { metadataDefinitionId: def.id, metadataDefinitionValue: value };
    const r = validateMetadata(t, [item], { mode: 'patch', current: [], path: 'embedded' });
    if (r.ok) patch.push(...r.document.filter((i) => i.metadataDefinitionId === def.id));
  }
  return patch;
}

/** The document with an embedded patch (already validated item by item by embeddedPatch) applied. */
export function withEmbedded(
  t: CompiledTemplate,
  current: readonly LegacyItem[],
  patch: readonly LegacyItem[],
): PreparedMetadata {
  const merged = mergeWith(t, current, patch);
  return { doc: merged, denormalized: denormalizeWith(t, merged) };
}
