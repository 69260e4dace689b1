import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { it } from 'node:test';
import { sql } from 'kysely';
import { REVOKE, createKey } from '../../../../test/helpers/api-keys.ts';
import { forEachEngine, type TestContext } from '../../../../test/helpers/context.ts';
import { createTestOrg } from '../../../../test/helpers/factories.ts';
import { flushApiKeyUsage, secretPart } from '../index.ts';

/** Every text value in every table of the database, via SELECT (works on both engines). */
async function allText(ctx: TestContext): Promise<string> {
  const db = ctx.deps.db;
  const columns =
    ctx.engine === 'postgres'
      ? (
          await sql<{
            table_name: string;
            column_name: string;
          }>`select table_name, column_name from information_schema.columns where table_schema = 'public' and data_type in ('text', 'character varying')`.execute(
            db,
          )
        ).rows
      : (
          await sql<{
            table_name: string;
            column_name: string;
          }>`select m.name as table_name, p.name as column_name from sqlite_master m join pragma_table_info(m.name) p where m.type = 'table' and upper(p.type) = 'TEXT'`.execute(
            db,
          )
        ).rows;
  assert.ok(columns.some((c) => c.table_name === 'api_keys' && c.column_name === 'key_hash'));
  const parts: string[] = [];
  for (const { table_name, column_name } of columns) {
    const rows = (
      await sql<{ v: string | null }>`select ${sql.ref(column_name)} as v from ${sql.table(table_name)}`.execute(db)
    ).rows;
    for (const row of rows) if (row.v !== null) parts.push(row.v);
  }
  return parts.join('\n');
}

forEachEngine('api keys: nothing secret at rest', (ctx) => {
  it('neither the key, its secret part, nor an unkeyed hash of it is stored anywhere', async () => {
    const org = await createTestOrg(ctx());
    const keys = [];
    for (let i = 0; i < 5; i++)
      keys.push(
        await createKey(ctx(), org, { name: `scan-${i}`, expiresAt: i % 2 ? ctx().clock.now() + 60_000 : undefined }),
      );
    for (const { key } of keys) {
      const res = await ctx().app.inject({
        method: 'GET',
        url: '/v1/user',
        headers: { 'x-api-key': key },
        remoteAddress: '192.0.2.7',
      });
      assert.equal(res.statusCode, 200);
    }
    await ctx().inject({ method: 'POST', url: REVOKE, headers: org.admin.headers, payload: { id: keys[0]!.id } });
    await flushApiKeyUsage(ctx().deps);

    const needles = keys.flatMap(({ key }) => {
      const sha = createHash('sha256').update(key).digest();
      return [key, secretPart(key), sha.toString('hex'), sha.toString('base64'), sha.toString('base64url')];
    });
    const text = await allText(ctx());
    assert.ok(text.includes(keys[0]!.keyHint), 'the scan reads the api_keys rows');
    for (const needle of needles) assert.ok(!text.includes(needle), 'a key or an unkeyed hash of it is stored');

    const database = ctx().database;
    if (database.kind === 'sqlite') {
      // The raw file bytes too, with the write-ahead log, where fresh rows live before a checkpoint.
      const file = database.file;
      const bytes = Buffer.concat(
        [file, `${file}-wal`, `${file}-shm`].filter((f) => existsSync(f)).map((f) => readFileSync(f)),
      );
      assert.ok(bytes.length > 0);
      assert.ok(bytes.includes(Buffer.from(keys[0]!.id)), 'the scan reads the database file');
      for (const needle of needles)
        assert.equal(bytes.indexOf(Buffer.from(needle)), -1, 'a key or an unkeyed hash of it is in the database file');
    }
  });
});
