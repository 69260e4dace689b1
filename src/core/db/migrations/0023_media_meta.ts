import type { Kysely } from 'kysely';

// Never edit after it lands: add a new migration instead.
//
// Issue 25 (media), items 1, 5 and 7. Upload options travel with the upload until its content
// arrives (whether embedded metadata may replace values already set, what to do with a duplicate).
// Every visual asset gets a placeholder (thumbhash, dominant colour) in its record, and a 64-bit
// perceptual hash (dHash, two 32-bit halves) in a table of its own for near-duplicate search:
// read per organization into memory, with the newest change (updated_at) telling a process when
// its copy is stale.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('asset_uploads').addColumn('options', 'text').execute();
  await db.schema.alterTable('assets').addColumn('placeholder', 'text').execute();
  await db.schema
    .createTable('asset_visual_hashes')
    .addColumn('asset_id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('hash_hi', 'bigint', (c) => c.notNull())
    .addColumn('hash_lo', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('asset_visual_hashes_org_idx')
    .on('asset_visual_hashes')
    .columns(['org_id', 'updated_at'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only');
}
