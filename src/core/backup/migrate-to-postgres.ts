import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import type Pg from 'pg';
import type { Config } from '../../config.ts';
import { connectDb } from '../db/connect.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { migrations as knownMigrations } from '../db/migrations/index.ts';
import { createBlobStore } from '../storage/index.ts';
import { createTempFiles } from '../temp.ts';
import { digestFile, listBlobKeys, type Digest } from './files.ts';
import { BackupError } from './manifest.ts';
import { appliedMigrations, openSqlite, quoteIdent, sqliteTables } from './sqlite-file.ts';

const require = createRequire(import.meta.url);

type SourceConfig = Pick<Config, 'dataDir' | 'database' | 'storage' | 'databaseTimeouts'>;

/**
 * The search index is derived from the assets (a tsvector on PostgreSQL, FTS5 on SQLite): it is not
 * copied but rebuilt on the target (the caller's `rebuildSearchIndex`), like the indexer rebuilds it.
 */
export const DERIVED_TABLES = new Set([
  'search_docs',
  'search_doc_templates',
  'search_doc_facets',
  'search_doc_sorts',
  'search_index_state',
]);
/** Kept by the migrator on each side; the target's is made by migrating it. */
const MIGRATOR_TABLES = new Set(['kysely_migration', 'kysely_migration_lock']);

export interface MigrationReport {
  ok: boolean;
  text: string;
  tables: { table: string; source: number; target: number; sourceSum: string; targetSum: string }[];
  blobs: { key: string; sha256: string; target: string | null }[];
}

export interface MigrateOptions {
  /** The PostgreSQL database to fill: new and empty. */
  targetUrl: string;
  /** Where the blobs go; undefined = they stay in the source's local folder (verified there). */
  targetStorage: Config['storage'] | undefined;
  /** Rebuilds the search index on the target once the rows are in (wired by the CLI: features/search). */
  rebuildSearchIndex?: () => Promise<void>;
  /** Progress lines. */
  log?: (line: string) => void;
}

interface Column {
  name: string;
  type: string;
}

/**
 * `tessera migrate-to-postgres`: moves an embedded installation (SQLite and local blobs) to
 * PostgreSQL (and, with a target store, to S3 or another folder).
 *
 * 1. The source is snapshotted (`VACUUM INTO`, one consistent moment) and must be at this version's
 *    schema; the target must be an empty database; it is migrated to the same schema.
 * 2. Every table's rows are copied in foreign-key order, in batches, all in one transaction (the
 *    target's own triggers off meanwhile, so no revision bump or event fan-out row is made twice).
 *    The two engines keep the same column types (text, integer, bigint epoch milliseconds, JSON as
 *    text, booleans as 0/1, one double column), so values go across as they are.
 * 3. Every blob is copied to the target store.
 * 4. Verification: per table the row count and an order-independent checksum of every row's values
 *    read back from the target; per blob the SHA-256 of the bytes read back from the target store.
 */
