import type { Kysely } from 'kysely';

// Never edit after it lands: add a new migration instead.
// Metadata definitions (vocabularies, attributes, groups, templates), the log of definition
// changes that POST /v1/metadata/apply brings assets in line with, and the generic actions table.
export async function up(db: Kysely<any>): Promise<void> {
  const org = (c: any) => c.notNull().references('organizations.id').onDelete('cascade');

  await db.schema
    .createTable('metadata_vocabularies')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', org)
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', 'text', (c) => c.notNull())
    .addColumn('search_field', 'text', (c) => c.notNull())
    .addColumn('searchable', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('system', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('metadata_vocabularies_org_name_unique', ['org_id', 'name_key'])
    .addUniqueConstraint('metadata_vocabularies_org_sf_unique', ['org_id', 'search_field'])
    .execute();

  await db.schema
    .createTable('metadata_vocabulary_values')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('vocabulary_id', 'text', (c) => c.notNull().references('metadata_vocabularies.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', 'text', (c) => c.notNull())
    // Cascading vocabularies: the value of the previous level this value belongs under.
    .addColumn('parent_id', 'text')
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('metadata_vocabulary_values_vocab_idx')
    .on('metadata_vocabulary_values')
    .columns(['vocabulary_id', 'position'])
    .execute();

  await db.schema
    .createTable('metadata_attributes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', org)
    // Set on the levels of a cascading attribute: the cascade that owns them.
    .addColumn('parent_id', 'text', (c) => c.references('metadata_attributes.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', 'text', (c) => c.notNull())
    .addColumn('search_field', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('sub_type', 'text', (c) => c.notNull())
    .addColumn('settings', 'text', (c) => c.notNull())
    .addColumn('required', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('readonly', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('visible', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('facetable', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('sortable', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('restricted', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('system', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('position', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('metadata_attributes_org_sf_unique', ['org_id', 'search_field'])
    .execute();
  await db.schema
    .createIndex('metadata_attributes_org_idx')
    .on('metadata_attributes')
    .columns(['org_id', 'name_key'])
    .execute();
  await db.schema.createIndex('metadata_attributes_parent_idx').on('metadata_attributes').column('parent_id').execute();

  await db.schema
    .createTable('metadata_groups')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', org)
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', 'text', (c) => c.notNull())
    .addColumn('search_field', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('name_visible', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('system', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_by', 'text')
    .addColumn('updated_by', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('metadata_groups_org_name_unique', ['org_id', 'name_key'])
    .addUniqueConstraint('metadata_groups_org_sf_unique', ['org_id', 'search_field'])
    .execute();

  await db.schema
    .createTable('metadata_group_attributes')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('group_id', 'text', (c) => c.notNull().references('metadata_groups.id').onDelete('cascade'))
    .addColumn('attribute_id', 'text', (c) => c.notNull().references('metadata_attributes.id'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('metadata_group_attributes_pk', ['group_id', 'attribute_id'])
    .execute();
  await db.schema
    .createIndex('metadata_group_attributes_attr_idx')
    .on('metadata_group_attributes')
    .column('attribute_id')
    .execute();

  await db.schema
    .createTable('metadata_templates')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', org)
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', 'text', (c) => c.notNull())
    .addColumn('template_types', 'text', (c) => c.notNull())
    .addColumn('default_values', 'text', (c) => c.notNull())
    .addColumn('template_override', 'text')
    .addColumn('is_default', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_by', 'text')
    .addColumn('updated_by', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('metadata_templates_org_name_unique', ['org_id', 'name_key'])
    .execute();

  await db.schema
    .createTable('metadata_template_groups')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('template_id', 'text', (c) => c.notNull().references('metadata_templates.id').onDelete('cascade'))
    .addColumn('group_id', 'text', (c) => c.notNull().references('metadata_groups.id'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('metadata_template_groups_pk', ['template_id', 'group_id'])
    .execute();
  await db.schema
    .createIndex('metadata_template_groups_group_idx')
    .on('metadata_template_groups')
    .column('group_id')
    .execute();

  // No foreign key to security_templates: deleting a security template must not fail, and a
  // missing access template grants nothing (it never widens who may use the metadata template).
  await db.schema
    .createTable('metadata_template_access')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('template_id', 'text', (c) => c.notNull().references('metadata_templates.id').onDelete('cascade'))
    .addColumn('security_template_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('metadata_template_access_pk', ['template_id', 'security_template_id'])
    .execute();

  await db.schema
    .createTable('metadata_changes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', org)
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('subject_type', 'text', (c) => c.notNull())
    .addColumn('subject_id', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('applied_at', 'bigint')
    .addColumn('action_id', 'text')
    .execute();
  await db.schema
    .createIndex('metadata_changes_pending_idx')
    .on('metadata_changes')
    .columns(['org_id', 'applied_at', 'id'])
    .execute();

  // Actions: the user-visible face of long-running jobs (GET /v1/action/{id}).
  await db.schema
    .createTable('actions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', org)
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('progress', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('total', 'integer')
    .addColumn('processed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_by', 'text')
    // Besides its creator, who may see the action: holders of this privilege (null: nobody else).
    .addColumn('view_privilege', 'text')
    .addColumn('job_id', 'text')
    .addColumn('input', 'text', (c) => c.notNull())
    .addColumn('result', 'text')
    .addColumn('errors', 'text', (c) => c.notNull())
    .addColumn('cancel_requested', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('started_at', 'bigint')
    .addColumn('finished_at', 'bigint')
    .execute();
  await db.schema.createIndex('actions_org_idx').on('actions').columns(['org_id', 'created_at']).execute();
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only');
}
