import { PostgresAdapter, sql, type Kysely } from 'kysely';
import { CONTENT_STRIPES } from './0017_content_revision.ts';

// Never edit after it lands: add a new migration instead.
//
// PostgreSQL: the content revision's NOTIFY names the stripe it moved and its new value
// (`<id>:<value>`), so an instance that already read that value (its own write: the driver re-reads
// the stripes before the writing call returns) does not stale its asset views a second time when
// its own notification arrives (core/db/revision.ts, contentChanged). SQLite has no NOTIFY.

export async function up(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`
    create or replace function tessera_bump_content_revision() returns trigger language plpgsql as $$
    declare v bigint;
    declare stripe bigint;
    declare tx text := txid_current()::text;
    begin
      if current_setting('tessera.content_revision_bumped', true) = tx then return null; end if;
      perform set_config('tessera.content_revision_bumped', tx, true);
      if current_setting('tessera.revision_bumped', true) = tx then return null; end if;
      stripe := 2 + (txid_current() % ${sql.lit(CONTENT_STRIPES)});
      update tessera_revision set value = value + 1 where id = stripe returning value into v;
      perform pg_notify('tessera_content_revision', stripe::text || ':' || v::text);
      return null;
    end $$`.execute(db);
}
