import type { Kysely } from 'kysely';

// Never edit after it lands: add a new migration instead.
//
// Issue 25, item 6. Delivery presets: named image renditions an administrator defines per
// organization (Web, Print, Social…): width, height, fit, format and quality, used by
// GET /v1/asset/{id}/delivery?preset=… (renditions made on request are cached in the blob store
// beside the asset's renditions, not here).

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('delivery_presets')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', 'text', (c) => c.notNull())
    .addColumn('width', 'integer')
    .addColumn('height', 'integer')
    .addColumn('fit', 'text', (c) => c.notNull())
    .addColumn('format', 'text', (c) => c.notNull())
    .addColumn('quality', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('delivery_presets_org_name_idx')
    .on('delivery_presets')
    .columns(['org_id', 'name_key'])
    .unique()
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only');
}
