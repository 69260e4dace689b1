import { PostgresAdapter, sql, type Kysely } from 'kysely';

// Never edit after it lands: add a new migration instead.
//
// Less database work per bulk-created asset (issue 30 item 5, decision 0037), every answer the same:
// - PostgreSQL: events are queued for their webhook fan-out by one statement-level trigger per
//   INSERT (its transition table holds the statement's new rows) instead of a row trigger that ran a
//   one-row INSERT per event; same transaction, same rows. SQLite has no statement triggers: its row
//   trigger stays.
// - search_doc_sorts: no query reads `search_doc_sorts_txt_idx` (a text sort joins each document's
//   value by the primary key; range filters are numeric), so it goes; `search_doc_sorts_num_idx`
//   holds only rows with a number, the ones a range filter (which says `num is not null`) can match.
//   A text value no longer writes two index entries for nothing. Both engines.
// - PostgreSQL: `search_docs_indexed_idx` serves only SQLite's in-memory index (it reads the
//   documents indexed since its last look); no PostgreSQL query reads it.
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await sql`drop index search_doc_sorts_txt_idx`.execute(db);
  await sql`drop index search_doc_sorts_num_idx`.execute(db);
  await sql`create index search_doc_sorts_num_idx on search_doc_sorts (org_id, field, num, doc_no) where num is not null`.execute(
    db,
  );
  if (!postgres) return;
  await sql`drop index search_docs_indexed_idx`.execute(db);
  await sql`create function tessera_queue_fanout_rows() returns trigger language plpgsql as $$
    begin
      insert into event_fanout_queue (created_at, event_id) select created_at, id from tessera_new_events;
      return null;
    end $$`.execute(db);
  await sql`drop trigger tessera_events_fanout on events`.execute(db);
  await sql`drop function tessera_queue_fanout()`.execute(db);
  await sql`create trigger tessera_events_fanout after insert on events referencing new table as tessera_new_events
    for each statement execute function tessera_queue_fanout_rows()`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only');
}
