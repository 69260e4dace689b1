// A PostgreSQL connection lost while the application holds it (a restart, a failover,
// pg_terminate_backend) fails what was using it, never the process; the pool then replaces it.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import pg from 'pg';
import { sql } from 'kysely';
import { createPgDatabase, postgresProblem } from '../../../test/helpers/engines.ts';
import { connectDb } from './connect.ts';

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
