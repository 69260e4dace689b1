import type { DbOrTrx } from '../../../core/db/connect.ts';
import { settingsOf, type AttributeRow } from './definitions.repo.ts';
import { slugify } from '../validation/model.ts';

/** Attribute rows plus, recursively, their cascade levels and table columns: all attributeOut needs. */
export async function attributeFamily(
  db: DbOrTrx,
  orgId: string,
  ids: readonly string[],
): Promise<Map<string, AttributeRow>> {
  const rows = new Map<string, AttributeRow>();
  let wanted = [...new Set(ids)];
  for (let depth = 0; depth < 3 && wanted.length > 0; depth++) {
    const found = await db
      .selectFrom('metadata_attributes')
      .selectAll()
      .where('org_id', '=', orgId)
      .where((eb) => eb.or([eb('id', 'in', wanted), eb('parent_id', 'in', wanted)]))
      .execute();
    for (const r of found) rows.set(r.id, r);
    wanted = found
      .filter((r) => r.type === 'table')
      .flatMap((r) => settingsOf(r).columnIds ?? [])
      .filter((id) => !rows.has(id));
  }
  return rows;
}

export async function findAttribute(db: DbOrTrx, orgId: string, id: string): Promise<AttributeRow | undefined> {
  return db
    .selectFrom('metadata_attributes')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .where('parent_id', 'is', null)
    .executeTakeFirst();
}

/** A searchField not yet used in the table: the slug, else slug_2, slug_3 … */
export async function freeSearchField(
  db: DbOrTrx,
  table: 'metadata_attributes' | 'metadata_groups' | 'metadata_vocabularies',
  orgId: string,
  base: string,
  taken: Set<string> = new Set(),
): Promise<string> {
  const slug = slugify(base);
  const rows = await db
    .selectFrom(table)
    .select('search_field')
    .where('org_id', '=', orgId)
    .where('search_field', 'like', `${slug}%`)
    .execute();
  const used = new Set([...rows.map((r) => r.search_field), ...taken]);
  if (!used.has(slug)) return slug;
  for (let i = 2; ; i++) if (!used.has(`${slug}_${i}`)) return `${slug}_${i}`;
}

/** Templates using any of the groups: group id → templates. */
export async function templatesUsingGroups(
  db: DbOrTrx,
  orgId: string,
  groupIds: readonly string[],
): Promise<Map<string, { id: string; name: string }[]>> {
  const out = new Map<string, { id: string; name: string }[]>();
  if (groupIds.length === 0) return out;
  const rows = await db
    .selectFrom('metadata_template_groups')
    .innerJoin('metadata_templates', 'metadata_templates.id', 'metadata_template_groups.template_id')
    .select(['metadata_template_groups.group_id', 'metadata_templates.id', 'metadata_templates.name'])
    .where('metadata_template_groups.org_id', '=', orgId)
    .where('metadata_template_groups.group_id', 'in', [...groupIds])
    .orderBy('metadata_templates.name_key')
    .execute();
  for (const r of rows) out.set(r.group_id, [...(out.get(r.group_id) ?? []), { id: r.id, name: r.name }]);
  return out;
}

/** Groups containing any of the attributes: attribute id → groups. */
export async function groupsUsingAttributes(
  db: DbOrTrx,
  orgId: string,
  attributeIds: readonly string[],
): Promise<Map<string, { id: string; name: string }[]>> {
  const out = new Map<string, { id: string; name: string }[]>();
  if (attributeIds.length === 0) return out;
  const rows = await db
    .selectFrom('metadata_group_attributes')
    .innerJoin('metadata_groups', 'metadata_groups.id', 'metadata_group_attributes.group_id')
    .select(['metadata_group_attributes.attribute_id', 'metadata_groups.id', 'metadata_groups.name'])
    .where('metadata_group_attributes.org_id', '=', orgId)
    .where('metadata_group_attributes.attribute_id', 'in', [...attributeIds])
    .orderBy('metadata_groups.name_key')
    .execute();
  for (const r of rows) out.set(r.attribute_id, [...(out.get(r.attribute_id) ?? []), { id: r.id, name: r.name }]);
  return out;
}

/** Table attributes that have any of the attributes as a column: attribute id → tables. */
export async function tablesUsingAttributes(
  db: DbOrTrx,
  orgId: string,
  attributeIds: readonly string[],
): Promise<Map<string, { id: string; name: string }[]>> {
  const out = new Map<string, { id: string; name: string }[]>();
  if (attributeIds.length === 0) return out;
  const wanted = new Set(attributeIds);
  const tables = await db
    .selectFrom('metadata_attributes')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('type', '=', 'table')
    .execute();
  for (const t of tables) {
    for (const id of settingsOf(t).columnIds ?? [])
      if (wanted.has(id)) out.set(id, [...(out.get(id) ?? []), { id: t.id, name: t.name }]);
  }
  return out;
}

/** Attributes (and cascade levels) using a vocabulary: vocabulary id → attributes. */
export async function attributesUsingVocabularies(
  db: DbOrTrx,
  orgId: string,
  vocabularyIds: readonly string[],
): Promise<Map<string, { id: string; name: string }[]>> {
  const out = new Map<string, { id: string; name: string }[]>();
  if (vocabularyIds.length === 0) return out;
  const wanted = new Set(vocabularyIds);
  const rows = await db
    .selectFrom('metadata_attributes')
    .select(['id', 'name', 'settings', 'parent_id'])
    .where('org_id', '=', orgId)
    .where('type', '=', 'controlledVocabulary')
    .execute();
  const parents = new Map<string, string>();
  const parentIds = [...new Set(rows.map((r) => r.parent_id).filter((p): p is string => Boolean(p)))];
  if (parentIds.length > 0) {
    for (const p of await db
      .selectFrom('metadata_attributes')
      .select(['id', 'name'])
      .where('org_id', '=', orgId)
      .where('id', 'in', parentIds)
      .execute())
      parents.set(p.id, p.name);
  }
  for (const r of rows) {
    const vocabularyId = settingsOf(r as AttributeRow).vocabularyId;
    if (!vocabularyId || !wanted.has(vocabularyId)) continue;
    const entry = r.parent_id
      ? { id: r.parent_id, name: `${parents.get(r.parent_id) ?? '?'} › ${r.name}` }
      : { id: r.id, name: r.name };
    out.set(vocabularyId, [...(out.get(vocabularyId) ?? []), entry]);
  }
  return out;
}
