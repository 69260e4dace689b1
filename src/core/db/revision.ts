import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type QueryCompiler,
  type TransactionSettings,
} from 'kysely';
import type pg from 'pg';
import { DependencyUnavailable, isDatabaseOutage } from '../outage.ts';

/**
 * The identity revision: one counter in the database (`tessera_revision`, migration 0012) that
 * triggers bump, at commit, whenever a row that can change who a caller is or what they may do
 * changes (users, roles, groups, memberships, templates and grants, sessions, API keys, signing
 * keys, OAuth clients; see IDENTITY_TABLES). Caches of anything derived only from those tables
 * (resolved principals, permission decisions) remember the local `generation` they were built at
 * and are stale as soon as it moves. It moves:
 * - on this instance, before the writing call returns: the driver below notices a committed write
 *   to an identity table and re-reads the counter on the same connection;
 * - on other instances within POLL_MS: every instance polls the counters (one small read of a
 *   handful of rows) on PostgreSQL over a connection of its own, so a poll never queues for a pooled
 *   connection behind busy requests. There is no LISTEN/NOTIFY (migration 0064 removed it): a
 *   notifying commit takes a database-wide lock held across its WAL flush, which serialized every
 *   asset write of every process (decision 0022).
 * When the counter cannot be read (database down, table missing) the generation moves on every
 * attempt: caches then miss rather than serve what can no longer be checked.
 *
 * A second counter, the content revision (migration 0017: rows id ≥ 2 of the same table), moves
 * whenever a row an asset view is derived from changes (CONTENT_TABLES). It has its own
 * `contentGeneration`, which moves when either revision may have changed, so asset writes never
 * flush the principal caches while asset views still go stale on identity changes (template
 * grants and names, groups, the organization's customer id).
 */
export const POLL_MS = 250;
/** Default of TESSERA_DB_FRESHNESS_MS: how long cached credentials may go unconfirmed by the database. */
export const FRESHNESS_MS = 1000;
/** A poll over the poll connection that takes this long ends that connection (it is reopened). */
const POLL_CONNECTION_TIMEOUT_MS = 5000;

/** Tables whose writes can change a principal or a permission decision (the triggers of 0012 cover these). */
export const IDENTITY_TABLES: ReadonlySet<string> = new Set([
  'organizations',
  'users',
  'roles',
  'groups',
  'user_groups',
  'security_templates',
  'security_template_grants',
  'auth_sessions',
  'api_keys',
  'auth_signing_keys',
  'oauth_clients',
  'tessera_revision',
]);

/**
 * Tables an asset view (features/assets/views/asset-views.ts) is derived from beyond the identity tables:
 * the asset rows, their templates, what templates grant per permission, and server_state (the
 * metadata definitions version the compiled metadata templates are checked against). The triggers
 * of 0017 cover these.
 */
export const CONTENT_TABLES: ReadonlySet<string> = new Set([
  'assets',
  'asset_security',
  'security_template_permissions',
  'server_state',
]);

/** Writes after which this instance re-reads both counters before the writing call returns. */
const TRACKED_TABLES: ReadonlySet<string> = new Set([...IDENTITY_TABLES, ...CONTENT_TABLES]);

// Row 1: the identity revision; rows 2…: stripes of the content revision (PostgreSQL spreads
// concurrent asset commits over them so they do not queue on one row lock).
const READ = CompiledQuery.raw('select id, value from tessera_revision order by id');
const WRITE_TARGET = /^\s*(?:insert\s+into|update|delete\s+from)\s+"?([A-Za-z_][\w]*)"?/i;

/** Whether a statement writes to a table in `tables` (cheap: reads are rejected on their first letter). */
export function writesTo(sqlText: string, tables: ReadonlySet<string>): boolean {
  const first = sqlText.charCodeAt(0) | 0x20;
  if (first === 0x73 /* s */) return false;
  const m = WRITE_TARGET.exec(sqlText);
  return m !== null && tables.has(m[1]!);
}

/** The table a statement writes to (insert, update, delete), or null for anything else. */
function writtenTable(sqlText: string): string | null {
  const first = sqlText.charCodeAt(0) | 0x20;
  if (first === 0x73 /* s */) return null;
  return WRITE_TARGET.exec(sqlText)?.[1] ?? null;
}

