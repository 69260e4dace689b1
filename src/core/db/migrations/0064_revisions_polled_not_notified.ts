import { PostgresAdapter, sql, type Kysely } from 'kysely';
import { CONTENT_STRIPES } from './0017_content_revision.ts';

// Never edit after it lands: add a new migration instead.
//
// Issue 28, "Benchmarks" (decision 0022): PostgreSQL serializes the commits of every transaction that
// called pg_notify, database-wide (one lock held across the commit's WAL flush, so no group commit).
// The identity and content revision triggers (0012, 0017/0019) and the jobs trigger (0050) notified
// on every asset write, upload and job insert, which capped write throughput at one commit per
// fsync whatever the number of processes. The revisions are now only counted: each process polls the
// counter rows every 250 ms on a connection of its own (core/db/revision.ts), and idle workers look
// for due jobs every 250 ms (core/jobs/worker.ts, probeMs). SQLite never notified: nothing to do.

export async function up(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  // As 0012, without the NOTIFY.
  await sql`
    create or replace function tessera_bump_revision() returns trigger language plpgsql as $$
    begin
      if current_setting('tessera.revision_bumped', true) = txid_current()::text then return null; end if;
      perform set_config('tessera.revision_bumped', txid_current()::text, true);
      update tessera_revision set value = value + 1 where id = 1;
      return null;
    end $$`.execute(db);
  // As 0019, without the NOTIFY.
  await sql`
    create or replace function tessera_bump_content_revision() returns trigger language plpgsql as $$
    declare tx text := txid_current()::text;
    begin
      if current_setting('tessera.content_revision_bumped', true) = tx then return null; end if;
      perform set_config('tessera.content_revision_bumped', tx, true);
      if current_setting('tessera.revision_bumped', true) = tx then return null; end if;
      update tessera_revision set value = value + 1 where id = 2 + (txid_current() % ${sql.lit(CONTENT_STRIPES)});
      return null;
    end $$`.execute(db);
  await sql`drop trigger if exists jobs_notify on jobs`.execute(db);
  await sql`drop function if exists tessera_jobs_notify()`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only');
}
