import { PostgresAdapter, sql, type Kysely } from 'kysely';

// Never edit after it lands: add a new migration instead.
//
// PostgreSQL: `webhook_messages` and `webhook_attempts` no longer carry a foreign key to
// `webhook_endpoints`. A foreign key is checked row by row (a query and a row lock on the endpoint
// for every inserted message and attempt, about an eighth of the database's work per delivery).
// The same guarantees are now kept once per batch: the delivery worker takes `for key share` on the
// endpoints it writes for (fan-out, attempt recording), so an endpoint cannot be deleted under a
// batch, and deleting an endpoint removes its messages and attempts in the same transaction, after
// the endpoint row (webhooks.service.ts, deleteEndpoint). SQLite keeps its foreign keys: it checks
// them with an index probe inside the writer, and dropping one would mean rebuilding the tables.

export async function up(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`alter table webhook_messages drop constraint if exists webhook_messages_endpoint_id_fkey`.execute(db);
  await sql`alter table webhook_attempts drop constraint if exists webhook_attempts_endpoint_id_fkey`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('irreversible');
}
