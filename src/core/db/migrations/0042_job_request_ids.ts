import type { Kysely } from 'kysely';

// Never edit after it lands: add a new migration instead.
//
// Issue 28, item 6: logs follow a request into the jobs it started. A job enqueued while a request
// is handled records that request's id (`X-Request-Id`); the worker that runs it, in whatever
// process, names it in its log lines.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('jobs').addColumn('request_id', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('jobs').dropColumn('request_id').execute();
}
