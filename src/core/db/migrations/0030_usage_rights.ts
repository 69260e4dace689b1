import type { Kysely } from 'kysely';

// Never edit after it lands: add a new migration instead.
//
// Issue 29, part 4: usage rights (docs/usage-rights.md). The rights themselves are system metadata
// attributes (seeded, and appended to existing organizations' system groups at start); this table
// records which expiries were announced (rm.agreement.expired), so each is announced exactly once
// across processes: the sweep inserts (asset, expiry date) in the event's transaction.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('asset_rights_expiries')
    .addColumn('asset_id', 'text', (c) => c.notNull())
    .addColumn('expiry_date', 'text', (c) => c.notNull())
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('announced_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('asset_rights_expiries_pk', ['asset_id', 'expiry_date'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only');
}
