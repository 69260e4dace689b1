import { createRequire } from 'node:module';
import type SQLite from 'better-sqlite3';

const require = createRequire(import.meta.url);

/** A direct better-sqlite3 connection (the backup tools read files the server's Kysely never opens). */
export function openSqlite(file: string, options: { readonly?: boolean; busyMs?: number } = {}): SQLite.Database {
  const Database = require('better-sqlite3') as typeof SQLite;
  const db = new Database(file, { readonly: options.readonly ?? true, fileMustExist: true });
  db.pragma(`busy_timeout = ${options.busyMs ?? 10_000}`);
  return db;
}

/** The ordinary tables of a SQLite file (no virtual tables, no SQLite internals), sorted by name. */
export function sqliteTables(db: SQLite.Database): string[] {
  return (
    db
      .prepare(
        `select name from sqlite_master where type = 'table' and name not like 'sqlite\\_%' escape '\\'
         and coalesce(sql, '') not like 'CREATE VIRTUAL%' order by name`,
      )
      .all() as { name: string }[]
  ).map((r) => r.name);
}

export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** Rows per ordinary table. */
export function sqliteCounts(db: SQLite.Database): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const table of sqliteTables(db)) {
    counts[table] = (db.prepare(`select count(*) as n from ${quoteIdent(table)}`).get() as { n: number }).n;
  }
  return counts;
}

/** The migrations a database has applied, in the order they ran (Kysely's bookkeeping table). */
export function appliedMigrations(db: SQLite.Database): string[] {
  const exists = db.prepare(`select 1 from sqlite_master where type = 'table' and name = 'kysely_migration'`).get();
  if (!exists) return [];
  return (db.prepare('select name from kysely_migration order by timestamp, name').all() as { name: string }[]).map(
    (r) => r.name,
  );
}
