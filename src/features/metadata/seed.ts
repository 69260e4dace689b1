import type { DbOrTrx } from '../../core/db/connect.ts';
import { toJson } from '../../core/db/json.ts';
import type { MetadataAttributesTable } from '../../core/db/schema.ts';
import { newId } from '../../core/ids.ts';
import type { AttributeSettings } from './definitions/definitions.repo.ts';

export const SYSTEM_GROUP_SEARCH_FIELD = 'system';
export const DEFAULT_TEMPLATE_NAME = 'Default';

interface SeedAttribute {
  name: string;
  searchField: string;
  type: 'text' | 'date' | 'controlledVocabulary';
  settings: AttributeSettings;
  readonly?: boolean;
  facetable?: boolean;
  sortable?: boolean;
}

const USAGE_RIGHTS = ['Royalty Free', 'Rights Managed', 'Editorial Use Only', 'Internal Use Only', 'Creative Commons'];

/** The system group: what a DAM user expects on every asset; the last three are set by the system. */
const SYSTEM_ATTRIBUTES: SeedAttribute[] = [
  {
    name: 'Title',
    searchField: 'title',
    type: 'text',
    settings: {
      length: 256,
      multiLine: false,
      embeddedFields: ['XMP-dc:Title', 'IPTC:ObjectName', 'XMP-photoshop:Headline', 'IPTC:Headline'],
    },
    sortable: true,
  },
  {
    name: 'Description',
    searchField: 'description',
    type: 'text',
    settings: {
      length: 4000,
      multiLine: true,
      embeddedFields: ['XMP-dc:Description', 'IPTC:Caption-Abstract', 'EXIF:ImageDescription'],
    },
  },
  {
    name: 'Keywords',
    searchField: 'keywords',
    type: 'text',
    settings: { length: 1024, multiLine: false, multiple: true, embeddedFields: ['XMP-dc:Subject', 'IPTC:Keywords'] },
    facetable: true,
  },
  {
    name: 'Copyright',
    searchField: 'copyright',
    type: 'text',
    settings: {
      length: 512,
      multiLine: false,
      embeddedFields: ['XMP-dc:Rights', 'IPTC:CopyrightNotice', 'EXIF:Copyright'],
    },
  },
  {
    name: 'Creator',
    searchField: 'creator',
    type: 'text',
    settings: { length: 256, multiLine: false, embeddedFields: ['XMP-dc:Creator', 'IPTC:By-line', 'EXIF:Artist'] },
    facetable: true,
    sortable: true,
  },
  {
    name: 'Credit Line',
    searchField: 'credit_line',
    type: 'text',
    settings: { length: 256, multiLine: false, embeddedFields: ['XMP-photoshop:Credit', 'IPTC:Credit'] },
  },
  {
    name: 'Usage Rights',
    searchField: 'usage_rights',
    type: 'controlledVocabulary',
    settings: { multiple: false },
    facetable: true,
  },
  {
    name: 'Expiration Date',
    searchField: 'expiration_date',
    type: 'date',
    settings: { dateFormat: 'MM/dd/yyyy' },
    sortable: true,
  },
  {
    name: 'File Name',
    searchField: 'system_filename',
    type: 'text',
    settings: { length: 1024, multiLine: false },
    readonly: true,
    sortable: true,
  },
  {
    name: 'File Size',
    searchField: 'system_file_size',
    type: 'text',
    settings: { length: 32, multiLine: false },
    readonly: true,
    sortable: true,
  },
  {
    name: 'File Type',
    searchField: 'system_file_type',
    type: 'text',
    settings: { length: 128, multiLine: false },
    readonly: true,
    facetable: true,
  },
];

/**
 * Usage rights (issue 29, docs/usage-rights.md): with Usage Rights (the license) and Expiration
 * Date (when the right ends) above, the rest of an asset's rights. System attributes, so every
 * template has them; appended to organizations seeded before them (addMissingSystemAttributes).
 */
export const RIGHTS_ATTRIBUTES: SeedAttribute[] = [
  {
    name: 'Usage Terms',
    searchField: 'usage_terms',
    type: 'text',
    settings: {
      length: 4000,
      multiLine: true,
      embeddedFields: ['XMP-xmpRights:UsageTerms'],
    },
  },
  {
    name: 'Rights Territories',
    searchField: 'rights_territories',
    type: 'text',
    settings: { length: 128, multiLine: false, multiple: true },
    facetable: true,
  },
  {
    name: 'Rights Channels',
    searchField: 'rights_channels',
    type: 'text',
    settings: { length: 128, multiLine: false, multiple: true },
    facetable: true,
  },
  {
    name: 'Rights Start Date',
    searchField: 'rights_start_date',
    type: 'date',
    settings: { dateFormat: 'MM/dd/yyyy' },
    sortable: true,
  },
];

export interface SeededMetadata {
  systemGroupId: string;
  defaultTemplateId: string;
  usageRightsVocabularyId: string;
}

/**
 * A usable start for a new organization: the system metadata group (title, description, keywords,
 * copyright, creator, credit line, usage rights, expiration date, and the read-only file name,
 * size and type), and a Default metadata template using it. Call in the organization's transaction.
 */
