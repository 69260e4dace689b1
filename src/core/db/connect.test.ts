// SQLite: transactions of two connections take turns instead of failing each other.
// A PostgreSQL connection lost while the application holds it (a restart, a failover,
// pg_terminate_backend) fails what was using it, never the process; the pool then replaces it.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { Worker } from 'node:worker_threads';
import pg from 'pg';
import { sql } from 'kysely';
import { createPgDatabase, postgresProblem } from '../../../test/helpers/engines.ts';
import { connectDb, SQLITE_CACHE_KIB } from './connect.ts';

it('PostgreSQL: a connection terminated between two queries of a transaction rejects the transaction, and the next query works', async (t) => {
  const problem = await postgresProblem();
  if (problem) return t.skip(problem);
  const database = await createPgDatabase();
  const handle = connectDb({ kind: 'postgres', url: database.url });
  const admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  try {
    const failed = handle.db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
      await admin.query('select pg_terminate_backend($1)', [rows[0]!.pid]);
      // The server's FATAL arrives while this connection runs no query: with no listener for the
      // client's 'error' event, that was an uncaught exception and the end of the process.
      await new Promise((r) => setTimeout(r, 300));
      await sql`select 1`.execute(trx);
    });
    await assert.rejects(failed);
    const { rows } = await sql<{ one: number }>`select 1 as one`.execute(handle.db);
    assert.equal(rows[0]!.one, 1);
  } finally {
    await admin.end();
    await handle.close();
    await database.drop();
  }
});

it('SQLite: each connection keeps a page cache of SQLITE_CACHE_KIB, not the default 2 MB', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-sqlite-'));
  const handle = connectDb({ kind: 'sqlite', file: join(dir, 'db.sqlite') });
  try {
    const { rows } = await sql<{ cache_size: number }>`pragma cache_size`.execute(handle.db);
    assert.equal(rows[0]!.cache_size, -SQLITE_CACHE_KIB);
    assert.ok(SQLITE_CACHE_KIB >= 32_768);
  } finally {
    await handle.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

it('SQLite: a transaction that reads, then writes, is not failed by another connection committing in between (transactions begin immediate)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-sqlite-'));
  const file = join(dir, 'db.sqlite');
  const handle = connectDb({ kind: 'sqlite', file });
  try {
    await sql`create table t (id integer primary key, v text)`.execute(handle.db);
    // The other connection lives on another thread (standing in for a second Tessera process): it waits
    // for the lock there without blocking this thread.
    const other = new Worker(
      `
      const { parentPort, workerData } = require('node:worker_threads');
      const Database = require(workerData.driver);
      const db = new Database(workerData.file);
      db.pragma('busy_timeout = 10000');
      db.prepare("insert into t (v) values ('other')").run();
      db.close();
      parentPort.postMessage('committed');`,
      { eval: true, workerData: { file, driver: createRequire(import.meta.url).resolve('better-sqlite3') } },
    );
    let otherCommitted = false;
    const otherDone = new Promise<void>((resolve, reject) => {
      other.once('message', () => {
        otherCommitted = true;
        resolve();
      });
      other.once('error', reject);
    });
    await handle.db.transaction().execute(async (trx) => {
      await sql`select count(*) as n from t`.execute(trx);
      // Time for the other connection to commit, if it could (with a deferred transaction it
      // would, and this transaction's write below would fail with "database is locked").
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(otherCommitted, false, 'the other connection waits for this transaction');
      await sql`insert into t (v) values ('mine')`.execute(trx);
    });
    await otherDone;
    const { rows } = await sql<{ v: string }>`select v from t order by id`.execute(handle.db);
    assert.deepEqual(
      rows.map((r) => r.v),
      ['mine', 'other'],
    );
  } finally {
    await handle.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
