import { PostgresAdapter, sql, type Kysely } from 'kysely';

// Never edit after it lands: add a new migration instead.
//
// Issue 30, item 4: a job enqueued in one process is claimed by the workers of another (`tessera
// worker` beside `tessera serve --no-workers`) at once, not at their next poll. PostgreSQL: every
// statement that adds jobs NOTIFYs `tessera_jobs` (delivered at commit, so a worker woken by it
// sees the rows; several in one transaction arrive as one). core/jobs/listen.ts LISTENs. SQLite
// has no NOTIFY: workers of other processes poll (workers of the enqueuing process are woken
// in-process, deps.jobs.wake()).

export async function up(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`
    create or replace function tessera_jobs_notify() returns trigger language plpgsql as $$
    begin
      perform pg_notify('tessera_jobs', '');
      return null;
    end $$`.execute(db);
  await sql`create trigger jobs_notify after insert on jobs for each statement execute function tessera_jobs_notify()`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`drop trigger if exists jobs_notify on jobs`.execute(db);
  await sql`drop function if exists tessera_jobs_notify()`.execute(db);
}