export async function seedOrganizationMetadata(db: DbOrTrx, now: number, orgId: string): Promise<SeededMetadata> {
  const vocabularyId = newId(now);
  await db
    .insertInto('metadata_vocabularies')
    .values({
      id: vocabularyId,
      org_id: orgId,
      name: 'Usage Rights',
      name_key: 'usage rights',
      search_field: 'usage_rights',
      searchable: 1,
      system: 1,
      created_by: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  await db
    .insertInto('metadata_vocabulary_values')
    .values(
      USAGE_RIGHTS.map((name, position) => ({
        id: newId(now),
        org_id: orgId,
        vocabulary_id: vocabularyId,
        name,
        name_key: name.toLowerCase(),
        parent_id: null,
        position,
        created_at: now,
        updated_at: now,
      })),
    )
    .execute();

  const attributes: MetadataAttributesTable[] = [...SYSTEM_ATTRIBUTES, ...RIGHTS_ATTRIBUTES].map((a, position) =>
    attributeRow(a, position, orgId, now, vocabularyId),
  );
  await db.insertInto('metadata_attributes').values(attributes).execute();
  return seedGroupAndTemplate(db, now, orgId, attributes, vocabularyId);
}

function attributeRow(
  a: SeedAttribute,
  position: number,
  orgId: string,
  now: number,
  vocabularyId: string | null,
): MetadataAttributesTable {
  return {
    id: newId(now),
    org_id: orgId,
    parent_id: null,
    name: a.name,
    name_key: a.name.toLowerCase(),
    search_field: a.searchField,
    type: a.type,
    sub_type:
      a.type === 'text'
        ? a.settings.multiLine
          ? 'textArea'
          : 'textBox'
        : a.type === 'date'
          ? 'datePicker'
          : 'dropdown',
    settings: toJson(a.type === 'controlledVocabulary' ? { ...a.settings, vocabularyId } : a.settings),
    required: 0,
    readonly: a.readonly ? 1 : 0,
    visible: 1,
    facetable: a.facetable ? 1 : 0,
    sortable: a.sortable ? 1 : 0,
    restricted: 0,
    system: 1,
    position,
    created_by: null,
    created_at: now,
    updated_at: now,
  };
}

async function seedGroupAndTemplate(
  db: DbOrTrx,
  now: number,
  orgId: string,
  attributes: MetadataAttributesTable[],
  vocabularyId: string,
): Promise<SeededMetadata> {
  const systemGroupId = newId(now);
  await db
    .insertInto('metadata_groups')
    .values({
      id: systemGroupId,
      org_id: orgId,
      name: 'System',
      name_key: 'system',
      search_field: SYSTEM_GROUP_SEARCH_FIELD,
      description: 'Attributes every asset has',
      name_visible: 1,
      system: 1,
      created_by: null,
      updated_by: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  await db
    .insertInto('metadata_group_attributes')
    .values(attributes.map((a, position) => ({ org_id: orgId, group_id: systemGroupId, attribute_id: a.id, position })))
    .execute();

  const defaultTemplateId = newId(now);
  await db
    .insertInto('metadata_templates')
    .values({
      id: defaultTemplateId,
      org_id: orgId,
      name: DEFAULT_TEMPLATE_NAME,
      name_key: DEFAULT_TEMPLATE_NAME.toLowerCase(),
      template_types: toJson(['default']),
      default_values: toJson([]),
      template_override: null,
      is_default: 1,
      created_by: null,
      updated_by: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  await db
    .insertInto('metadata_template_groups')
    .values({ org_id: orgId, template_id: defaultTemplateId, group_id: systemGroupId, position: 0 })
    .execute();
  return { systemGroupId, defaultTemplateId, usageRightsVocabularyId: vocabularyId };
}

/** Seeds each of `orgIds` (every organization, from identity) that has no system group yet (organizations made before this feature). */
export async function seedMissingOrganizations(db: DbOrTrx, now: number, orgIds: readonly string[]): Promise<number> {
  if (orgIds.length === 0) return 0;
  const seeded = new Set(
    (await db.selectFrom('metadata_groups').select('org_id').where('system', '=', 1).execute()).map((r) => r.org_id),
  );
  const missing = orgIds.filter((id) => !seeded.has(id));
  for (const orgId of missing) await seedOrganizationMetadata(db, now, orgId);
  for (const orgId of orgIds) if (seeded.has(orgId)) await addMissingSystemAttributes(db, now, orgId);
  return missing.length;
}

/**
 * Appends to an organization's system group the system attributes it lacks (the rights attributes,
 * for organizations seeded before them). An attribute whose name or search field the organization
 * already uses for one of its own is left out.
 */
export async function addMissingSystemAttributes(db: DbOrTrx, now: number, orgId: string): Promise<number> {
  const group = await db
    .selectFrom('metadata_groups')
    .select('id')
    .where('org_id', '=', orgId)
    .where('system', '=', 1)
    .executeTakeFirst();
  if (!group) return 0;
  const taken = await db
    .selectFrom('metadata_attributes')
    .select(['name_key', 'search_field'])
    .where('org_id', '=', orgId)
    .execute();
  const names = new Set(taken.map((t) => t.name_key));
  const fields = new Set(taken.map((t) => t.search_field));
  const add = RIGHTS_ATTRIBUTES.filter((a) => !names.has(a.name.toLowerCase()) && !fields.has(a.searchField));
  if (add.length === 0) return 0;
  const last = await db
    .selectFrom('metadata_group_attributes')
    .select((eb) => eb.fn.max('position').as('p'))
    .where('group_id', '=', group.id)
    .executeTakeFirst();
  const start = Number(last?.p ?? -1) + 1;
  const rows = add.map((a, i) => attributeRow(a, start + i, orgId, now, null));
  await db.insertInto('metadata_attributes').values(rows).execute();
  await db
    .insertInto('metadata_group_attributes')
    .values(rows.map((r, i) => ({ org_id: orgId, group_id: group.id, attribute_id: r.id, position: start + i })))
    .execute();
  return rows.length;
}
