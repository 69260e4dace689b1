import { PostgresAdapter, sql, type Kysely } from 'kysely';

// Never edit after it lands: add a new migration instead.
//
// Less database work per webhook delivery (issue 14):
// - Events still waiting for their fan-out are listed in `event_fanout_queue`, which the fan-out
//   reads in order and deletes from, instead of flipping `events.fanned_out`. That update wrote a
//   whole new `events` row and an entry in each of its indexes (the flag was indexed, so it was
//   never a HOT update); an event row is now written once and never changed. A trigger fills the
//   queue, so every way of writing an event (publishEvent, publishEvents, anything later) queues it
//   in the same transaction, with no extra round trip.
// - `webhook_messages_due_idx` only holds messages still to deliver (pending, delivering): a
//   delivered message leaves it, so the index the claim walks stays small, and marking a message
//   succeeded writes one index entry less.
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  // The key is the fan-out order: it walks the primary key, with no sort and no second index.
  await sql`create table event_fanout_queue (created_at bigint not null, event_id text not null, primary key (created_at, event_id))`.execute(
    db,
  );
  await sql`insert into event_fanout_queue (created_at, event_id) select created_at, id from events where fanned_out = 0`.execute(
    db,
  );
  await db.schema.dropIndex('events_pending_idx').execute();
  await db.schema.alterTable('events').dropColumn('fanned_out').execute();
  if (postgres) {
    await sql`create function tessera_queue_fanout() returns trigger language plpgsql as $$
      begin
        insert into event_fanout_queue (created_at, event_id) values (new.created_at, new.id);
        return null;
      end $$`.execute(db);
    await sql`create trigger tessera_events_fanout after insert on events for each row execute function tessera_queue_fanout()`.execute(
      db,
    );
  } else {
    await sql`create trigger tessera_events_fanout after insert on events for each row
      begin insert into event_fanout_queue (created_at, event_id) values (new.created_at, new.id); end`.execute(db);
  }

  await db.schema.dropIndex('webhook_messages_due_idx').execute();
  await sql`create index webhook_messages_due_idx on webhook_messages (status, next_attempt_at) where status in ('pending', 'delivering')`.execute(
    db,
  );
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only');
}
