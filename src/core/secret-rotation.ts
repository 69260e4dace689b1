import { sql, type Kysely } from 'kysely';
import type { Db } from './db/connect.ts';
import type { Keyring } from './keyring.ts';

/** Tables named at run time by the feature that owns them: no static schema to check against. */
// biome-ignore lint/suspicious/noExplicitAny: dynamic table and column names
type AnyDb = Kysely<any>;

/**
 * The generic half of `tessera rotate-secrets` (decision 0013): each feature names its own sealed
 * columns and keyed-hash columns (it owns the tables) and calls these.
 */

/** A column holding `keys.encrypt` output; `key` names the columns that identify a row. */
export interface SealedColumn {
  table: string;
  key: readonly string[];
  column: string;
}

export interface ResealCount {
  table: string;
  column: string;
  /** Re-encrypted under the current key by this run */
  resealed: number;
  /** Already under the current key */
  current: number;
  /** Opened by no held key (left as they are) */
  unreadable: number;
}

/**
 * Re-encrypts every value of a sealed column that is not under the current key, in batches, each row
 * by compare-and-set (a value a serving process changed meanwhile is left to it, already current).
 * Idempotent: a second run finds nothing to do. Never logs or returns a secret.
 */
export async function resealColumn(db: Db, keys: Keyring, spec: SealedColumn, batch = 200): Promise<ResealCount> {
  const anyDb = db as unknown as AnyDb;
  const prefix = `v2.${keys.keyId}.`;
  const count: ResealCount = { table: spec.table, column: spec.column, resealed: 0, current: 0, unreadable: 0 };
  const total = await anyDb
    .selectFrom(spec.table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where(spec.column, 'is not', null)
    .executeTakeFirst();
  // Unreadable values stay behind: skipped by offset (the order is stable, and they keep their place).
  let skip = 0;
  for (;;) {
    let query = anyDb
      .selectFrom(spec.table)
      .select([...spec.key, spec.column])
      .where(spec.column, 'is not', null)
      .where(sql`substr(${sql.ref(spec.column)}, 1, ${prefix.length})`, '<>', prefix);
    for (const k of spec.key) query = query.orderBy(k);
    const rows = await query.limit(batch).offset(skip).execute();
    for (const row of rows) {
      const sealed = row[spec.column] as string;
      let plaintext: string;
      try {
        plaintext = keys.decrypt(sealed);
      } catch {
        count.unreadable += 1;
        skip += 1;
        continue;
      }
      let update = anyDb
        .updateTable(spec.table)
        .set({ [spec.column]: keys.encrypt(plaintext) })
        .where(spec.column, '=', sealed);
      for (const k of spec.key) update = update.where(k, '=', row[k]);
      const result = await update.executeTakeFirst();
      if (Number(result.numUpdatedRows) > 0) count.resealed += 1;
    }
    if (rows.length < batch) break;
  }
  count.current = Number(total?.n ?? 0) - count.resealed - count.unreadable;
  return count;
}

/** A column holding a keyed hash (`keys.hash`) with its key id beside it in `hash_key_id` (migration 0043). */
export interface HashedColumn {
  table: string;
  column: string;
  /** Which rows still matter (live credentials): a filter on the table's own columns. */
  live?: (now: number) => ReturnType<typeof sql<boolean>>;
}

export interface HashCount {
  table: string;
  column: string;
  /** Live rows whose hash was made under a key other than the current one: they stop working when it is dropped */
  previousKey: number;
  /** Live rows under the current key */
  current: number;
}

/**
 * Counts a hash column's live rows by key. Rows from before key ids were recorded (null) were made
 * under `legacyKeyId`, the key the database's verifier named before this rotation: they are marked so.
 */
export async function countHashes(
  db: Db,
  keys: Keyring,
  spec: HashedColumn,
  legacyKeyId: string,
  now: number,
): Promise<HashCount> {
  const anyDb = db as unknown as AnyDb;
  await anyDb
    .updateTable(spec.table)
    .set({ hash_key_id: legacyKeyId })
    .where('hash_key_id', 'is', null)
    .where(spec.column, 'is not', null)
    .execute();
  const rows = await anyDb
    .selectFrom(spec.table)
    .select((eb) => [
      eb.fn.countAll<number>().as('n'),
      eb.fn.sum<number>(sql`case when hash_key_id = ${keys.keyId} then 1 else 0 end`).as('current'),
    ])
    .where(spec.column, 'is not', null)
    .$if(spec.live !== undefined, (q) => q.where(spec.live!(now)))
    .executeTakeFirst();
  const current = Number(rows?.current ?? 0);
  return { table: spec.table, column: spec.column, current, previousKey: Number(rows?.n ?? 0) - current };
}

export interface RotationReport {
  sealed: ResealCount[];
  hashes: HashCount[];
}

/** One feature's part of `tessera rotate-secrets`: its sealed columns re-encrypted, its hash columns counted. */
export async function rotateColumns(
  db: Db,
  keys: Keyring,
  columns: { sealed?: readonly SealedColumn[]; hashed?: readonly HashedColumn[] },
  legacyKeyId: string,
  now: number,
): Promise<RotationReport> {
  const report: RotationReport = { sealed: [], hashes: [] };
  for (const spec of columns.sealed ?? []) report.sealed.push(await resealColumn(db, keys, spec));
  for (const spec of columns.hashed ?? []) report.hashes.push(await countHashes(db, keys, spec, legacyKeyId, now));
  return report;
}
