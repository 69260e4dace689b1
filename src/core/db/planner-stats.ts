import { sql } from 'kysely';
import type { Db, Engine } from './connect.ts';

/**
 * PostgreSQL plans from table statistics that only ANALYZE (or autovacuum, later, if it is on) gathers.
 * A freshly restored or moved database has none, and a search over 17,600 assets then took 148–202 s
 * instead of 54–71 ms (issue 28). At start, every table never analyzed is analyzed, in the background:
 * a no-op on a running installation (autovacuum or an earlier start did it), a few hundred ms on an
 * empty one, and what makes a restored database fast without anyone running ANALYZE by hand.
 * SQLite has no such statistics to miss (its planner reads the indexes). Returns the tables analyzed.
 */
export async function analyzeTablesNeverAnalyzed(db: Db, engine: Engine): Promise<string[]> {
  if (engine !== 'postgres') return [];
  const never = await sql<{ relname: string }>`
    select relname from pg_stat_user_tables
    where schemaname = current_schema() and last_analyze is null and last_autoanalyze is null
    order by relname`.execute(db);
  const done: string[] = [];
  for (const { relname } of never.rows) {
    // One table at a time, each its own statement: a long ANALYZE never holds up the others.
    await sql`analyze ${sql.table(relname)}`.execute(db);
    done.push(relname);
  }
  return done;
}
