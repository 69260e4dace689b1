import type { Insertable } from 'kysely';
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

/**
 * Inserts `rows` with as few multi-row INSERT statements as the parameter budget allows (call it
 * in a transaction when the rows belong together). Every row must have the same columns.
 */
export async function insertRows<T extends keyof Database & string>(
  db: DbOrTrx,
  table: T,
  rows: readonly Insertable<Database[T]>[],
): Promise<void> {
  if (rows.length === 0) return;
  const chunk = rowsPerInsert(Object.keys(rows[0] as object).length);
  for (let i = 0; i < rows.length; i += chunk) {
    // Kysely's table-generic insert types do not resolve through `T`; the rows are typed by the signature.
    await (db as DbOrTrx)
      .insertInto(table as 'events')
      .values(rows.slice(i, i + chunk) as unknown as Insertable<Database['events']>[])
      .execute();
  }
}
