import type { Selectable } from 'kysely';
import type { DbOrTrx, Trx } from '../../../core/db/connect.ts';
import { fromJson } from '../../../core/db/json.ts';
import type { MetadataAttributesTable } from '../../../core/db/schema.ts';
import {
  buildVocabulary,
  compileTemplate,
  type AttributeDef,
  type AttributeType,
  type CompiledTemplate,
  type DateFormat,
  type VocabularyDef,
} from '../validation/model.ts';

export type AttributeRow = Selectable<MetadataAttributesTable>;

export interface AttributeSettings {
  length?: number;
  multiLine?: boolean;
  dateFormat?: DateFormat;
  vocabularyId?: string;
  multiple?: boolean;
  singleRow?: boolean;
  columnIds?: string[];
  /** text and date: embedded fields read at upload (see attributes/embedded-fields.ts), in priority order */
  embeddedFields?: string[];
}

export function settingsOf(row: AttributeRow): AttributeSettings {
  return fromJson<AttributeSettings>(row.settings, {});
}

/** Rows → definitions with their table columns and cascade levels resolved. */
export function buildDefs(rows: AttributeRow[]): Map<string, AttributeDef> {
  const levelsOf = new Map<string, AttributeRow[]>();
  for (const row of rows) if (row.parent_id) levelsOf.set(row.parent_id, [...(levelsOf.get(row.parent_id) ?? []), row]);
  const flat = (row: AttributeRow): AttributeDef => {
    const s = settingsOf(row);
    const def: AttributeDef = {
      id: row.id,
      name: row.name,
      searchField: row.search_field,
      type: row.type as AttributeType,
      subType: row.sub_type,
      system: row.system === 1,
      required: row.required === 1,
      readonly: row.readonly === 1,
      visible: row.visible === 1,
      facetable: row.facetable === 1,
      sortable: row.sortable === 1,
      restricted: row.restricted === 1,
    };
    if (s.length !== undefined) def.length = s.length;
    if (s.multiLine !== undefined) def.multiLine = s.multiLine;
    if (s.dateFormat !== undefined) def.dateFormat = s.dateFormat;
    if (s.vocabularyId !== undefined) def.vocabularyId = s.vocabularyId;
    if (s.multiple !== undefined) def.multiple = s.multiple;
    if (s.singleRow !== undefined) def.singleRow = s.singleRow;
    if (s.embeddedFields?.length) def.embeddedFields = s.embeddedFields;
    if (row.type === 'cascade')
      def.levels = (levelsOf.get(row.id) ?? []).sort((a, b) => a.position - b.position).map(flat);
    return def;
  };
  const defs = new Map<string, AttributeDef>();
  for (const row of rows) if (!row.parent_id) defs.set(row.id, flat(row));
  for (const row of rows) {
    if (row.type !== 'table') continue;
    const def = defs.get(row.id)!;
    def.columns = (settingsOf(row).columnIds ?? [])
      .map((id) => defs.get(id))
      .filter((d): d is AttributeDef => Boolean(d));
  }
  return defs;
}

/** Attributes by id, with the columns of tables among them and the levels of cascades. */
export async function loadAttributeDefs(
  db: DbOrTrx,
  orgId: string,
  ids: readonly string[],
): Promise<Map<string, AttributeDef>> {
  if (ids.length === 0) return new Map();
  let rows = await db
    .selectFrom('metadata_attributes')
    .selectAll()
    .where('org_id', '=', orgId)
    .where((eb) => eb.or([eb('id', 'in', [...ids]), eb('parent_id', 'in', [...ids])]))
    .execute();
  const have = new Set(rows.map((r) => r.id));
  const columnIds = rows
    .filter((r) => r.type === 'table')
    .flatMap((r) => settingsOf(r).columnIds ?? [])
    .filter((id) => !have.has(id));
  if (columnIds.length > 0) {
    const more = await db
      .selectFrom('metadata_attributes')
      .selectAll()
      .where('org_id', '=', orgId)
      .where((eb) => eb.or([eb('id', 'in', columnIds), eb('parent_id', 'in', columnIds)]))
      .execute();
    rows = [...rows, ...more.filter((r) => !have.has(r.id))];
  }
  return buildDefs(rows);
}

