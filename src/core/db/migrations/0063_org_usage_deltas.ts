import type { Kysely } from 'kysely';

// Never edit after it lands: add a new migration instead.
//
// Issue 28, "Benchmarks" (decision 0021): what an organization holds was one `org_usage` row updated
// inside every create, upload and purge transaction, so on PostgreSQL every upload of an
// organization waited for the previous one's commit (waits of up to 670 ms under the scale-out
// load). A change that no quota limits now appends its delta here instead (an insert, no shared
// row); the deltas are folded into org_usage in short transactions of their own
// (features/quotas/holdings.ts). No foreign key: a key check would share-lock the organization row
// from every upload (multixact churn); deltas of a deleted organization are dropped by the fold.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('org_usage_deltas')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('storage_bytes', 'bigint', (c) => c.notNull())
    .addColumn('assets', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('org_usage_deltas_org_idx').on('org_usage_deltas').column('org_id').execute();
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only');
}
