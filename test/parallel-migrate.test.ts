// Issue 28, item 9: migrations run once when many processes start together. Four `tessera migrate`
// processes and two `tessera serve` processes start at the same moment on an empty database (PostgreSQL:
// Kysely's advisory lock; SQLite: the write lock of an immediate transaction): every one exits 0 or
// serves, each migration is recorded exactly once, and the schema is whole.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import pg from 'pg';
import Database from 'better-sqlite3';
import { ENGINES, TEST_SECRET } from './helpers/context.ts';
import { createPgDatabase } from './helpers/engines.ts';
import { freePort } from './helpers/net.ts';
import { spawnTessera } from './helpers/tessera-process.ts';
import { migrations } from '../src/core/db/migrations/index.ts';

for (const engine of ENGINES) {
  describe(`migrations from many processes at once [${engine.name}]`, { skip: engine.skip }, () => {
    it('one process migrates, the others wait and find nothing left; each migration recorded once', {
      timeout: 180_000,
    }, async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'tessera-migrate-'));
      const pgDb = engine.name === 'postgres' ? await createPgDatabase() : undefined;
      const databaseUrl = pgDb ? pgDb.url : `sqlite:${join(dataDir, 'tessera.sqlite')}`;
      const env = (extra: Record<string, string> = {}) => ({
        PATH: process.env.PATH ?? '',
        DATABASE_URL: databaseUrl,
        TESSERA_DATA_DIR: dataDir,
        HOST: '127.0.0.1',
        TESSERA_SECRET_KEY: TEST_SECRET,
        TESSERA_LOG_LEVEL: 'info',
        TESSERA_ADMIN_USERNAME: 'first-admin',
        TESSERA_ADMIN_PASSWORD: 'First-Admin-Password-1',
        ...extra,
      });
      const servers = await Promise.all([freePort(), freePort()]);
      const all = [
        ...Array.from({ length: 4 }, () => spawnTessera(['migrate'], env())),
        ...servers.map((port) => spawnTessera(['serve', '--no-workers'], env({ PORT: String(port) }))),
      ];
      try {
        const migrators = all.slice(0, 4);
        const codes = await Promise.all(migrators.map((p) => p.exited));
        assert.deepEqual(codes, [0, 0, 0, 0], migrators.map((p) => p.output()).join('\n---\n'));
        for (const server of all.slice(4)) await server.waitFor(/Server listening/, 90_000);
        for (const port of servers) {
          const res = await fetch(`http://127.0.0.1:${port}/v1/auth/token`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ username: 'first-admin', password: 'First-Admin-Password-1' }),
          });
          assert.equal(res.status, 200, await res.text());
        }
        const names = await recordedMigrations(databaseUrl);
        assert.equal(names.length, Object.keys(migrations).length, 'every migration recorded');
        assert.equal(new Set(names).size, names.length, `a migration recorded twice: ${names.join(', ')}`);
        const applied = all.map((p) => /"applied":\[([^\]]*)\]/.exec(p.output())?.[1] ?? '').filter((x) => x !== '');
        assert.ok(applied.length <= 1, `more than one process applied migrations:\n${applied.join('\n')}`);
        // Exactly one first administrator, though two servers started on the empty database together.
        const admins = await count(databaseUrl, `select count(*) as n from users where username = 'first-admin'`);
        assert.equal(admins, 1);
      } finally {
        await Promise.all(all.map((p) => p.stop(10_000)));
        await pgDb?.drop();
        rmSync(dataDir, { recursive: true, force: true });
      }
    });
  });
}

async function recordedMigrations(url: string): Promise<string[]> {
  if (url.startsWith('sqlite:')) {
    const db = new Database(url.slice('sqlite:'.length), { readonly: true });
    try {
      return (db.prepare('select name from kysely_migration').all() as { name: string }[]).map((r) => r.name);
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ name: string }>('select name from kysely_migration')).rows.map((r) => r.name);
  } finally {
    await client.end();
  }
}

async function count(url: string, query: string): Promise<number> {
  if (url.startsWith('sqlite:')) {
    const db = new Database(url.slice('sqlite:'.length), { readonly: true });
    try {
      return Number((db.prepare(query).get() as { n: number }).n);
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return Number((await client.query<{ n: string }>(query)).rows[0]!.n);
  } finally {
    await client.end();
  }
}