export async function migrateToPostgres(source: SourceConfig, options: MigrateOptions): Promise<MigrationReport> {
  const log = options.log ?? (() => {});
  if (source.database.kind !== 'sqlite' || source.database.file === ':memory:')
    throw new BackupError(
      'tessera migrate-to-postgres moves an embedded installation: run it with the SQLite settings (unset DATABASE_URL, or DATABASE_URL=sqlite:…) and give the target with --to',
    );
  if (source.storage.kind !== 'local')
    throw new BackupError(
      'the source installation keeps its blobs in S3 already: run with its local settings (TESSERA_STORAGE unset or file:…)',
    );
  if (!existsSync(source.database.file)) throw new BackupError(`there is no database at ${source.database.file}`);
  const sourceBlobs = source.storage.dir;

  // 1. A consistent snapshot of the source.
  const temp = createTempFiles(source.dataDir);
  const snapshotDir = await temp.mkdtemp('migrate-');
  const snapshotFile = join(snapshotDir, 'source.sqlite');
  const live = openSqlite(source.database.file);
  try {
    live.prepare('vacuum into ?').run(snapshotFile);
  } finally {
    live.close();
  }
  const sqlite = openSqlite(snapshotFile);
  sqlite.defaultSafeIntegers(true);
  const pg = require('pg') as typeof Pg;
  const client = new pg.Client({ connectionString: options.targetUrl, connectionTimeoutMillis: 10_000 });
  try {
    const applied = appliedMigrations(sqlite);
    const known = Object.keys(knownMigrations);
    const behind = known.filter((name) => !applied.includes(name));
    const ahead = applied.filter((name) => !known.includes(name));
    if (ahead.length > 0)
      throw new BackupError(
        `the source database was migrated by a newer Tessera (${ahead.join(', ')}); use that version`,
      );
    if (behind.length > 0)
      throw new BackupError(
        `the source database is not at this version's schema (${behind.length} migration(s) to run): run tessera migrate with its settings first`,
      );

    try {
      await client.connect();
    } catch (error) {
      throw new BackupError(`cannot connect to --to: ${(error as Error).message}`);
    }
    await client.query('set statement_timeout = 0');
    const existing = await client.query<{ n: string }>(
      `select count(*)::text as n from information_schema.tables where table_schema = current_schema()`,
    );
    if (Number(existing.rows[0]!.n) > 0)
      throw new BackupError(
        `the target database already has ${existing.rows[0]!.n} table(s); give a new, empty database (createdb …)`,
      );
    log('Migrating the target database to the current schema…');
    const target = connectDb({ kind: 'postgres', url: options.targetUrl }, { poolSize: 1 });
    try {
      await migrateToLatest(target.db);
    } finally {
      await target.close();
    }

    // 2. Rows.
    const targetTables = (
      await client.query<{ table_name: string }>(
        `select table_name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE' order by table_name`,
      )
    ).rows
      .map((r) => r.table_name)
      .filter((t) => !MIGRATOR_TABLES.has(t));
    const sourceTables = new Set(sqliteTables(sqlite));
    const lacking = targetTables.filter((t) => !DERIVED_TABLES.has(t) && !sourceTables.has(t));
    if (lacking.length > 0) throw new BackupError(`the source has no table ${lacking.join(', ')}`);
    const copied = targetTables.filter((t) => !DERIVED_TABLES.has(t));
    const columns = await targetColumns(client, copied);
    const { order, selfRefs } = await dependencyOrder(client, copied);

    await client.query('begin');
    try {
      for (const table of copied) await client.query(`alter table ${quoteIdent(table)} disable trigger user`);
      // Rows the migrations seeded (counters, defaults) give way to the source's.
      for (const table of [...order].reverse()) await client.query(`delete from ${quoteIdent(table)}`);
      for (const table of order) {
        const n = await copyTable(sqlite, client, table, columns.get(table)!, selfRefs.get(table) ?? []);
        log(`  ${table}: ${n} row(s)`);
      }
      for (const table of copied) await client.query(`alter table ${quoteIdent(table)} enable trigger user`);
      await client.query('commit');
    } catch (error) {
      await client.query('rollback').catch(() => {});
      throw error;
    }
    if (options.rebuildSearchIndex) {
      log('Rebuilding the search index on the target…');
      await options.rebuildSearchIndex();
    }

    // 3. Blobs.
    const keys = await listBlobKeys(sourceBlobs);
    const store = options.targetStorage ? createBlobStore(options.targetStorage, () => temp.mkdtemp('s3-')) : undefined;
    const blobs: MigrationReport['blobs'] = [];
    let bytes = 0;
    const readBack = options.targetStorage
      ? createBlobStore(options.targetStorage, () => temp.mkdtemp('s3-'))
      : createBlobStore({ kind: 'local', dir: sourceBlobs });
    log(`Copying ${keys.length} blob(s)${store ? '' : ' (none: they stay in the local folder)'}…`);
    for (const key of keys) {
      const digest: Digest = await digestFile(join(sourceBlobs, key));
      bytes += digest.size;
      if (store) await store.put(key, createReadStream(join(sourceBlobs, key)));
      blobs.push({ key, sha256: digest.sha256, target: await readSha(readBack, key) });
    }

    // 4. Verification.
    const tables: MigrationReport['tables'] = [];
    for (const table of copied) {
      const cols = columns.get(table)!;
      const a = sourceChecksum(sqlite, table, cols);
      const b = await targetChecksum(client, table, cols);
      tables.push({ table, source: a.count, target: b.count, sourceSum: a.sum, targetSum: b.sum });
    }
    const referenced = sqlite
      .prepare(`select id, blob_key from assets where blob_key is not null and content_state = 'available'`)
      .all() as { id: string; blob_key: string }[];
    const blobKeys = new Set(keys);
    const unreferenced = referenced.filter((r) => !blobKeys.has(r.blob_key));

    const lines: string[] = [];
    let ok = true;
    lines.push(`Moved to ${redact(options.targetUrl)}:`);
    for (const t of tables) {
      const same = t.source === t.target && t.sourceSum === t.targetSum;
      if (!same) ok = false;
      lines.push(
        `  ${same ? 'ok      ' : 'MISMATCH'} ${t.table}: ${t.source} row(s) → ${t.target}${same ? `, checksum ${t.sourceSum.slice(0, 16)}` : `, checksums ${t.sourceSum.slice(0, 16)} / ${t.targetSum.slice(0, 16)}`}`,
      );
    }
    for (const t of targetTables.filter((t) => DERIVED_TABLES.has(t)))
      lines.push(`  rebuilt  ${t}: the search index, made again from the assets`);
    const skipped = [...sourceTables].filter((t) => !targetTables.includes(t) && !MIGRATOR_TABLES.has(t));
    if (skipped.length > 0) lines.push(`  (SQLite's own full-text tables not moved: ${skipped.join(', ')})`);
    const bad = blobs.filter((b) => b.target !== b.sha256);
    for (const b of bad) {
      ok = false;
      lines.push(
        `  MISMATCH blob ${b.key}: ${b.target === null ? 'missing from the target' : `SHA-256 ${b.target}, source ${b.sha256}`}`,
      );
    }
    for (const r of unreferenced) {
      ok = false;
      lines.push(`  MISSING  blob ${r.blob_key} of asset ${r.id}: not in the source store`);
    }
    lines.push(
      `  blobs: ${blobs.length - bad.length} of ${blobs.length} (${bytes} bytes) read back from ${describeStore(options.targetStorage, sourceBlobs)} with the same SHA-256`,
    );
    lines.push(
      ok
        ? 'Every record and every blob verified. Start Tessera with DATABASE_URL set to the target' +
            (options.targetStorage ? ', TESSERA_STORAGE to the target store' : '') +
            ' and the same secret key (TESSERA_SECRET_KEY, or the secret.key of this data folder).'
        : 'The target does NOT match the source (MISMATCH / MISSING above); do not switch to it.',
    );
    return { ok, text: lines.join('\n'), tables, blobs };
  } finally {
    sqlite.close();
    await client.end().catch(() => {});
    await rm(snapshotDir, { recursive: true, force: true });
    await temp.close().catch(() => {});
  }
}

