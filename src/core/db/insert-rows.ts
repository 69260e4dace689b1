import { CompiledQuery, PostgresAdapter, type Insertable } from 'kysely';
import { jsonRowsInsert } from './batch-insert.ts';
import type { DbOrTrx } from './connect.ts';
import type { Database } from './schema.ts';

/**
 * Bind parameters per statement, well under both engines' limits (SQLite ≥ 3.32: 32,766;
 * PostgreSQL: 65,535), so a multi-row insert never fails on the parameter count.
 */
export const PARAMETER_BUDGET = 16_000;

/** Rows per multi-row INSERT for rows of `columns` columns. */
export function rowsPerInsert(columns: number): number {
  return Math.max(1, Math.floor(PARAMETER_BUDGET / Math.max(1, columns)));
}

/** Compiled INSERT texts per engine (the dialect adapter), by table, columns and row count. */
const texts = new WeakMap<object, Map<string, string>>();
/** Enough for every (table, columns, count) shape the hot paths use; past it, texts are not kept. */
const MAX_TEXTS = 512;

/**
 * Inserts `rows` with as few multi-row INSERT statements as the parameter budget allows (call it
 * in a transaction when the rows belong together). Every row must have the same columns.
 *
 * Kysely builds and compiles an operation tree for every value of every row (a few µs a row, and
 * most of the garbage of a bulk creation: assets, grants, events, audit rows, index rows). Here the
 * SQL text of a shape (table, columns, row count) is compiled by Kysely once, with the engine's
 * quoting and placeholders, and every later insert of that shape only flattens its values; with
 * the same text each time, SQLite's statement cache (connect.ts) also skips parse and plan. Rows
 * that are not plain (a missing or extra column, an `undefined`, a SQL expression as a value) go
 * through Kysely as before.
 */
export async function insertRows<T extends keyof Database & string>(
  db: DbOrTrx,
  table: T,
  rows: readonly Insertable<Database[T]>[],
): Promise<void> {
  if (rows.length === 0) return;
  const columns = Object.keys(rows[0] as object);
  // PostgreSQL: plain rows go as one JSON parameter (batch-insert.ts): a short statement parsed and
  // planned in microseconds, where a VALUES list of 333 rows × 40 columns took PostgreSQL longer to
  // parse and plan than to insert (decision 0024).
  if (db.getExecutor().adapter instanceof PostgresAdapter && jsonPlain(rows as readonly object[], columns)) {
    await db.executeQuery(jsonRowsInsert(table, columns, rows as readonly object[]));
    return;
  }
  const chunk = rowsPerInsert(columns.length);
  for (let i = 0; i < rows.length; i += chunk) {
    const part = rows.slice(i, i + chunk);
    const parameters = flatten(part as readonly object[], columns);
    if (parameters) {
      await db.executeQuery(CompiledQuery.raw(textOf(db, table, columns, part.length), parameters));
      continue;
    }
    // Kysely's table-generic insert types do not resolve through `T`; the rows are typed by the signature.
    await (db as DbOrTrx)
      .insertInto(table as 'events')
      .values(part as unknown as Insertable<Database['events']>[])
      .execute();
  }
}

/** The values of `rows` column by column, or undefined when a row is not a plain row of `columns`. */
function flatten(rows: readonly object[], columns: readonly string[]): unknown[] | undefined {
  const parameters: unknown[] = new Array(rows.length * columns.length);
  let n = 0;
  for (const row of rows) {
    if (Object.keys(row).length !== columns.length) return undefined;
    for (const column of columns) {
      const value = (row as Record<string, unknown>)[column];
      if (value === undefined) return undefined;
      if (value !== null && typeof value === 'object' && !(value instanceof Uint8Array) && !(value instanceof Date))
        return undefined; // a SQL expression (or anything Kysely would turn into one)
      parameters[n++] = value;
    }
  }
  return parameters;
}

/** True when every row has exactly `columns`, each a string, a finite number, a boolean or null (what JSON carries as is). */
function jsonPlain(rows: readonly object[], columns: readonly string[]): boolean {
  for (const row of rows) {
    if (Object.keys(row).length !== columns.length) return false;
    for (const column of columns) {
      const value = (row as Record<string, unknown>)[column];
      if (value === null || typeof value === 'string' || typeof value === 'boolean') continue;
      if (typeof value === 'number' && Number.isFinite(value)) continue;
      return false;
    }
  }
  return true;
}

function textOf(db: DbOrTrx, table: string, columns: readonly string[], count: number): string {
  const adapter = db.getExecutor().adapter;
  let byShape = texts.get(adapter);
  if (!byShape) texts.set(adapter, (byShape = new Map()));
  const key = `${table}\u0000${columns.join('\u0000')}\u0000${count}`;
  let text = byShape.get(key);
  if (text === undefined) {
    const blank = Object.fromEntries(columns.map((c) => [c, null]));
    const compiled = db
      .insertInto(table as 'events')
      .values(Array.from({ length: count }, () => blank) as never)
      .compile();
    // One placeholder per value, in row-then-column order, is what the flattened values fill.
    if (compiled.parameters.length !== count * columns.length)
      throw new Error(`insertRows: ${table} compiled to ${compiled.parameters.length} placeholders`);
    text = compiled.sql;
    if (byShape.size < MAX_TEXTS) byShape.set(key, text);
  }
  return text;
}
