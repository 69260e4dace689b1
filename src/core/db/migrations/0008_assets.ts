import type { Kysely } from 'kysely';

/**
 * Assets (one row per version), their security templates, relationships and uploads in flight; plus security-template grants normalised to one row per template, group and
 * permission, so "which assets may this caller view" is an indexed join on both engines.
 * Never edit after it lands: add a new migration instead.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('security_template_permissions')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('template_id', 'text', (c) => c.notNull().references('security_templates.id').onDelete('cascade'))
    .addColumn('group_id', 'text', (c) => c.notNull().references('groups.id').onDelete('cascade'))
    .addColumn('permission', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('security_template_permissions_pk', ['template_id', 'group_id', 'permission'])
    .execute();
  await db.schema
    .createIndex('security_template_permissions_group_idx')
    .on('security_template_permissions')
    .columns(['group_id', 'permission', 'template_id'])
    .execute();

  // Backfill from the JSON grants (permission ids → permission keys).
  const ids: Record<string, string> = {
    '6c1f0c1e-5b1a-4e1a-9a51-000000000001': 'view',
    '6c1f0c1e-5b1a-4e1a-9a51-000000000002': 'download',
    '6c1f0c1e-5b1a-4e1a-9a51-000000000003': 'edit_metadata',
    '6c1f0c1e-5b1a-4e1a-9a51-000000000004': 'delete',
    '6c1f0c1e-5b1a-4e1a-9a51-000000000005': 'relationship',
    '6c1f0c1e-5b1a-4e1a-9a51-000000000006': 'share',
    '6c1f0c1e-5b1a-4e1a-9a51-000000000007': 'apply_security_template',
  };
  const grants = await db
    .selectFrom('security_template_grants')
    .select(['org_id', 'template_id', 'group_id', 'permissions'])
    .execute();
  const rows: { org_id: string; template_id: string; group_id: string; permission: string }[] = [];
  for (const g of grants as { org_id: string; template_id: string; group_id: string; permissions: string }[]) {
    const list = JSON.parse(g.permissions) as string[];
    for (const key of new Set(list.map((id) => ids[id.toLowerCase()]).filter((k): k is string => Boolean(k)))) {
      rows.push({ org_id: g.org_id, template_id: g.template_id, group_id: g.group_id, permission: key });
    }
  }
  for (let i = 0; i < rows.length; i += 500)
    await db
      .insertInto('security_template_permissions')
      .values(rows.slice(i, i + 500))
      .execute();

  await db.schema
    .createTable('assets')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('file_id', 'text', (c) => c.notNull().unique())
    .addColumn('original_file_id', 'text', (c) => c.notNull())
    .addColumn('version_number', 'integer', (c) => c.notNull())
    .addColumn('is_current', 'integer', (c) => c.notNull())
    .addColumn('object_type', 'text', (c) => c.notNull())
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('content_type', 'text')
    .addColumn('content_state', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint')
    .addColumn('sha256', 'text')
    .addColumn('md5', 'text')
    .addColumn('blob_key', 'text')
    .addColumn('federated', 'integer', (c) => c.notNull())
    .addColumn('content_path', 'text')
    .addColumn('skip_transcode', 'integer', (c) => c.notNull())
    .addColumn('metadata_template_id', 'text')
    .addColumn('metadata', 'text', (c) => c.notNull())
    .addColumn('metadata_denormalized', 'text', (c) => c.notNull())
    .addColumn('technical_metadata', 'text', (c) => c.notNull())
    .addColumn('renditions', 'text', (c) => c.notNull())
    .addColumn('renditions_state', 'text', (c) => c.notNull())
    .addColumn('width', 'integer')
    .addColumn('height', 'integer')
    .addColumn('deleted_at', 'bigint')
    .addColumn('created_event_sent', 'integer', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('updated_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('assets_chain_idx')
    .on('assets')
    .columns(['original_file_id', 'version_number'])
    .unique()
    .execute();
  await db.schema.createIndex('assets_org_created_idx').on('assets').columns(['org_id', 'created_at']).execute();
  await db.schema.createIndex('assets_org_sha_idx').on('assets').columns(['org_id', 'sha256']).execute();

  await db.schema
    .createTable('asset_security')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('asset_id', 'text', (c) => c.notNull().references('assets.id').onDelete('cascade'))
    .addColumn('template_id', 'text', (c) => c.notNull().references('security_templates.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('asset_security_pk', ['asset_id', 'template_id'])
    .execute();
  await db.schema
    .createIndex('asset_security_template_idx')
    .on('asset_security')
    .columns(['template_id', 'asset_id'])
    .execute();

  await db.schema
    .createTable('asset_links')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('primary_id', 'text', (c) => c.notNull().references('assets.id').onDelete('cascade'))
    .addColumn('secondary_id', 'text', (c) => c.notNull().references('assets.id').onDelete('cascade'))
    .addColumn('link_type', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('asset_links_pk', ['primary_id', 'secondary_id'])
    .execute();
  await db.schema
    .createIndex('asset_links_secondary_idx')
    .on('asset_links')
    .columns(['secondary_id', 'primary_id'])
    .execute();

  await db.schema
    .createTable('asset_uploads')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('asset_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('staging_key', 'text', (c) => c.notNull())
    .addColumn('s3_upload_id', 'text')
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('expected_size', 'bigint')
    .addColumn('expected_sha256', 'text')
    .addColumn('content_type', 'text')
    .addColumn('part_size', 'bigint')
    .addColumn('part_count', 'integer')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('asset_uploads_asset_idx').on('asset_uploads').columns(['asset_id']).execute();
  await db.schema
    .createIndex('asset_uploads_expiry_idx')
    .on('asset_uploads')
    .columns(['status', 'expires_at'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only');
}
