import type { Principal } from '../../../core/authz/principal.ts';
import { mayPerform } from '../../../core/authz/permissions.ts';
import { forbidden } from '../../../core/http/errors.ts';
import type { DbOrTrx } from '../../../core/db/connect.ts';
import type { CompiledTemplate, LegacyItem } from '../validation/model.ts';
import { versionQuery } from './template-cache.ts';

/**
 * Sensitive Data (reference: "See sensitive metadata"): attributes marked `isRestricted` are read
 * and written only by callers whose role holds the Sensitive Data privilege (the permission
 * table's `asset.sensitive_data` row). For everyone else they do not exist: absent from asset
 * reads in both encodings, from search records, facets and saved-search results, never matched by
 * free text (their values are kept out of the text index), and a filter, sort, range or write
 * naming one is a 403 naming the attribute.
 */
export interface RestrictedAttributes {
  /** attribute ids (legacy items' metadataDefinitionId) */
  ids: ReadonlySet<string>;
  /** search fields, lower case (metadataDenormalized keys, sortBy / dateRanges fields) */
  searchFields: ReadonlySet<string>;
  /** display names, lower case (facet names, simplified items) */
  names: ReadonlySet<string>;
  /** lower-case search field or name → the display name, for error messages */
  display: ReadonlyMap<string, string>;
}

export const NO_RESTRICTED: RestrictedAttributes = {
  ids: new Set(),
  searchFields: new Set(),
  names: new Set(),
  display: new Map(),
};

/** Whether the caller sees and writes restricted attributes. */
export function seesSensitiveData(principal: Principal): boolean {
  return mayPerform(principal, 'asset.sensitive_data');
}

const cache = new Map<string, { version: string; value: RestrictedAttributes }>();

/** The organization's restricted attributes (cached per definitions version, like compiled templates). */
export async function restrictedAttributes(db: DbOrTrx, orgId: string): Promise<RestrictedAttributes> {
  const version = (await versionQuery.execute(db, { key: `metadata.version.${orgId}` }))[0]?.value ?? 'initial';
  const hit = cache.get(orgId);
  if (hit && hit.version === version) return hit.value;
  const rows = await db
    .selectFrom('metadata_attributes')
    .select(['id', 'name', 'search_field'])
    .where('org_id', '=', orgId)
    .where('restricted', '=', 1)
    .execute();
  const value: RestrictedAttributes =
    rows.length === 0
      ? NO_RESTRICTED
      : {
          ids: new Set(rows.map((r) => r.id)),
          searchFields: new Set(rows.map((r) => r.search_field.toLowerCase())),
          names: new Set(rows.map((r) => r.name.toLowerCase())),
          display: new Map(
            rows.flatMap(
              (r) =>
                [
                  [r.search_field.toLowerCase(), r.name],
                  [r.name.toLowerCase(), r.name],
                  [r.id.toLowerCase(), r.name],
                ] as [string, string][],
            ),
          ),
        };
  cache.set(orgId, { version, value });
  if (cache.size > 1000) cache.delete(cache.keys().next().value!);
  return value;
}

/** What the caller may not see: the organization's restricted attributes, or none for a holder of Sensitive Data. */
export async function hiddenAttributesFor(db: DbOrTrx, principal: Principal): Promise<RestrictedAttributes> {
  return seesSensitiveData(principal) ? NO_RESTRICTED : restrictedAttributes(db, principal.orgId);
}

/** A template's restricted attributes (no query: the compiled template carries the flag). */
export function restrictedOfTemplate(t: CompiledTemplate | undefined): RestrictedAttributes {
  // Table columns are attributes too: a restricted column is hidden inside its table.
  const defs = (t?.attributes ?? []).flatMap((a) => [a, ...(a.columns ?? [])]).filter((a) => a.restricted);
  if (defs.length === 0) return NO_RESTRICTED;
  return {
    ids: new Set(defs.map((a) => a.id)),
    searchFields: new Set(defs.map((a) => a.searchField.toLowerCase())),
    names: new Set(defs.map((a) => a.name.toLowerCase())),
    display: new Map(
      defs.flatMap(
        (a) =>
          [
            [a.searchField.toLowerCase(), a.name],
            [a.name.toLowerCase(), a.name],
            [a.id.toLowerCase(), a.name],
          ] as [string, string][],
      ),
    ),
  };
}

export function isNone(r: RestrictedAttributes): boolean {
  return r.ids.size === 0 && r.searchFields.size === 0;
}

