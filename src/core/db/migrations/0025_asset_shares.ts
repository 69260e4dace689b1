import type { Kysely } from 'kysely';

// Never edit after it lands: add a new migration instead.
//
// Issue 23, defect 10. An asset share (POST /v1/asset/share) was only signed links, so nothing could
// revoke them. Each share is now a row its links name (signed); revoking sets revoked_at and every
// link of the share answers 410 at once.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('asset_shares')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text')
    .addColumn('asset_ids', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('asset_shares_org_idx').on('asset_shares').columns(['org_id', 'created_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('asset_shares').execute();
}
