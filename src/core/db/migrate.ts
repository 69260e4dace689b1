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
  const { error, results } = await db.connection().execute(async (conn) => {
    const postgres = conn.getExecutor().adapter instanceof PostgresAdapter;
    if (postgres) await sql`set statement_timeout = 0`.execute(conn);
    try {
      return await new Migrator({
        db: conn,
        provider: new StaticProvider(),
        // Numbers are reserved per change in parallel work, so one may land after a higher one ran.
        allowUnorderedMigrations: true,
      }).migrateToLatest();
    } finally {
      if (postgres) await sql`reset statement_timeout`.execute(conn).catch(() => {});
    }
  });
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
