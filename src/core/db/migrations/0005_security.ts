import type { Kysely } from 'kysely';

// Never edit after it lands: add a new migration instead.
export async function up(db: Kysely<any>): Promise<void> {
  // Every audit row written while an administrator impersonates someone names the administrator.
  await db.schema.alterTable('audit_log').addColumn('impersonator_id', 'text').execute();
  // Login attempts are reserved atomically before hashing (features/auth/throttle/login-throttle.ts).
  await db.schema.alterTable('auth_login_failures').addColumn('reservation', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('auth_login_failures').dropColumn('reservation').execute();
  await db.schema.alterTable('audit_log').dropColumn('impersonator_id').execute();
}
