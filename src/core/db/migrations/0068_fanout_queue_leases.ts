import { sql, type Kysely } from 'kysely';

// Never edit after it lands: add a new migration instead.
//
// Issue 30 item 2 (decisions 0032, 0035): a webhook message is written once, at its first outcome. The
// fan-out leases its queue rows instead of deleting them, holds the messages in memory while they are
// sent, and the outcome commit inserts each message in its final state and deletes the queue rows whose
// messages are all recorded. A lease that runs out (a crashed holder) is fanned out again. Neither
// column is indexed: on PostgreSQL taking and renewing a lease is a HOT update.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table event_fanout_queue add column locked_by text`.execute(db);
  await sql`alter table event_fanout_queue add column locked_until bigint`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only');
}
