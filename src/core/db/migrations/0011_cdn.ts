import type { Kysely } from 'kysely';

// Never edit after it lands: add a new migration instead.
export async function up(db: Kysely<any>): Promise<void> {
  // Pull zones. `id` is an integer, as the reference exposes it; names and hostnames are global,
  // because edges route requests by them across organizations.
  await db.schema
    .createTable('cdn_zones')
    .addColumn('id', 'bigint', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', 'text', (c) => c.notNull().unique())
    .addColumn('region', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('settings', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('cdn_zones_org_idx').on('cdn_zones').columns(['org_id', 'id']).execute();
  await db.schema.createIndex('cdn_zones_updated_idx').on('cdn_zones').columns(['updated_at']).execute();

  await db.schema
    .createTable('cdn_zone_hostnames')
    .addColumn('hostname', 'text', (c) => c.primaryKey())
    .addColumn('zone_id', 'bigint', (c) => c.notNull().references('cdn_zones.id').onDelete('cascade'))
    .addColumn('org_id', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('cdn_zone_hostnames_zone_idx').on('cdn_zone_hostnames').columns(['zone_id']).execute();

  await db.schema
    .createTable('cdn_published_assets')
    .addColumn('zone_id', 'bigint', (c) => c.notNull().references('cdn_zones.id').onDelete('cascade'))
    .addColumn('asset_id', 'text', (c) => c.notNull())
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('published_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('cdn_published_assets_pk', ['zone_id', 'asset_id'])
    .execute();

  // Purges, kept a day so an edge that missed the push applies them when it next syncs.
  await db.schema
    .createTable('cdn_purges')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('zone_id', 'bigint', (c) => c.notNull())
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('cdn_purges_created_idx').on('cdn_purges').columns(['created_at']).execute();

  // Live edge processes: where to push purges and configuration changes.
  await db.schema
    .createTable('cdn_edges')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('control_url', 'text', (c) => c.notNull())
    .addColumn('region', 'text', (c) => c.notNull())
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
    .execute();

  // Statistics, per zone and UTC hour; edges add their counters (upsert with increments).
  await db.schema
    .createTable('cdn_stats_hourly')
    .addColumn('zone_id', 'bigint', (c) => c.notNull().references('cdn_zones.id').onDelete('cascade'))
    .addColumn('hour', 'bigint', (c) => c.notNull())
    .addColumn('requests', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('bytes_served', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('bytes_origin', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('hits', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('misses', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('hit_bytes', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('origin_fetches', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('origin_ms', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('status_2xx', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('status_3xx', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('status_4xx', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('status_5xx', 'bigint', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('cdn_stats_hourly_pk', ['zone_id', 'hour'])
    .execute();
  await db.schema
    .createTable('cdn_stats_geo')
    .addColumn('zone_id', 'bigint', (c) => c.notNull().references('cdn_zones.id').onDelete('cascade'))
    .addColumn('hour', 'bigint', (c) => c.notNull())
    .addColumn('country', 'text', (c) => c.notNull())
    .addColumn('requests', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('bytes', 'bigint', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('cdn_stats_geo_pk', ['zone_id', 'hour', 'country'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only');
}