/** A legacy asset record (metadata items, metadataDenormalized) without the restricted attributes. */
export function withoutRestricted<T extends Record<string, unknown>>(record: T, hidden: RestrictedAttributes): T {
  if (isNone(hidden)) return record;
  const out: Record<string, unknown> = { ...record };
  if (Array.isArray(record.metadata))
    out.metadata = itemsWithoutRestricted(record.metadata as Record<string, unknown>[], hidden);
  const den = record.metadataDenormalized;
  if (den !== null && typeof den === 'object' && !Array.isArray(den)) {
    const kept = Object.create(null) as Record<string, unknown>;
    for (const [k, v] of Object.entries(den)) {
      if (hidden.searchFields.has(k.toLowerCase())) continue;
      // A table's rows: objects keyed by column search field, restricted columns left out.
      kept[k] =
        Array.isArray(v) && v.some((row) => row !== null && typeof row === 'object' && !Array.isArray(row))
          ? v.map((row) =>
              row !== null && typeof row === 'object' && !Array.isArray(row)
                ? Object.fromEntries(Object.entries(row).filter(([c]) => !hidden.searchFields.has(c.toLowerCase())))
                : row,
            )
          : v;
    }
    out.metadataDenormalized = { ...kept };
  }
  return out as T;
}

/** Whether a metadata item (legacy `metadataDefinitionId`, or simplified / free-form `name`) names a restricted attribute. */
function namesRestricted(item: unknown, hidden: RestrictedAttributes): string | undefined {
  if (item === null || typeof item !== 'object') return undefined;
  const { metadataDefinitionId: id, name } = item as { metadataDefinitionId?: unknown; name?: unknown };
  if (typeof id === 'string' && hidden.ids.has(id)) return hidden.display.get(id.toLowerCase()) ?? id;
  if (typeof name === 'string' && hidden.names.has(name.toLowerCase()))
    return hidden.display.get(name.toLowerCase()) ?? name;
  return undefined;
}

/**
 * Metadata items (an asset's or a collection's document, either encoding) without the restricted
 * attributes, and each table without its restricted columns.
 */
export function itemsWithoutRestricted<T>(items: readonly T[], hidden: RestrictedAttributes): T[] {
  if (isNone(hidden)) return [...items];
  const table = (rows: unknown) =>
    Array.isArray(rows)
      ? rows.map((row) =>
          Array.isArray(row) ? row.filter((cell) => namesRestricted(cell, hidden) === undefined) : row,
        )
      : rows;
  return items
    .filter((i) => namesRestricted(i, hidden) === undefined)
    .map((i) => {
      if (i === null || typeof i !== 'object') return i;
      const item = i as Record<string, unknown>;
      if (Array.isArray(item.metadataDefinitionTableValue))
        return { ...item, metadataDefinitionTableValue: table(item.metadataDefinitionTableValue) } as T;
      if (Array.isArray(item.value) && item.value.some(Array.isArray))
        return { ...item, value: table(item.value) } as T;
      return i;
    });
}

/** 403 naming the attribute when `items` (or a table row inside one) names a restricted attribute. */
export function assertNoRestrictedItems(items: readonly unknown[], hidden: RestrictedAttributes, path: string): void {
  if (isNone(hidden)) return;
  for (const [i, item] of items.entries()) {
    const cells =
      item !== null && typeof item === 'object'
        ? [
            (item as { metadataDefinitionTableValue?: unknown }).metadataDefinitionTableValue,
            (item as { value?: unknown }).value,
          ].flatMap((rows) => (Array.isArray(rows) ? rows.flatMap((row) => (Array.isArray(row) ? row : [])) : []))
        : [];
    const name =
      namesRestricted(item, hidden) ?? cells.map((c) => namesRestricted(c, hidden)).find((n) => n !== undefined);
    if (name !== undefined)
      throw forbidden(`Missing privilege: Sensitive Data (${path}.${i} names the restricted attribute "${name}")`);
  }
}

/** 403 naming the attribute: the caller lacks Sensitive Data and `field` (search field or name) is restricted. */
export function restrictedAttributeRefused(hidden: RestrictedAttributes, field: string, path: string) {
  const name = hidden.display.get(field.toLowerCase()) ?? field;
  return forbidden(`Missing privilege: Sensitive Data (${path} names the restricted attribute "${name}")`);
}

/**
 * A write by a caller without Sensitive Data may not change a restricted attribute: compares the
 * validated document with what it was before (the asset's current document, or the template's
 * defaults for a new asset) and refuses (403 naming the attribute) when one differs.
 */
