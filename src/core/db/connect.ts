import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { createRequire } from 'node:module';
import type SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, type Transaction } from 'kysely';
import type Pg from 'pg';
import type { Config, DatabaseTimeouts } from '../../config.ts';
import type { Database } from './schema.ts';
import type { WriteTurns } from './write-turns.ts';
import { trackRevisions } from './revision.ts';

export type Db = Kysely<Database>;
export type Trx = Transaction<Database>;
/** Either the database or an open transaction: what repository functions take first. */
export type DbOrTrx = Db | Trx;
export type Engine = 'sqlite' | 'postgres';

export interface DbHandle {
  readonly db: Db;
  readonly engine: Engine;
  /** Connections of the pool by state (PostgreSQL; SQLite holds one connection, always in use). */
  pool(): { total: number; idle: number; waiting: number };
  close(): Promise<void>;
}

// Only the driver of the configured engine is loaded (lean start); both are CommonJS.
const require = createRequire(import.meta.url);
let pgDriver: typeof Pg | undefined;
function loadPg(): typeof Pg {
  if (!pgDriver) {
    pgDriver = require('pg') as typeof Pg;
    // BIGINT columns hold epoch milliseconds, well inside Number's exact range.
    pgDriver.types.setTypeParser(20, (value) => Number(value));
  }
  return pgDriver;
}

export const DEFAULT_DB_TIMEOUTS: DatabaseTimeouts = {
  statementMs: 30_000,
  connectMs: 5000,
  idleInTransactionMs: 60_000,
  sqliteBusyMs: 10_000,
  freshnessMs: 1000,
};