export interface RevisionFeed {
  /** Moves whenever the identity revision may have changed. Reading it starts the watcher. */
  readonly generation: number;
  /** Moves whenever the content revision or the identity revision may have changed. Reading it starts the watcher. */
  readonly contentGeneration: number;
  /**
   * Throws DependencyUnavailable when, on PostgreSQL, the database has not confirmed the counters
   * for longer than the freshness limit (a poll hangs or fails): caches then refuse rather than
   * serve what another process may have revoked. Costs no query: it reads what the poll recorded.
   */
  assertFresh(): void;
  /** Re-reads the counter now (tests; the watcher does this on its own). */
  check(): Promise<void>;
  close(): Promise<void>;
}

type Runner = (query: CompiledQuery) => Promise<{ rows: unknown[] }>;

class Feed implements RevisionFeed {
  private gen = 0;
  private contentGen = 0;
  private known: string | undefined;
  private knownContent: string | undefined;
  private started = false;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;
  private connection: pg.Client | undefined;
  private reconnect: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;
  /** Runs a query on a pooled connection (set once the Kysely instance exists). */
  run: Runner | undefined;
  /** Called after this process commits a write to a table (onCommittedWrite), in the writer's async context. */
  readonly writeListeners = new Map<string, Set<() => void>>();

  committed(tables: ReadonlySet<string>): void {
    for (const table of tables) for (const listener of this.writeListeners.get(table) ?? []) listener();
  }
  private readonly pgUrl: string | undefined;
  private readonly pollMs: number;

  private readonly database: string;
  private readonly freshnessMs: number;
  /** performance.now() of the last successful read of the counters. */
  private confirmedAt = 0;
  /** performance.now() at which the poll now in flight started. */
  private pollStartedAt: number | undefined;
  /** The last read failed. */
  private failing = false;
  /** The poll connection (PostgreSQL) is up: polls go over it, never queuing for a pooled connection behind busy requests. */
  private connectionReady = false;

  constructor(pgUrl: string | undefined, pollMs: number, database: string, freshnessMs = FRESHNESS_MS) {
    this.pgUrl = pgUrl;
    this.pollMs = pollMs;
    this.database = database;
    this.freshnessMs = freshnessMs;
    if (database !== ':memory:') {
      let set = siblings.get(database);
      if (!set) siblings.set(database, (set = new Set()));
      set.add(this);
    }
  }

  get generation(): number {
    if (!this.started) this.start();
    return this.gen;
  }

  get contentGeneration(): number {
    if (!this.started) this.start();
    return this.contentGen;
  }

  /**
   * Records counter values read anywhere (driver, poll); any change moves the generation(s).
   * `undefined`: unknown (unreadable), which always moves. Content views depend on both counters.
   */
  observe(identity: string | undefined, content: string | undefined): void {
    if (identity === undefined || identity !== this.known) {
      this.known = identity;
      this.gen += 1;
      this.contentGen += 1;
    }
    if (content === undefined || content !== this.knownContent) {
      this.knownContent = content;
      this.contentGen += 1;
    }
  }

  async readOn(run: Runner): Promise<void> {
    let identity: string | undefined;
    let content: string | undefined;
    try {
      const { rows } = await run(READ);
      const stripes: string[] = [];
      for (const row of rows as { id: number | string; value: number | string | bigint }[]) {
        if (Number(row.id) === 1) identity = String(row.value);
        else stripes.push(`${row.id}:${row.value}`);
      }
      // No content rows: migration 0017 not applied; treat as unknown so content caches miss.
      content = stripes.length > 0 ? stripes.join(',') : undefined;
    } catch {
      this.failing = true;
      this.observe(undefined, undefined);
      return;
    }
    this.failing = false;
    this.confirmedAt = performance.now();
    this.observe(identity, content);
    for (const sibling of siblings.get(this.database) ?? []) if (sibling !== this) sibling.observe(identity, content);
  }

  assertFresh(): void {
    // SQLite is a local file: a poll waits only for this process's own transaction, never a network.
    if (this.pgUrl === undefined || !this.started) return;
    const now = performance.now();
    if (now - this.confirmedAt <= this.freshnessMs) return;
    const hung = this.pollStartedAt !== undefined && now - this.pollStartedAt > this.freshnessMs;
    if (hung || this.failing)
      throw new DependencyUnavailable(
        'database',
        `The database has not answered for ${Math.round(now - this.confirmedAt)} ms; credentials cannot be checked`,
        { code: 'TESSERA_DB_UNCONFIRMED' },
      );
  }