function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'the target';
  }
}

function describeStore(storage: Config['storage'] | undefined, local: string): string {
  if (!storage) return local;
  return storage.kind === 's3' ? `s3://${storage.bucket}/${storage.prefix}` : storage.dir;
}

async function readSha(store: ReturnType<typeof createBlobStore>, key: string): Promise<string | null> {
  const body = await store.get(key);
  if (!body) return null;
  const hash = createHash('sha256');
  for await (const chunk of body) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

async function targetColumns(client: Pg.Client, tables: string[]): Promise<Map<string, Column[]>> {
  const { rows } = await client.query<{ table_name: string; column_name: string; data_type: string }>(
    `select table_name, column_name, data_type from information_schema.columns
     where table_schema = current_schema() and table_name = any($1) and is_generated = 'NEVER'
     order by table_name, ordinal_position`,
    [tables],
  );
  const out = new Map<string, Column[]>();
  for (const r of rows)
    out.set(r.table_name, [...(out.get(r.table_name) ?? []), { name: r.column_name, type: r.data_type }]);
  return out;
}

/** Tables parents first (by the target's foreign keys), and each table's foreign keys to itself. */
async function dependencyOrder(
  client: Pg.Client,
  tables: string[],
): Promise<{ order: string[]; selfRefs: Map<string, { column: string; references: string }[]> }> {
  const { rows } = await client.query<{ child: string; parent: string; columns: string[]; refs: string[] }>(
    `select c.conrelid::regclass::text as child, c.confrelid::regclass::text as parent,
            array(select a.attname::text from unnest(c.conkey) k join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k) as columns,
            array(select a.attname::text from unnest(c.confkey) k join pg_attribute a on a.attrelid = c.confrelid and a.attnum = k) as refs
     from pg_constraint c join pg_namespace n on n.oid = c.connamespace
     where c.contype = 'f' and n.nspname = current_schema()`,
  );
  const strip = (name: string) => name.replace(/^"|"$/g, '');
  const parents = new Map<string, Set<string>>(tables.map((t) => [t, new Set()]));
  const selfRefs = new Map<string, { column: string; references: string }[]>();
  for (const r of rows) {
    const child = strip(r.child);
    const parent = strip(r.parent);
    if (!parents.has(child)) continue;
    if (child === parent) {
      if (r.columns.length !== 1) throw new BackupError(`${child} has a composite foreign key to itself`);
      selfRefs.set(child, [...(selfRefs.get(child) ?? []), { column: r.columns[0]!, references: r.refs[0]! }]);
    } else if (parents.has(parent)) {
      parents.get(child)!.add(parent);
    }
  }
  const order: string[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (t: string) => {
    if (state.get(t) === 'done') return;
    if (state.get(t) === 'visiting') throw new BackupError(`the foreign keys around ${t} form a cycle`);
    state.set(t, 'visiting');
    for (const p of [...parents.get(t)!].sort()) visit(p);
    state.set(t, 'done');
    order.push(t);
  };
  for (const t of [...tables].sort()) visit(t);
  return { order, selfRefs };
}

/** A value as PostgreSQL is sent it: SQLite's 64-bit integers as exact decimal strings. */
function toPg(value: unknown, table: string, column: Column): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') return value.toString();
  if (Buffer.isBuffer(value)) {
    if (column.type === 'bytea') return value;
    throw new BackupError(`${table}.${column.name} holds binary data where PostgreSQL has ${column.type}`);
  }
  return value;
}

const BATCH_PARAMETERS = 30_000;

async function copyTable(
  sqlite: ReturnType<typeof openSqlite>,
  client: Pg.Client,
  table: string,
  columns: Column[],
  selfRefs: { column: string; references: string }[],
): Promise<number> {
  const names = columns.map((c) => c.name);
  const sourceColumns = new Set(
    (sqlite.prepare(`select name from pragma_table_info(?)`).all(table) as { name: string }[]).map((r) => r.name),
  );
  const absent = names.filter((n) => !sourceColumns.has(n));
  if (absent.length > 0) throw new BackupError(`the source's ${table} has no column ${absent.join(', ')}`);
  const select = sqlite.prepare(`select ${names.map(quoteIdent).join(', ')} from ${quoteIdent(table)}`).raw(true);
  let rows: Iterable<unknown[]> = select.iterate() as Iterable<unknown[]>;
  if (selfRefs.length > 0) rows = parentsFirst([...rows], names, selfRefs);
  const perBatch = Math.max(1, Math.min(1000, Math.floor(BATCH_PARAMETERS / names.length)));
  const insertHead = `insert into ${quoteIdent(table)} (${names.map(quoteIdent).join(', ')}) values `;
  let batch: unknown[][] = [];
  let count = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    const params: unknown[] = [];
    const tuples = batch.map((row) => {
      const marks = row.map((value, i) => {
        params.push(toPg(value, table, columns[i]!));
        return `$${params.length}`;
      });
      return `(${marks.join(', ')})`;
    });
    await client.query(insertHead + tuples.join(', '), params);
    count += batch.length;
    batch = [];
  };
  for (const row of rows) {
    batch.push(row);
    if (batch.length >= perBatch) await flush();
  }
  await flush();
  return count;
}

