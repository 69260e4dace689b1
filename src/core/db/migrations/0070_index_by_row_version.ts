import { PostgresAdapter, sql, type Kysely } from 'kysely';

// Never edit after it lands: add a new migration instead.
//
// The search indexer notices a changed asset by a row version instead of its `updated_at`
// (decision 0039). Two writes of one asset in one millisecond have the same `updated_at`, so a
// document built between them looked current; the indexer used to rebuild every document built in
// its asset's last millisecond once more, which on a stopped clock (the tests) was every document of
// every pass. Now each document records the version of the asset row it was built from:
// - search_docs.asset_version, 0 for documents built before this migration.
// - assets.row_version, moved by a trigger on every update of the row that did not move it itself:
//   on PostgreSQL a BEFORE UPDATE trigger sets it on the new row (no second write); on SQLite, where
//   a trigger cannot change the new row, an AFTER UPDATE trigger updates it (its own update moves the
//   version, so it does not repeat). Inserts, the bulk path, pay nothing.
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await sql`alter table search_docs add column asset_version bigint not null default 0`.execute(db);
  await sql`alter table assets add column row_version bigint not null default 0`.execute(db);
  if (postgres) {
    await sql`create function tessera_asset_row_version() returns trigger language plpgsql as $$
      begin
        new.row_version := old.row_version + 1;
        return new;
      end $$`.execute(db);
    await sql`create trigger tessera_assets_row_version before update on assets for each row
      when (new.row_version = old.row_version) execute function tessera_asset_row_version()`.execute(db);
    return;
  }
  await sql`create trigger tessera_assets_row_version after update on assets for each row
    when new.row_version = old.row_version
    begin update assets set row_version = old.row_version + 1 where id = new.id; end`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only');
}