  check(): Promise<void> {
    if (this.polling) return this.polling;
    const own = this.connectionReady ? this.connection : undefined;
    const run: Runner | undefined = own ? (q) => own.query(q.sql, q.parameters as unknown[]) : this.run;
    if (!run) return Promise.resolve();
    this.pollStartedAt = performance.now();
    // A poll connection hung with no reset would hold the poll for ever: it is ended and reopened.
    const timer = own ? setTimeout(() => dropConnection(own), POLL_CONNECTION_TIMEOUT_MS) : undefined;
    timer?.unref();
    this.polling = this.readOn(run).finally(() => {
      clearTimeout(timer);
      this.polling = undefined;
      this.pollStartedAt = undefined;
    });
    return this.polling;
  }

  private start(): void {
    this.started = true;
    if (this.closed) return;
    this.timer = setInterval(() => void this.check(), this.pollMs);
    this.timer.unref();
    void this.check();
    if (this.pgUrl) void this.connect();
  }

  /** PostgreSQL: opens the connection the polls go over (until it is up, they use the pool). */
  private async connect(): Promise<void> {
    if (this.closed) return;
    const { default: pgModule } = await import('pg');
    const client = new pgModule.Client({ connectionString: this.pgUrl });
    this.connection = client;
    const retry = () => {
      if (this.connection !== client) return;
      this.connection = undefined;
      this.connectionReady = false;
      void client.end().catch(() => {});
      if (this.closed) return;
      // Meanwhile the polls go over the pool; one check follows the reconnection.
      this.reconnect = setTimeout(() => void this.connect().then(() => this.check()), 1000);
      this.reconnect.unref();
    };
    client.on('error', retry);
    client.on('end', retry);
    try {
      await client.connect();
      if (this.connection === client) this.connectionReady = true;
      // The socket must not keep a finished process alive.
      (client as unknown as { connection?: { stream?: { unref?: () => void } } }).connection?.stream?.unref?.();
    } catch {
      retry();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    siblings.get(this.database)?.delete(this);
    if (siblings.get(this.database)?.size === 0) siblings.delete(this.database);
    clearInterval(this.timer);
    clearTimeout(this.reconnect);
    const connection = this.connection;
    this.connection = undefined;
    if (connection) await connection.end().catch(() => {});
    await this.polling;
  }
}

/** Ends a client's socket at once (client.end() would wait for a peer that does not answer). */
function dropConnection(client: pg.Client): void {
  (client as unknown as { connection?: { stream?: { destroy?: () => void } } }).connection?.stream?.destroy?.();
}

/** What a failed call to the database became: DependencyUnavailable when the database cannot answer. */
function asOutage(error: unknown): unknown {
  if (error instanceof DependencyUnavailable || !isDatabaseOutage(error)) return error;
  const message = (error as { message?: unknown }).message;
  return new DependencyUnavailable(
    'database',
    `The database is not answering${typeof message === 'string' && message ? `: ${message}` : ''}`,
    { cause: error },
  );
}

function guarded<T>(promise: Promise<T>): Promise<T> {
  return promise.catch((error: unknown) => {
    throw asOutage(error);
  });
}

// Keyed by the dialect's adapter, which every Kysely derived from one connectDb handle shares
// (transactions, withPlugin, withSchema).
const feeds = new WeakMap<object, Feed>();

interface HasExecutor {
  getExecutor(): { adapter: object };
}

/** The revision feed of a database handle made by connectDb (or any Kysely derived from one). */
export function revisionFeed(db: object): RevisionFeed {
  const feed = feeds.get((db as HasExecutor).getExecutor().adapter);
  if (!feed) throw new Error('This database handle was not made by connectDb');
  return feed;
}

/**
 * Calls `listener` each time this process commits a write to `table` through `db` (or any handle
 * derived from it): after the commit of the transaction that wrote it, or after the statement
 * outside a transaction, before the writing call returns and in the writer's async context (so
 * the listener sees the request the write belongs to). Returns the unsubscribe.
 */
export function onCommittedWrite(db: object, table: string, listener: () => void): () => void {
  const feed = feeds.get((db as HasExecutor).getExecutor().adapter);
  if (!feed) throw new Error('This database handle was not made by connectDb');
  let set = feed.writeListeners.get(table);
  if (!set) feed.writeListeners.set(table, (set = new Set()));
  set.add(listener);
  return () => set.delete(listener);
}

/**
 * Feeds of handles on the same database in this process (a second app instance in one process,
 * as tests and embedders make): a change one of them commits moves the others at once too.
 */
const siblings = new Map<string, Set<Feed>>();

/**
 * Wraps a dialect so that, after a write to an identity or content table commits (at once when
 * outside a transaction), the counters are re-read on the same connection before the caller sees
 * the result.
 */
export function trackRevisions(
  inner: Dialect,
  options: { database: string; pgUrl?: string; pollMs?: number; freshnessMs?: number },
): { dialect: Dialect; register(db: object): void } {
  const feed = new Feed(options.pgUrl, options.pollMs ?? POLL_MS, options.database, options.freshnessMs);
  const dialect: Dialect = {
    createAdapter: () => inner.createAdapter(),
    createQueryCompiler: () => inner.createQueryCompiler(),
    createIntrospector: (db) => inner.createIntrospector(db),
    createDriver: () => new TrackingDriver(inner.createDriver(), feed),
  };
  return {
    dialect,
    register(db) {
      feeds.set((db as HasExecutor).getExecutor().adapter, feed);
      const executor = db as { executeQuery(q: CompiledQuery): Promise<{ rows: unknown[] }> };
      feed.run = (q) => executor.executeQuery(q);
    },
  };
}

class TrackedConnection implements DatabaseConnection {
  inTransaction = false;
  wrote = false;
  /** Tables with write listeners written in the open transaction (onCommittedWrite). */
  written: Set<string> | null = null;
  readonly inner: DatabaseConnection;
  private readonly feed: Feed;

