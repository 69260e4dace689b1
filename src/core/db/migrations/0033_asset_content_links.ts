import type { Kysely } from 'kysely';

// Never edit after it lands: add a new migration instead.
//
// Issue 23 (review of defect 10). A download link (GET /v1/asset/{id}/content) and the URLs of
// POST /v1/asset/expose were only signed URLs, so nothing could end one before it expired. Each is
// now a row its URL names (signed); revoking it (DELETE /v1/asset/link/{linkId}) sets revoked_at and
// the URL answers 410 at once. Rows go with their asset (purge) and are pruned once expired.
//
// Also (review of defect 3): a webhook endpoint records who made it (created_by, its owner), so a
// payload carrying metadata values (collection.metadata.updated) leaves restricted (isRestricted)
// attributes out unless the owner holds Sensitive Data. Endpoints made before have no owner: they
// never receive restricted values.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('asset_content_links')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('asset_id', 'text', (c) => c.notNull().references('assets.id').onDelete('cascade'))
    .addColumn('component', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('asset_content_links_expiry_idx')
    .on('asset_content_links')
    .columns(['org_id', 'expires_at'])
    .execute();
  await db.schema
    .createIndex('asset_content_links_asset_idx')
    .on('asset_content_links')
    .columns(['asset_id'])
    .execute();
  await db.schema.alterTable('webhook_endpoints').addColumn('created_by', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('webhook_endpoints').dropColumn('created_by').execute();
  await db.schema.dropTable('asset_content_links').execute();
}
