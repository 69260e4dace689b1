import { PostgresAdapter, sql, type Kysely } from 'kysely';

// Never edit after it lands: add a new migration instead.
//
// The content revision (src/core/db/revision.ts): a second counter, beside the identity revision
// of 0012, that triggers bump whenever a row an asset view is derived from changes, so every
// instance can keep asset views (the serialized GET /v1/asset/{id} body and what the permission
// check needs) in memory and drop them the moment one may be stale. Asset writes bump only this
// counter, so they never flush the principal caches.
//
// PostgreSQL: asset writes are frequent and concurrent, and every transaction that bumps holds the
// counter row's lock while it commits; the counter is therefore split into CONTENT_STRIPES rows
// (ids 2…) and a transaction bumps the stripe its transaction id picks. Readers only compare the
// whole set of values. A later migration that adds a table asset views read calls
// `contentRevisionTriggers` for it and adds it to CONTENT_TABLES in src/core/db/revision.ts.

export const CONTENT_STRIPES = 8;

/** Which writes bump, per table. Inserts of assets need none: a view is only kept for an asset that existed. */
export const CONTENT_TRIGGERS: Record<string, readonly ('insert' | 'update' | 'delete')[]> = {
  assets: ['update', 'delete'],
  asset_security: ['insert', 'update', 'delete'],
  security_template_permissions: ['insert', 'update', 'delete'],
  // The metadata definitions version (features/metadata/definitions/template-cache.ts) lives here.
  server_state: ['insert', 'update', 'delete'],
};

function isPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** Creates (or re-creates) the content revision triggers of one table, on either engine. */
export async function contentRevisionTriggers(
  db: Kysely<any>,
  table: string,
  events: readonly ('insert' | 'update' | 'delete')[],
): Promise<void> {
  const id = (s: string) => sql.id(s);
  for (const event of events) {
    const name = `tessera_content_${table}_${event}`;
    if (isPostgres(db)) {
      await sql`drop trigger if exists ${id(name)} on ${id(table)}`.execute(db);
      // Deferred to commit, as the identity triggers (no lock held while the transaction works,
      // and a NOTIFY never announces a change that is not visible yet).
      const when = event === 'update' ? sql`when (old.* is distinct from new.*)` : sql``;
      await sql`create constraint trigger ${id(name)} after ${sql.raw(event)} on ${id(table)} deferrable initially deferred for each row ${when} execute function tessera_bump_content_revision()`.execute(
        db,
      );
    } else {
      await sql`drop trigger if exists ${id(name)}`.execute(db);
      // SQLite serialises writers: one row, no stripes needed.
      await sql`create trigger ${id(name)} after ${sql.raw(event)} on ${id(table)} for each row begin update tessera_revision set value = value + 1 where id = 2; end`.execute(
        db,
      );
    }
  }
}

export async function up(db: Kysely<any>): Promise<void> {
  const stripes = isPostgres(db) ? CONTENT_STRIPES : 1;
  await db
    .insertInto('tessera_revision')
    .values(Array.from({ length: stripes }, (_, i) => ({ id: 2 + i, value: 0 })))
    .execute();
  if (isPostgres(db)) {
    // Once per transaction. A transaction that also bumped the identity revision skips it: an
    // asset view is valid only while both revisions are unchanged, so that bump already stales
    // it; and then no transaction ever locks the identity row before a content stripe, so two
    // transactions can never wait on each other's counter rows (identity-then-content is never
    // taken; content-then-identity is the only order).
    await sql`
      create or replace function tessera_bump_content_revision() returns trigger language plpgsql as $$
      declare v bigint;
      declare tx text := txid_current()::text;
      begin
        if current_setting('tessera.content_revision_bumped', true) = tx then return null; end if;
        perform set_config('tessera.content_revision_bumped', tx, true);
        if current_setting('tessera.revision_bumped', true) = tx then return null; end if;
        update tessera_revision set value = value + 1 where id = 2 + (txid_current() % ${sql.lit(CONTENT_STRIPES)}) returning value into v;
        perform pg_notify('tessera_content_revision', v::text);
        return null;
      end $$`.execute(db);
  }
  for (const [table, events] of Object.entries(CONTENT_TRIGGERS)) await contentRevisionTriggers(db, table, events);
}
