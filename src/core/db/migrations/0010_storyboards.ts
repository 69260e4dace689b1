import type { Kysely } from 'kysely';

// Never edit after it lands: add a new migration instead.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('storyboards')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('title', 'text', (c) => c.notNull())
    // lower(title): the sort key for sortBy=title and the haystack of `search` (with description_key)
    .addColumn('title_key', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('description_key', 'text', (c) => c.notNull())
    .addColumn('locale', 'text', (c) => c.notNull())
    .addColumn('cover_asset_id', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    // 1 when at least one security template is applied (then only their View grants open it)
    .addColumn('secured', 'integer', (c) => c.notNull().defaultTo(0))
    // The ordered blocks, one JSON document: every edit rewrites it under a version check, so
    // reordering and editing are atomic on both engines without row locks.
    .addColumn('blocks', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('published_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('storyboards_org_updated_idx')
    .on('storyboards')
    .columns(['org_id', 'updated_at', 'id'])
    .execute();
  await db.schema
    .createIndex('storyboards_org_title_idx')
    .on('storyboards')
    .columns(['org_id', 'title_key', 'id'])
    .execute();

  await db.schema
    .createTable('storyboard_security_templates')
    .addColumn('storyboard_id', 'text', (c) => c.notNull().references('storyboards.id').onDelete('cascade'))
    .addColumn('template_id', 'text', (c) => c.notNull())
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('storyboard_security_templates_pk', ['storyboard_id', 'template_id'])
    .execute();
  await db.schema
    .createIndex('storyboard_security_templates_tpl_idx')
    .on('storyboard_security_templates')
    .columns(['template_id'])
    .execute();

  // Internal shares: a user or a group may view the story board.
  await db.schema
    .createTable('storyboard_shares')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('storyboard_id', 'text', (c) => c.notNull().references('storyboards.id').onDelete('cascade'))
    .addColumn('subject_type', 'text', (c) => c.notNull())
    .addColumn('subject_id', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('storyboard_shares_subject_unique', ['storyboard_id', 'subject_id'])
    .execute();
  await db.schema
    .createIndex('storyboard_shares_subject_idx')
    .on('storyboard_shares')
    .columns(['subject_id', 'storyboard_id'])
    .execute();

  // External share links: only a keyed hash of the token is kept.
  await db.schema
    .createTable('storyboard_links')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('storyboard_id', 'text', (c) => c.notNull().references('storyboards.id').onDelete('cascade'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('token_hint', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text')
    .addColumn('expires_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_opened_at', 'bigint')
    .addColumn('open_count', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createIndex('storyboard_links_board_idx')
    .on('storyboard_links')
    .columns(['storyboard_id', 'created_at'])
    .execute();

  // Adaptive templates: an SVG or HTML asset registered as a template with named fields.
  await db.schema
    .createTable('adaptive_templates')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('asset_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('fields', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('adaptive_templates_asset_unique', ['org_id', 'asset_id'])
    .execute();
  await db.schema
    .createIndex('adaptive_templates_org_name_idx')
    .on('adaptive_templates')
    .columns(['org_id', 'name_key', 'id'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only');
}