/** Rows of a table referring to itself (a parent attribute, say), each after the row it names. */
function parentsFirst(
  rows: unknown[][],
  names: string[],
  selfRefs: { column: string; references: string }[],
): unknown[][] {
  const refs = selfRefs.map((r) => ({ from: names.indexOf(r.column), to: names.indexOf(r.references) }));
  const present = refs.map((r) => new Set(rows.map((row) => String(row[r.to]))));
  const placed = refs.map(() => new Set<string>());
  const out: unknown[][] = [];
  let pending = rows;
  while (pending.length > 0) {
    const next: unknown[][] = [];
    for (const row of pending) {
      const ready = refs.every((r, i) => {
        const v = row[r.from];
        return v === null || !present[i]!.has(String(v)) || placed[i]!.has(String(v));
      });
      if (ready) {
        out.push(row);
        for (const [i, r] of refs.entries()) placed[i]!.add(String(row[r.to]));
      } else {
        next.push(row);
      }
    }
    if (next.length === pending.length) return [...out, ...next]; // a cycle in the data: PostgreSQL will say
    pending = next;
  }
  return out;
}

/**
 * One row's canonical text: by the target column's type, numbers as their decimal value (a double
 * as JavaScript prints it), text as text, null as null; the same on both sides.
 */
function canonical(values: unknown[], columns: Column[]): string {
  return JSON.stringify(
    values.map((v, i) => {
      if (v === null || v === undefined) return null;
      const type = columns[i]!.type;
      if (type === 'double precision' || type === 'real' || type === 'numeric') return `n:${String(Number(v))}`;
      if (type === 'bigint' || type === 'integer' || type === 'smallint') return `n:${String(v)}`;
      if (Buffer.isBuffer(v)) return `b:${v.toString('hex')}`;
      return `s:${String(v)}`;
    }),
  );
}

