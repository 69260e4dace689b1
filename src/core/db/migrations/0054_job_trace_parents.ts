import type { Kysely } from 'kysely';

// Never edit after it lands: add a new migration instead.
//
// Issue 28, item 6 (optional OpenTelemetry traces): a job enqueued while a request is handled, with
// traces on, records the request span's W3C traceparent; the run of the job, in whatever process,
// is a span of that trace.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('jobs').addColumn('trace_parent', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('jobs').dropColumn('trace_parent').execute();
}
