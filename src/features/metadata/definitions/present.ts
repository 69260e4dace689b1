import type { Selectable } from 'kysely';
import type { MetadataGroupsTable } from '../../../core/db/schema.ts';
import { settingsOf, type AttributeRow } from './definitions.repo.ts';
import type { AttributeOut } from '../metadata.schemas.ts';

const iso = (ms: number) => new Date(ms).toISOString();
export { iso };

function levelOut(row: AttributeRow, order: number) {
  const s = settingsOf(row);
  return {
    id: row.id,
    name: row.name,
    type: 'controlledVocabulary' as const,
    controlledVocabularyId: s.vocabularyId ?? '',
    cascadeOrder: order,
    isMultipleSelect: s.multiple ?? false,
    searchField: row.search_field,
    required: row.required === 1,
    readonly: row.readonly === 1,
    visible: row.visible === 1,
  };
}

/**
 * The reference's attribute descriptor (§10.2). `rows` must hold the attribute's cascade levels and
 * table columns (and theirs), as loaded by attributeFamily.
 */
export function attributeOut(
  row: AttributeRow,
  rows: ReadonlyMap<string, AttributeRow>,
  fieldOrder?: number,
): AttributeOut {
  const s = settingsOf(row);
  const levels = [...rows.values()].filter((r) => r.parent_id === row.id).sort((a, b) => a.position - b.position);
  const out: AttributeOut = {
    id: row.id,
    name: row.name,
    type: row.type,
    subType: row.sub_type,
    searchField: row.search_field,
    isMultipleSelect: s.multiple ?? false,
    controlledVocabularyId: s.vocabularyId ?? null,
    dateFormat: row.type === 'date' ? (s.dateFormat ?? 'MM/dd/yyyy') : 'N/A',
    length: row.type === 'text' ? (s.length ?? null) : null,
    isMultiLine: s.multiLine ?? false,
    ...(row.type === 'text' || row.type === 'date' ? { embeddedFields: s.embeddedFields ?? [] } : {}),
    required: row.required === 1,
    readonly: row.readonly === 1,
    visible: row.visible === 1,
    facetable: row.facetable === 1,
    sortable: row.sortable === 1,
    isRestricted: row.restricted === 1,
    system: row.system === 1,
    createdEpoch: row.created_at,
    lastUpdatedEpoch: row.updated_at,
    createdDate: iso(row.created_at),
    lastUpdatedDate: iso(row.updated_at),
  };
  if (fieldOrder !== undefined) out.fieldOrder = fieldOrder;
  if (row.type === 'cascade') out.cascadeFieldsDenormalized = levels.map((l, i) => levelOut(l, i));
  if (row.type === 'table') {
    out.isSingleRow = s.singleRow ?? false;
    out.tableFieldsDenormalized = (s.columnIds ?? []).flatMap((id, i) => {
      const column = rows.get(id);
      if (!column) return [];
      const { tableFieldsDenormalized: _t, isSingleRow: _s, ...rest } = attributeOut(column, rows, i);
      return [rest];
    });
  }
  return out;
}

export function groupRowOut(row: Selectable<MetadataGroupsTable>) {
  return {
    id: row.id,
    name: row.name,
    searchField: row.search_field,
    description: row.description,
    isGroupNameVisible: row.name_visible === 1,
    system: row.system === 1,
    createdBy: row.created_by,
    lastUpdatedBy: row.updated_by,
    createdEpoch: row.created_at,
    createdDate: iso(row.created_at),
    lastUpdatedEpoch: row.updated_at,
    lastUpdatedDate: iso(row.updated_at),
  };
}
