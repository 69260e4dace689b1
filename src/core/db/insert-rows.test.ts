// The general multi-row insert: every row written once, in as many statements as the parameter
// budget needs, with the once-compiled text for plain rows and Kysely's for the rest.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { sql } from 'kysely';
import { forEachEngine } from '../../../test/helpers/context.ts';
import { insertRows, rowsPerInsert } from './insert-rows.ts';

forEachEngine('insertRows', (ctx) => {
  it('writes every row and value across statement chunks, again with a shape seen before, and takes SQL expressions as values', async () => {
    const db = ctx().deps.db;
    const perStatement = rowsPerInsert(2);
    const rows = (prefix: string, n: number) =>
      Array.from({ length: n }, (_, i) => ({
        key: `${prefix}-${i}`,
        // Text a hand-written statement would have to escape, and text that looks like NULL.
        value: i % 3 === 0 ? `'quoted' "double" \\ é 🎉 ${i}` : i % 5 === 0 ? 'NULL' : String(i),
      }));
    // More rows than one statement takes: two chunks, the second of another row count.
    const many = rows('many', perStatement + 7);
    await db.transaction().execute((trx) => insertRows(trx, 'search_index_state', many));
    // The same shape and count again (the kept text), and a count of one.
    const again = rows('again', perStatement + 7);
    await insertRows(db, 'search_index_state', again);
    await insertRows(db, 'search_index_state', rows('one', 1));
    // A SQL expression as a value is Kysely's to write, not a parameter.
    await insertRows(db, 'search_index_state', [
      { key: 'expr-0', value: sql<string>`${'a'} || ${'b'}` as never },
      { key: 'expr-1', value: 'plain' },
    ]);
    const stored = await db.selectFrom('search_index_state').select(['key', 'value']).execute();
    const byKey = new Map(stored.map((r) => [r.key, r.value]));
    for (const row of [...many, ...again, ...rows('one', 1)]) assert.equal(byKey.get(row.key), row.value, row.key);
    assert.equal(byKey.get('expr-0'), 'ab');
    assert.equal(byKey.get('expr-1'), 'plain');
    assert.equal(stored.filter((r) => /^(many|again|one|expr)-/.test(r.key)).length, 2 * many.length + 3);
  });

  it('hands a row with a column missing to Kysely, so no value lands in another column (here: refused, nothing written)', async () => {
    const db = ctx().deps.db;
    await assert.rejects(insertRows(db, 'search_index_state', [{ key: 'a', value: 'x' }, { key: 'b' } as never]));
    assert.equal(
      (await db.selectFrom('search_index_state').select('key').where('key', 'in', ['a', 'b']).execute()).length,
      0,
    );
  });

  it('PostgreSQL: plain rows go as one statement (one JSON parameter) whatever their number, so a failing row leaves none written even outside a transaction', async () => {
    const db = ctx().deps.db;
    const n = rowsPerInsert(2) + 7;
    const rows = Array.from({ length: n }, (_, i) => ({
      key: `json-${i}`,
      value: i % 2 ? `é "${i}" \\ 🎉` : String(i),
    }));
    // The last row repeats the first key: on SQLite the first chunk is already written by then.
    await assert.rejects(insertRows(db, 'search_index_state', [...rows, { key: 'json-0', value: 'again' }]));
    const written = await db
      .selectFrom('search_index_state')
      .select(['key', 'value'])
      .where('key', 'like', 'json-%')
      .execute();
    if (ctx().engine === 'postgres') {
      assert.equal(written.length, 0);
      await insertRows(db, 'search_index_state', rows);
      const stored = new Map(
        (
          await db.selectFrom('search_index_state').select(['key', 'value']).where('key', 'like', 'json-%').execute()
        ).map((r) => [r.key, r.value]),
      );
      for (const row of rows) assert.equal(stored.get(row.key), row.value, row.key);
    } else assert.equal(written.length, rowsPerInsert(2));
  });
});
