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
  const defs = (t?.attributes ?? []).filter((a) => a.restricted);
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
    out.metadata = (record.metadata as LegacyItem[]).filter((i) => !hidden.ids.has(i?.metadataDefinitionId));
  const den = record.metadataDenormalized;
  if (den !== null && typeof den === 'object' && !Array.isArray(den)) {
    const kept = Object.create(null) as Record<string, unknown>;
    for (const [k, v] of Object.entries(den)) if (!hidden.searchFields.has(k.toLowerCase())) kept[k] = v;
    out.metadataDenormalized = { ...kept };
  }
  return out as T;
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
  const restricted = t.attributes.filter((a) => a.restricted);
  if (restricted.length === 0 || seesSensitiveData(principal)) return;
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
