import { PostgresAdapter, sql } from 'kysely';
import { Migrator, type Migration, type MigrationProvider } from 'kysely/migration';
import type { Db } from './connect.ts';
import { migrations } from './migrations/index.ts';

class StaticProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return migrations;
  }
}

/** Brings the schema up to date. Safe to run from several processes at once (Kysely takes a lock). */
export async function migrateToLatest(db: Db): Promise<string[]> {
  // On PostgreSQL, Kysely runs every pending migration in one transaction holding an advisory lock
  // (pg_advisory_xact_lock): of many processes starting at once, one migrates and the others wait,
  // then find nothing left to do. A migration may outlast the statement timeout of ordinary calls.
  //
  // On SQLite, Kysely takes no lock (it assumes one connection), so processes starting together on
  // one file each ran the pending migrations ("table … already exists"). The whole run is one
  // immediate transaction instead: the first process takes the write lock and migrates, the others
  // wait for it (busy timeout, then again, up to 5 minutes) and find nothing left to do.
  const { error, results } = await db.connection().execute(async (conn) => {
    const postgres = conn.getExecutor().adapter instanceof PostgresAdapter;
    if (postgres) await sql`set statement_timeout = 0`.execute(conn);
    else await beginImmediate(conn);
    let outcome: Awaited<ReturnType<Migrator['migrateToLatest']>> | undefined;
    try {
      outcome = await new Migrator({
        db: conn,
        provider: new StaticProvider(),
        // Numbers are reserved per change in parallel work, so one may land after a higher one ran.
        allowUnorderedMigrations: true,
      }).migrateToLatest();
      return outcome;
    } finally {
      if (postgres) await sql`reset statement_timeout`.execute(conn).catch(() => {});
      else if (outcome && !outcome.error) await sql`commit`.execute(conn);
      else await sql`rollback`.execute(conn).catch(() => {});
    }
  });
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** SQLite's write lock for the whole migration, waiting while another process holds it. */
async function beginImmediate(conn: Db): Promise<void> {
  const deadline = Date.now() + 5 * 60_000;
  for (;;) {
    try {
      await sql`begin immediate`.execute(conn);
      return;
    } catch (error) {
      const code = (error as { code?: string }).code ?? '';
      if (!code.startsWith('SQLITE_BUSY') || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
