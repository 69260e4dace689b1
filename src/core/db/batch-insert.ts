import { CompiledQuery, PostgresAdapter, type Insertable } from 'kysely';
import type { Db, Trx } from './connect.ts';
import type { Database } from './schema.ts';

/**
 * A multi-row insert of a fixed column list for hot paths (webhook messages and attempts), whose SQL
 * is compiled once per engine and chunk size (SQLite: powers of two). (`insert-rows.ts` is the general one: any columns,
 * chunked by the parameter budget, a query-builder tree per call.) Kysely builds and
 * compiles an operation tree for every value of a batch (a few µs per row, and every delivery
 * inserts two rows: its message and its attempt); here a batch only flattens its values. With
 * the same text each time, SQLite's statement cache (connect.ts) also skips parse and plan.
 * On PostgreSQL the rows go as one JSON parameter (`insert … select … from json_populate_recordset`):
 * one short statement whatever the batch size, where a VALUES list of 100 rows is a 1,500-parameter
 * statement parsed and planned on every batch (no prepared statements through Kysely).
 * The columns are named once; a row with any other field is refused rather than cut short.
 */
export function batchInsert<T extends keyof Database & string>(
  table: T,
  columns: readonly (keyof Insertable<Database[T]> & string)[],
  options: { ignoreConflictOn?: readonly (keyof Insertable<Database[T]> & string)[] } = {},
) {
  const suffix = options.ignoreConflictOn
    ? ` on conflict (${options.ignoreConflictOn.map((c) => `"${c}"`).join(', ')}) do nothing`
    : '';
  const texts = new WeakMap<object, Map<number, string>>();
  const jsonTexts = new WeakMap<object, string>();
  const blank = Object.fromEntries(columns.map((c) => [c, null]));
  return async (db: Db | Trx, rows: readonly Insertable<Database[T]>[]): Promise<void> => {
    if (rows.length === 0) return;
    const first = Object.keys(rows[0]!);
    if (first.length !== columns.length || first.some((key) => !columns.includes(key as never)))
      throw new Error(`${table} batch rows must have exactly the columns ${columns.join(', ')}`);
    const adapter = db.getExecutor().adapter;
    if (adapter instanceof PostgresAdapter) {
      let text = jsonTexts.get(adapter);
      if (text === undefined) jsonTexts.set(adapter, (text = jsonText(table, columns) + suffix));
      await db.executeQuery(CompiledQuery.raw(text, [jsonRows(rows)]));
      return;
    }
    let byCount = texts.get(adapter);
    if (!byCount) texts.set(adapter, (byCount = new Map()));
    // In chunks of powers of two, largest first (78 rows: 64, 8, 4, 2): at most nine texts per table,
    // so SQLite's statement cache keeps them all. One text per batch size had most group commits
    // (their sizes vary) parse and plan a statement of hundreds of placeholders anew.
    for (let start = 0; start < rows.length; ) {
      const size = Math.min(MAX_CHUNK, 2 ** Math.floor(Math.log2(rows.length - start)));
      let text = byCount.get(size);
      if (text === undefined) {
        // Kysely writes the shape (the engine's quoting and placeholders); only the values change.
        text =
          db
            .insertInto(table)
            .values(Array.from({ length: size }, () => blank) as never)
            .compile().sql + suffix;
        byCount.set(size, text);
      }
      const parameters: unknown[] = new Array(size * columns.length);
      let i = 0;
      for (let r = start; r < start + size; r++)
        for (const column of columns) parameters[i++] = (rows[r] as Record<string, unknown>)[column];
      await db.executeQuery(CompiledQuery.raw(text, parameters));
      start += size;
    }
  };
}

/** SQLite: the largest chunk (a power of two; 256 rows of 20 columns stay far below its 32,766 parameters). */
const MAX_CHUNK = 256;

const jsonTextCache = new Map<string, string>();

/** PostgreSQL: the insert of plain `rows` of `columns` as one JSON parameter (insert-rows.ts). */
export function jsonRowsInsert(table: string, columns: readonly string[], rows: readonly object[]): CompiledQuery {
  const key = `${table}\u0000${columns.join('\u0000')}`;
  let text = jsonTextCache.get(key);
  if (text === undefined) {
    text = jsonText(table, columns);
    if (jsonTextCache.size < 512) jsonTextCache.set(key, text);
  }
  return CompiledQuery.raw(text, [jsonRows(rows)]);
}

/**
 * Escapes PostgreSQL's `json` refuses to turn into text: a NUL (`\u0000`) and a lone surrogate
 * (`JSON.stringify` escapes only those; a well-formed pair is written as is), not preceded by an
 * escaped backslash. Each becomes U+FFFD, as the driver's UTF-8 encoding does to a lone surrogate.
 */
const UNSTORABLE_ESCAPE = /(?<!\\)((?:\\\\)*)\\u(?:0000|d[89a-f][0-9a-f]{2})/gi;

/** The rows as one JSON text that PostgreSQL stores whatever the strings hold. */
function jsonRows(rows: readonly object[]): string {
  const text = JSON.stringify(rows);
  return text.includes('\\u0000') || /\\ud[89a-f]/i.test(text) ? text.replace(UNSTORABLE_ESCAPE, '$1\\ufffd') : text;
}

/**
 * The PostgreSQL insert from one JSON array of the rows, typed by the table's own row type: one
 * parameter that `JSON.stringify` writes natively, where one array per column (`unnest`) had every
 * value escaped into an array literal by the driver (about 4 µs more per delivery, in the process
 * that also sends them). Values are JSON strings, numbers and nulls, as the columns take them.
 */
function jsonText(table: string, columns: readonly string[]): string {
  const quoted = columns.map((c) => `"${c}"`).join(', ');
  return `insert into "${table}" (${quoted}) select ${quoted} from json_populate_recordset(null::"${table}", $1::json)`;
}