  constructor(inner: DatabaseConnection, feed: Feed) {
    this.inner = inner;
    this.feed = feed;
  }

  async executeQuery<R>(query: CompiledQuery): Promise<import('kysely').QueryResult<R>> {
    const result = await guarded(this.inner.executeQuery<R>(query));
    const table = writtenTable(query.sql);
    if (table === null) return result;
    const listened = this.feed.writeListeners.has(table);
    if (this.inTransaction) {
      if (TRACKED_TABLES.has(table)) this.wrote = true;
      if (listened) (this.written ??= new Set()).add(table);
    } else {
      if (TRACKED_TABLES.has(table)) await this.feed.readOn((q) => this.inner.executeQuery(q));
      if (listened) this.feed.committed(new Set([table]));
    }
    return result;
  }

  streamQuery<R>(query: CompiledQuery, chunkSize: number): AsyncIterableIterator<import('kysely').QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

class TrackingDriver implements Driver {
  private readonly inner: Driver;
  private readonly feed: Feed;

  constructor(inner: Driver, feed: Feed) {
    this.inner = inner;
    this.feed = feed;
  }

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return new TrackedConnection(await guarded(this.inner.acquireConnection()), this.feed);
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const c = connection as TrackedConnection;
    await guarded(this.inner.beginTransaction(c.inner, settings));
    c.inTransaction = true;
    c.wrote = false;
    c.written = null;
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const c = connection as TrackedConnection;
    await guarded(this.inner.commitTransaction(c.inner));
    c.inTransaction = false;
    if (c.wrote) {
      c.wrote = false;
      await this.feed.readOn((q) => c.inner.executeQuery(q));
    }
    if (c.written) {
      const written = c.written;
      c.written = null;
      this.feed.committed(written);
    }
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const c = connection as TrackedConnection;
    c.inTransaction = false;
    c.wrote = false;
    c.written = null;
    await guarded(this.inner.rollbackTransaction(c.inner));
  }

  async savepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await this.inner.savepoint!((connection as TrackedConnection).inner, name, compile);
  }

  async rollbackToSavepoint(
    connection: DatabaseConnection,
    name: string,
    compile: QueryCompiler['compileQuery'],
  ): Promise<void> {
    await this.inner.rollbackToSavepoint!((connection as TrackedConnection).inner, name, compile);
  }

  async releaseSavepoint(
    connection: DatabaseConnection,
    name: string,
    compile: QueryCompiler['compileQuery'],
  ): Promise<void> {
    await this.inner.releaseSavepoint!((connection as TrackedConnection).inner, name, compile);
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection((connection as TrackedConnection).inner);
  }

  async destroy(): Promise<void> {
    await this.feed.close();
    await this.inner.destroy();
  }
}