export function connectDb(
  config: Config['database'],
  options: { poolSize?: number; timeouts?: DatabaseTimeouts } = {},
): DbHandle {
  const timeouts = options.timeouts ?? DEFAULT_DB_TIMEOUTS;
  if (config.kind === 'postgres') {
    const pg = loadPg();
    // Every call is bounded: the server cancels a long statement and ends a session left idle in a
    // transaction (releasing its locks); the client gives up on a connection that does not answer
    // at all (a hung network: no reset, no reply) and on waiting for a pooled connection.
    const pool = new pg.Pool({
      connectionString: config.url,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: timeouts.connectMs,
      statement_timeout: timeouts.statementMs,
      idle_in_transaction_session_timeout: timeouts.idleInTransactionMs,
      query_timeout: timeouts.statementMs + 2000,
      keepAlive: true,
    });
    // A client that loses its connection (a restart, a failover, pg_terminate_backend) must not crash
    // the process. Idle clients report it on the pool; a client checked out between two queries (in
    // a transaction, say) emits 'error' itself, which with no listener is an uncaught exception. Its
    // queries fail instead, and the pool drops it when it is released (it is no longer queryable).
    pool.on('error', () => {});
    pool.on('connect', (client) => client.on('error', () => {}));
    const tracked = trackRevisions(new PostgresDialect({ pool }), {
      database: config.url,
      pgUrl: config.url,
      freshnessMs: timeouts.freshnessMs,
    });
    const db = new Kysely<Database>({ dialect: tracked.dialect });
    tracked.register(db);
    return {
      db,
      engine: 'postgres',
      pool: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
      close: () => db.destroy(),
    };
  }
  if (config.file !== ':memory:') mkdirSync(dirname(config.file), { recursive: true });
  const SQLiteDatabase = require('better-sqlite3') as typeof SQLite;
  const sqlite = new SQLiteDatabase(config.file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma(`busy_timeout = ${timeouts.sqliteBusyMs}`);
  sqlite.pragma(`cache_size = -${SQLITE_CACHE_KIB}`);
  const cached = withStatementCache(sqlite);
  const tracked = trackRevisions(new SqliteDialect({ database: cached }), {
    database: config.file === ':memory:' ? ':memory:' : resolve(config.file),
  });
  const db = new Kysely<Database>({ dialect: tracked.dialect });
  tracked.register(db);
  sqliteConnections.set(db, { sqlite, setTurns: cached.setTurns });
  return { db, engine: 'sqlite', pool: () => ({ total: 1, idle: 0, waiting: 0 }), close: () => db.destroy() };
}

/**
 * SQLite's page cache per connection, KiB (SQLite's default is 2,000). Filled as pages are read, so
 * an idle start does not grow by it. Webhook delivery touches several tables and indexes per
 * delivery (the fan-out queue, events, messages and their four indexes, attempts and their three):
 * with the default cache their pages were read back from the OS on each group commit (a pread per
 * page, in the thread that also sends), 20–40% of the engine's rate on the bench (docs/performance.md).
 */
export const SQLITE_CACHE_KIB = 65_536;

/**
 * Kysely prepares every query anew; with a statement cache the hot queries (credential checks,
 * lookups by key) skip SQLite's parse and plan. Statements are only run with all()/run(), which
 * finish synchronously, so one cached statement is never used by two queries at once.
 */
function withStatementCache(sqlite: SQLite.Database, size = 500) {
  const cache = new Map<string, SQLite.Statement>();
  let turns: WriteTurns | undefined;
  // Statements as run with write turns (below), per cached statement; dropped when turns change.
  let inTurns = new WeakMap<SQLite.Statement, SQLite.Statement>();
  const state = { inTransaction: false };
  return {
    setTurns(next: WriteTurns | undefined) {
      turns = next;
      inTurns = new WeakMap();
    },
    close: () => {
      cache.clear();
      sqlite.close();
    },
    prepare: (sqlText: string) => {
      // Transactions take the write lock when they begin. A deferred one (SQLite's default) that
      // read first and then writes fails at once with "database is locked" when another connection
      // (a second instance on the same file) wrote meanwhile: SQLite cannot wait for that
      // upgrade without risking a deadlock. An immediate one waits its turn (busy_timeout).
      const text = sqlText === 'begin' ? 'begin immediate' : sqlText;
      let statement = cache.get(text);
      if (statement) {
        cache.delete(text);
      } else {
        statement = sqlite.prepare(text);
        if (cache.size >= size) cache.delete(cache.keys().next().value!);
      }
      cache.set(text, statement);
      let run = statement;
      if (turns) {
        run = inTurns.get(statement) ?? withTurns(statement, text, turns, state);
        inTurns.set(statement, run);
      }
      return run;
    },
  };
}

/** The better-sqlite3 connection behind a SQLite Db, and its write turns. */
const sqliteConnections = new WeakMap<Db, { sqlite: SQLite.Database; setTurns(turns: WriteTurns | undefined): void }>();

/**
 * Lets this SQLite connection's writes take turns with another thread's connection to the same
 * file (core/db/write-turns.ts, decision 0028), or stops it (`undefined`). False on PostgreSQL.
 */
export function shareSqliteWrites(db: Db, turns: WriteTurns | undefined): boolean {
  const connection = sqliteConnections.get(db);
  connection?.setTurns(turns);
  return connection !== undefined;
}

/**
 * SQLite's automatic checkpoint after a commit that left the WAL over `pages` pages (0: never; SQLite's
 * default is 1000). The commit that crosses it copies the WAL into the database and fsyncs both, in the
 * thread that committed (decision 0028). Returns false on PostgreSQL.
 */
export function setSqliteAutoCheckpoint(db: Db, pages: number): boolean {
  const connection = sqliteConnections.get(db);
  connection?.sqlite.pragma(`wal_autocheckpoint = ${pages}`);
  return connection !== undefined;
}

/** A passive checkpoint on this connection (never waits for readers or writers); false on PostgreSQL. */
export function checkpointSqlite(db: Db): boolean {
  const connection = sqliteConnections.get(db);
  connection?.sqlite.pragma('wal_checkpoint(PASSIVE)');
  return connection !== undefined;
}

/**
 * A statement run within write turns: `begin` takes the turn and `commit`/`rollback` gives it back; a
 * write statement outside a transaction takes it for its own run. Reads never take it (WAL readers do
 * not wait for the writer).
 */
function withTurns(
  statement: SQLite.Statement,
  text: string,
  turns: WriteTurns,
  state: { inTransaction: boolean },
): SQLite.Statement {
  if (text === 'begin immediate') {
    const run = (...args: unknown[]) => {
      turns.take();
      try {
        const result = statement.run(...args);
        state.inTransaction = true;
        return result;
      } catch (error) {
        turns.release();
        throw error;
      }
    };
    return { reader: false, run } as unknown as SQLite.Statement;
  }
  if (text === 'commit' || text === 'rollback') {
    const run = (...args: unknown[]) => {
      try {
        return statement.run(...args);
      } finally {
        // A failed commit leaves the transaction open: the rollback that follows gives the turn back.
        if (text === 'rollback' || !statement.database.inTransaction) {
          state.inTransaction = false;
          turns.release();
        }
      }
    };
    return { reader: false, run } as unknown as SQLite.Statement;
  }
  if (statement.readonly) return statement;
  const alone =
    <A extends unknown[], R>(fn: (...a: A) => R) =>
    (...args: A): R => {
      if (state.inTransaction) return fn.apply(statement, args);
      turns.take();
      try {
        return fn.apply(statement, args);
      } finally {
        turns.release();
      }
    };
  return {
    reader: statement.reader,
    run: alone(statement.run),
    all: alone(statement.all),
    // Iterated statements are reads (Kysely streams only selects).
    iterate: statement.iterate.bind(statement),
  } as unknown as SQLite.Statement;
}

/**
 * What a write that lost a race with another request's commit fails with, on either engine: a row
 * it refers to was deleted meanwhile (a foreign key), or PostgreSQL chose it as the victim of a
 * deadlock or a serialization failure. Its transaction rolled back whole, so nothing was kept.
 */
export function isLostRace(error: unknown): 'reference_gone' | 'retry' | undefined {
  const code = (error as { code?: string } | undefined)?.code;
  if (code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY') return 'reference_gone';
  if (code === '40P01' || code === '40001') return 'retry';
  return undefined;
}

/** True when SQLite could not take its write lock within the busy timeout (another process holds it). */
export function isDatabaseBusy(error: unknown): boolean {
  const code = (error as { code?: string } | undefined)?.code;
  return code === 'SQLITE_BUSY' || code === 'SQLITE_BUSY_SNAPSHOT' || code === 'SQLITE_LOCKED';
}

/** True when a database error is a unique-constraint violation, on either engine. */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string; message?: string };
  return e?.code === '23505' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
