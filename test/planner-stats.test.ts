// Issue 28: searching a freshly restored PostgreSQL database is fast without a manual ANALYZE.
// At start (`serve`, `worker`) every table that has never been analyzed is analyzed in the background
// (src/core/db/planner-stats.ts); a database that has its statistics is left alone.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pg from 'pg';
import { ENGINES, TEST_SECRET } from './helpers/context.ts';
import { createPgDatabase } from './helpers/engines.ts';
import { freePort } from './helpers/net.ts';
import { spawnTessera } from './helpers/tessera-process.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const postgres = ENGINES.find((e) => e.name === 'postgres');

async function neverAnalyzed(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const rows = await client.query<{ relname: string }>(
      `select relname from pg_stat_user_tables where last_analyze is null and last_autoanalyze is null order by relname`,
    );
    return rows.rows.map((r) => r.relname);
  } finally {
    await client.end();
  }
}

describe('planner statistics at start [postgres]', { skip: postgres ? postgres.skip : 'PostgreSQL only' }, () => {
  it('analyzes every table that has none when a process starts, and nothing the next time', {
    timeout: 120_000,
  }, async () => {
    const db = await createPgDatabase();
    const dataDir = mkdtempSync(join(tmpdir(), 'tessera-analyze-'));
    const env = (port: number) => ({
      PATH: process.env.PATH ?? '',
      DATABASE_URL: db.url,
      TESSERA_DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: String(port),
      TESSERA_SECRET_KEY: TEST_SECRET,
      TESSERA_LOG_LEVEL: 'info',
    });
    try {
      // A database as a restore leaves it: the schema and rows, no statistics.
      const migrate = spawnTessera(['migrate'], env(0));
      assert.equal(await migrate.exited, 0, migrate.output());
      const before = await neverAnalyzed(db.url);
      assert.ok(before.includes('assets') && before.includes('search_docs'), before.join(', '));

      const first = spawnTessera(['serve', '--no-workers'], env(await freePort()));
      try {
        const logged = await first.waitFor(/"tables":(\d+)[^\n]*planner statistics gathered/);
        assert.ok(Number(logged[1]) >= before.length - 2, `${logged[1]} of ${before.length}`);
        const deadline = Date.now() + 10_000;
        let left = await neverAnalyzed(db.url);
        while (left.includes('assets') && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 100));
          left = await neverAnalyzed(db.url);
        }
        assert.ok(
          !left.includes('assets') && !left.includes('search_docs'),
          `still without statistics: ${left.join(', ')}`,
        );
      } finally {
        await first.stop();
      }

      const second = spawnTessera(['serve', '--no-workers'], env(await freePort()));
      try {
        await second.waitFor(/Server listening/);
        await new Promise((r) => setTimeout(r, 1000));
        assert.doesNotMatch(second.output(), /planner statistics gathered/, 'a database with statistics is left alone');
      } finally {
        await second.stop();
      }
    } finally {
      await db.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