const MOD = 1n << 256n;

/** Rows and the sum (mod 2^256) of every row's SHA-256: independent of row order and collation. */
class Checksum {
  count = 0;
  private total = 0n;
  add(text: string) {
    this.count += 1;
    this.total = (this.total + BigInt(`0x${createHash('sha256').update(text).digest('hex')}`)) % MOD;
  }
  get sum(): string {
    return this.total.toString(16).padStart(64, '0');
  }
}

function sourceChecksum(sqlite: ReturnType<typeof openSqlite>, table: string, columns: Column[]) {
  const sum = new Checksum();
  const select = sqlite
    .prepare(`select ${columns.map((c) => quoteIdent(c.name)).join(', ')} from ${quoteIdent(table)}`)
    .raw(true);
  for (const row of select.iterate() as Iterable<unknown[]>) sum.add(canonical(row, columns));
  return { count: sum.count, sum: sum.sum };
}

async function targetChecksum(client: Pg.Client, table: string, columns: Column[]) {
  const sum = new Checksum();
  // Every value as PostgreSQL prints it (no parsing into JavaScript numbers, which would round bigints).
  const { rows } = await client.query<unknown[]>({
    text: `select ${columns.map((c) => quoteIdent(c.name)).join(', ')} from ${quoteIdent(table)}`,
    rowMode: 'array',
    types: { getTypeParser: () => (value: string) => value },
  } as Pg.QueryConfig);
  for (const row of rows) sum.add(canonical(row, columns));
  return { count: sum.count, sum: sum.sum };
}
