import type { Kysely } from 'kysely';

// Never edit after it lands: add a new migration instead.
//
// Issue 28, item 3: an endpoint's `rateLimit` holds across processes. The messages of a rate-limited
// endpoint are delivered by one process at a time, the one holding this row's lease (renewed while it
// holds messages of the endpoint); its token bucket is then the endpoint's whole rate.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webhook_endpoint_owners')
    .addColumn('endpoint_id', 'text', (c) => c.primaryKey())
    .addColumn('worker_id', 'text', (c) => c.notNull())
    .addColumn('until', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webhook_endpoint_owners').execute();
}