export function assertRestrictedUnchanged(
  t: CompiledTemplate,
  principal: Principal,
  before: readonly LegacyItem[],
  after: readonly LegacyItem[],
  path: string,
): void {
  if (seesSensitiveData(principal)) return;
  assertRestrictedColumnsUnchanged(t, before, after, path);
  const restricted = t.attributes.filter((a) => a.restricted);
  if (restricted.length === 0) return;
  const valueOf = (doc: readonly LegacyItem[], id: string) => {
    const item = doc.find((i) => i.metadataDefinitionId === id);
    if (!item) return '';
    const { metadataDefinitionValue: v, metadataDefinitionTableValue: tv } = item;
    const empty =
      (v === undefined || v === '' || (Array.isArray(v) && v.length === 0)) && (tv === undefined || tv.length === 0);
    return empty ? '' : JSON.stringify([v ?? null, tv ?? null]);
  };
  for (const a of restricted) {
    if (valueOf(before, a.id) !== valueOf(after, a.id))
      throw forbidden(`Missing privilege: Sensitive Data (${path} changes the restricted attribute "${a.name}")`);
  }
}

/**
 * For a caller without Sensitive Data, a table's restricted columns keep their cells: a row sent
 * back without a restricted cell gets the cell it had (rows match by position), and any other
 * change to one — a new value, a new row setting one, a dropped row holding one — is a 403 naming
 * the column. Fills `after` in place.
 */
function assertRestrictedColumnsUnchanged(
  t: CompiledTemplate,
  before: readonly LegacyItem[],
  after: readonly LegacyItem[],
  path: string,
): void {
  for (const table of t.attributes) {
    const hiddenColumns = (table.columns ?? []).filter((c) => c.restricted);
    if (hiddenColumns.length === 0) continue;
    const rowsOf = (doc: readonly LegacyItem[]) =>
      doc.find((i) => i.metadataDefinitionId === table.id)?.metadataDefinitionTableValue ?? [];
    const old = rowsOf(before);
    const now = rowsOf(after);
    const cellValue = (row: readonly LegacyItem[] | undefined, id: string) => {
      const cell = row?.find((c) => c.metadataDefinitionId === id);
      const v = cell?.metadataDefinitionValue;
      return cell === undefined || v === undefined || v === '' || (Array.isArray(v) && v.length === 0)
        ? ''
        : JSON.stringify(v);
    };
    for (const column of hiddenColumns) {
      for (let r = 0; r < Math.max(old.length, now.length); r++) {
        const row = now[r];
        if (row && !row.some((c) => c.metadataDefinitionId === column.id)) {
          const kept = old[r]?.find((c) => c.metadataDefinitionId === column.id);
          if (kept) row.push(kept);
        }
        if (cellValue(old[r], column.id) !== cellValue(now[r], column.id))
          throw forbidden(
            `Missing privilege: Sensitive Data (${path} changes the restricted column "${column.name}" of "${table.name}")`,
          );
      }
    }
  }
}

/**
 * A collection's metadata update by a caller without Sensitive Data (`hidden` not none): the
 * update may not name a restricted attribute or column (403), and a table it sends back keeps the
 * restricted cells the caller could not see (rows match by position; dropping a row that holds
 * one is a 403). Returns the update with those cells restored.
 */
export function keepRestrictedCells(
  updates: readonly Record<string, unknown>[],
  current: readonly Record<string, unknown>[],
  hidden: RestrictedAttributes,
  path: string,
): Record<string, unknown>[] {
  if (isNone(hidden)) return [...updates];
  assertNoRestrictedItems(updates, hidden, path);
  const keyOf = (m: Record<string, unknown>) => String(m.metadataDefinitionId ?? m.name ?? '').toLowerCase();
  return updates.map((u) => {
    const before = current.find((m) => keyOf(m) === keyOf(u));
    const field = Array.isArray(u.metadataDefinitionTableValue)
      ? 'metadataDefinitionTableValue'
      : Array.isArray(u.value) && u.value.some(Array.isArray)
        ? 'value'
        : undefined;
    const oldRows = before && field && Array.isArray(before[field]) ? (before[field] as unknown[]) : [];
    if (!field || oldRows.length === 0) return u;
    const newRows = u[field] as unknown[];
    const rows = newRows.map((row, r) => {
      const kept = Array.isArray(oldRows[r])
        ? (oldRows[r] as unknown[]).filter((c) => namesRestricted(c, hidden) !== undefined)
        : [];
      return Array.isArray(row) && kept.length > 0 ? [...row, ...kept] : row;
    });
    for (let r = newRows.length; r < oldRows.length; r++) {
      const held = Array.isArray(oldRows[r])
        ? (oldRows[r] as unknown[]).map((c) => namesRestricted(c, hidden)).find((n) => n !== undefined)
        : undefined;
      if (held !== undefined)
        throw forbidden(
          `Missing privilege: Sensitive Data (${path} drops a row holding the restricted column "${held}")`,
        );
    }
    return { ...u, [field]: rows };
  });
}
