import { CompiledQuery, type Insertable } from 'kysely';
import type { Db, Trx } from '../../core/db/connect.ts';
import type { Database } from '../../core/db/schema.ts';

/**
 * A multi-row insert whose SQL is compiled once per engine and row count. Kysely builds and
 * compiles an operation tree for every value of a batch (a few µs per row, and every delivery
 * inserts two rows: its message and its attempt); here a batch only flattens its values. With
 * the same text each time, SQLite's statement cache (connect.ts) also skips parse and plan.
 * The columns are named once; a row with any other field is refused rather than cut short.
 */
export function batchInsert<T extends keyof Database & string>(table: T, columns: readonly (keyof Insertable<Database[T]> & string)[]) {
  const texts = new WeakMap<object, Map<number, string>>();
  const blank = Object.fromEntries(columns.map((c) => [c, null]));
  return async (db: Db | Trx, rows: readonly Insertable<Database[T]>[]): Promise<void> => {
    if (rows.length === 0) return;
    const first = Object.keys(rows[0]!);
    if (first.length !== columns.length || first.some((key) => !columns.includes(key as never))) throw new Error(`${table} batch rows must have exactly the columns ${columns.join(', ')}`);
    const adapter = db.getExecutor().adapter;
    let byCount = texts.get(adapter);
    if (!byCount) texts.set(adapter, (byCount = new Map()));
    let text = byCount.get(rows.length);
    if (text === undefined) {
      // Kysely writes the shape (the engine's quoting and placeholders); only the values change.
      text = db.insertInto(table).values(rows.map(() => blank) as never).compile().sql;
      byCount.set(rows.length, text);
    }
    const parameters: unknown[] = new Array(rows.length * columns.length);
    let i = 0;
    for (const row of rows) for (const column of columns) parameters[i++] = (row as Record<string, unknown>)[column];
    await db.executeQuery(CompiledQuery.raw(text, parameters));
  };
}