export function vocabularyIdsOf(defs: Iterable<AttributeDef>): string[] {
  const ids = new Set<string>();
  const walk = (d: AttributeDef) => {
    if (d.vocabularyId) ids.add(d.vocabularyId);
    d.levels?.forEach(walk);
    d.columns?.forEach(walk);
  };
  for (const d of defs) walk(d);
  return [...ids];
}

export async function loadVocabularyDefs(db: DbOrTrx, orgId: string, ids: readonly string[]): Promise<VocabularyDef[]> {
  if (ids.length === 0) return [];
  const vocabs = await db
    .selectFrom('metadata_vocabularies')
    .select(['id', 'name'])
    .where('org_id', '=', orgId)
    .where('id', 'in', [...ids])
    .execute();
  const values = await db
    .selectFrom('metadata_vocabulary_values')
    .select(['id', 'name', 'parent_id', 'vocabulary_id', 'position'])
    .where('org_id', '=', orgId)
    .where('vocabulary_id', 'in', [...ids])
    .orderBy('vocabulary_id')
    .orderBy('position')
    .execute();
  return vocabs.map((v) =>
    buildVocabulary(
      v.id,
      v.name,
      values.filter((x) => x.vocabulary_id === v.id).map((x) => ({ id: x.id, name: x.name, parentId: x.parent_id })),
    ),
  );
}

/** Group ids of a template in their order, the system group last (reference §10.7). */
export async function templateGroupIds(db: DbOrTrx, orgId: string, templateId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('metadata_template_groups')
    .innerJoin('metadata_groups', 'metadata_groups.id', 'metadata_template_groups.group_id')
    .select(['metadata_template_groups.group_id', 'metadata_template_groups.position', 'metadata_groups.system'])
    .where('metadata_template_groups.org_id', '=', orgId)
    .where('metadata_template_groups.template_id', '=', templateId)
    .execute();
  return rows.sort((a, b) => a.system - b.system || a.position - b.position).map((r) => r.group_id);
}

/** Attribute ids of groups, in group order then field order (duplicates kept, for the caller to judge). */
export async function groupAttributeIds(
  db: DbOrTrx,
  orgId: string,
  groupIds: readonly string[],
): Promise<{ groupId: string; attributeId: string }[]> {
  if (groupIds.length === 0) return [];
  const rows = await db
    .selectFrom('metadata_group_attributes')
    .select(['group_id', 'attribute_id', 'position'])
    .where('org_id', '=', orgId)
    .where('group_id', 'in', [...groupIds])
    .execute();
  const order = new Map(groupIds.map((g, i) => [g, i]));
  return rows
    .sort((a, b) => order.get(a.group_id)! - order.get(b.group_id)! || a.position - b.position)
    .map((r) => ({ groupId: r.group_id, attributeId: r.attribute_id }));
}

/** A template compiled for validation, or undefined when the organization has no such template. */
export async function loadCompiledTemplate(
  db: DbOrTrx,
  orgId: string,
  templateId: string,
): Promise<CompiledTemplate | undefined> {
  const template = await db
    .selectFrom('metadata_templates')
    .select(['id', 'name', 'default_values'])
    .where('org_id', '=', orgId)
    .where('id', '=', templateId)
    .executeTakeFirst();
  if (!template) return undefined;
  const groups = await templateGroupIds(db, orgId, templateId);
  const links = await groupAttributeIds(db, orgId, groups);
  const ids = [...new Set(links.map((l) => l.attributeId))];
  const defs = await loadAttributeDefs(db, orgId, ids);
  const vocabularies = await loadVocabularyDefs(db, orgId, vocabularyIdsOf(defs.values()));
  return compileTemplate({
    id: template.id,
    name: template.name,
    attributes: ids.map((id) => defs.get(id)).filter((d): d is AttributeDef => Boolean(d)),
    vocabularies,
    defaults: fromJson<{ searchField: string; value: unknown }[]>(template.default_values, []),
  });
}

/**
 * PostgreSQL: share-locks the template's row until the caller's transaction ends, so that a delete
 * running at the same time waits and then finds the template in use. False when it does not exist.
 */
export async function lockTemplateAgainstDelete(trx: Trx, orgId: string, templateId: string): Promise<boolean> {
  return (
    (await trx
      .selectFrom('metadata_templates')
      .select('id')
      .where('org_id', '=', orgId)
      .where('id', '=', templateId)
      .forShare()
      .executeTakeFirst()) !== undefined
  );
}
