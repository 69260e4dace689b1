import type { Kysely } from 'kysely';

// Never edit after it lands: add a new migration instead.
//
// Issue 27, item 1: invitations with a one-time set-password link (docs/identity.md). One row per
// user (a new invitation replaces the old); only the SHA-256 of the token is kept.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('user_invitations')
    .addColumn('user_id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only');
}
