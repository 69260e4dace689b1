import type { Kysely } from 'kysely';

// Never edit after it lands: add a new migration instead.
//
// Issue 29, part 4 (last step): what an organization does with downloads of an asset whose usage
// right has expired or not started yet (docs/usage-rights.md). No row: `allow`, the behaviour before.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('org_rights_settings')
    .addColumn('org_id', 'text', (c) => c.primaryKey())
    .addColumn('expired_downloads', 'text', (c) => c.notNull())
    .addColumn('updated_by', 'text')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only');
}
