import { sql } from 'kysely';
import { isUniqueViolation, type DbOrTrx } from '../../../core/db/connect.ts';
import { eventDataSince } from '../../../core/events/index.ts';
import type { Deps } from '../../../deps.ts';
import { assetsForIndexing, existingAssetIds, type AssetToIndex } from '../../assets/index.ts';
import { buildDocuments } from './search.documents.ts';
import { removeDocuments, upsertDocuments } from './search-index.repo.ts';

/**
 * Keeps the index in step with the assets. Each pass looks at assets changed since the last pass
 * by their `updated_at` (every asset write sets it; minus a margin for transactions that committed
 * late) whose document was built from another version of the asset row (its `asset_version` against
 * the row's version, which every update moves: decision 0039), rebuilds those documents, and drops
 * documents of purged assets. A request that wrote assets runs it before its
 * answer, searches when this process's own writes or the time ask for it (search.freshness.ts),
 * collection writes first, and the background loop every 250 ms, so a change is searchable well
 * within a second of its commit without any coupling from assets to search.
 */
const MARGIN_MS = 5_000;
const BATCH = 500;
const WATERMARK = 'assets-watermark';

/** The pass under way and the one queued after it; one per Deps (deps.runtime.search.indexer). */
export interface IndexerState {
  running: Promise<number> | null;
  next: Promise<number> | null;
  /** The background thread's passes (src/background-thread.ts) when the workers run it there. */
  thread: { sync(): Promise<number> } | null;
  /** Asset writes this process has committed so far (a counter; search.freshness.ts moves it). */
  writes: number;
  /** `writes` at the latest asset write committed outside a request (or after its answer). */
  outsideWrites: number;
  /** The last pass that finished without error: when it started (performance.now()) and `writes` then. */
  lastPass: { startedAt: number; writes: number } | null;
  /** `writes` when the pass under way (in this thread) started. */
  runningFrom: number;
}

export function createIndexerState(): IndexerState {
  return { running: null, next: null, thread: null, writes: 0, outsideWrites: 0, lastPass: null, runningFrom: 0 };
}

/**
 * SQLite documents per write transaction: the whole batch in the calling thread; 100 on the
 * background thread, whose transactions hold the one write lock that requests wait for
 * (`docs` other than 100: bench/assets-create-profile.ts measures the commits' cost by size).
 */
let sqliteDocsPerTransaction = Number.POSITIVE_INFINITY;
export function indexInShortTransactions(docs = 100): void {
  sqliteDocsPerTransaction = docs;
}

async function readWatermark(deps: Deps): Promise<number> {
  const row = await deps.db
    .selectFrom('search_index_state')
    .select('value')
    .where('key', '=', WATERMARK)
    .executeTakeFirst();
  return row ? Number(row.value) : 0;
}

async function writeWatermark(deps: Deps, value: number): Promise<void> {
  const updated = await deps.db
    .updateTable('search_index_state')
    .set({ value: String(value) })
    .where('key', '=', WATERMARK)
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) === 0) {
    try {
      await deps.db
        .insertInto('search_index_state')
        .values({ key: WATERMARK, value: String(value) })
        .execute();
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
    }
  }
}

/**
 * Assets changed since `since` whose document is missing or was built from another version of the
 * row, in id order. By the row version, not by time: a second write in the millisecond of a
 * document's build has the same `updated_at`, but not the same version (decision 0039).
 */
async function changedAssetIds(deps: Deps, since: number): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    select a.id from assets a left join search_docs d on d.asset_id = a.id
    where a.updated_at >= ${since} and (d.doc_no is null or d.asset_version <> a.row_version)
    limit 50000`.execute(deps.db);
  return rows.map((r) => r.id).sort();
}

/** Advisory-lock namespace of "indexing asset X" (the second key is hashtext(asset id)). */
export const INDEX_LOCK = 0x7e55_1d0c;

/**
 * Rebuilds, inside `trx`, the documents of those of `ids` whose document is (still) missing or built
 * from another version of the asset row: the assets are read in the same transaction, so the
 * document written is never older than the asset committed, and the same read is the re-check
 * (another process may have just indexed them).
 */
async function rebuild(deps: Deps, trx: DbOrTrx, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  const assets = await assetsForIndexing(trx, ids);
  const docs = await trx
    .selectFrom('search_docs')
    .select(['asset_id', 'doc_no', 'asset_version'])
    .where('asset_id', 'in', [...ids])
    .execute();
  const known = new Map(docs.map((d) => [d.asset_id, { docNo: Number(d.doc_no), version: Number(d.asset_version) }]));
  const byOrg = new Map<string, AssetToIndex[]>();
  for (const a of assets) {
    if (known.get(a.id)?.version === Number(a.row_version)) continue;
    const group = byOrg.get(a.org_id);
    if (group) group.push(a);
    else byOrg.set(a.org_id, [a]);
  }
  const docNos = new Map([...known].map(([id, d]) => [id, d.docNo]));
  for (const group of byOrg.values()) {
    const built = await buildDocuments(deps, trx, group);
    await upsertDocuments(trx, deps.engine, built, deps.clock.now(), docNos);
  }
}

/**
 * PostgreSQL: a transaction of the indexer, committed without waiting for its WAL flush
 * (`synchronous_commit = off` for this transaction only). Its commit is visible to every session at
 * once, and its claims (advisory locks) are released at once, so a search of another process
 * waiting for assets this one is indexing waits for the work, not for an fsync (decision 0022). The
 * documents are derived data: a crash can lose only the last few hundred milliseconds of commits,
 * and WAL is a sequence, so a later durable commit (the watermark, any asset write) makes these
 * durable too; what is lost is still stale and the next pass rebuilds it.
 */
export function indexingTransaction<T>(deps: Deps, work: (trx: DbOrTrx) => Promise<T>): Promise<T> {
  return deps.db.transaction().execute(async (trx) => {
    await sql`set local synchronous_commit = off`.execute(trx);
    return work(trx);
  });
}

/**
 * PostgreSQL, where several processes index at once (each API process before its searches, each
 * worker in its loop). An asset is indexed by one process at a time: each batch's transaction
 * claims its assets with `pg_try_advisory_xact_lock` — never waiting; an asset another process is
 * indexing right now is skipped — then re-checks which are still stale (another process may have
 * just committed them) and rebuilds only those. Two processes therefore never write the same
 * document, never wait on each other's row locks, and never undo each other's batch with a
 * unique-key conflict. The skipped assets are then waited for (a blocking lock, in key order, held
 * for an instant) and re-checked, so a pass still returns only once every change committed before
 * it is searchable — usually finding that the other process indexed them already.
 */
async function reindexClaimed(deps: Deps, ids: readonly string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += BATCH) {
    const batch = ids.slice(i, i + BATCH);
    const skipped = await indexingTransaction(deps, async (trx) => {
      const { rows } = await sql<{ id: string; claimed: boolean }>`
        select id, pg_try_advisory_xact_lock(${INDEX_LOCK}, hashtext(id)) as claimed
        from unnest(${[...batch]}::text[]) as id order by id`.execute(trx);
      await rebuild(
        deps,
        trx,
        rows.filter((r) => r.claimed).map((r) => r.id),
      );
      return rows.filter((r) => !r.claimed).map((r) => r.id);
    });
    if (skipped.length === 0) continue;
    await indexingTransaction(deps, async (trx) => {
      // Blocking, in one order (by lock key) in every process, so two waiters never deadlock.
      await sql`
        select pg_advisory_xact_lock(${INDEX_LOCK}, k)
        from (select distinct hashtext(id) as k from unnest(${skipped}::text[]) as id order by k) s`.execute(trx);
      await rebuild(deps, trx, skipped);
    });
  }
}

async function reindex(deps: Deps, ids: readonly string[]): Promise<void> {
  if (deps.engine === 'postgres') return reindexClaimed(deps, ids);
  for (let i = 0; i < ids.length; i += BATCH) {
    const assets = await assetsForIndexing(deps.db, ids.slice(i, i + BATCH));
    const byOrg = new Map<string, AssetToIndex[]>();
    for (const a of assets) byOrg.set(a.org_id, [...(byOrg.get(a.org_id) ?? []), a]);
    for (const group of byOrg.values()) {
      const docs = await buildDocuments(deps, deps.db, group);
      for (let j = 0; j < docs.length; j += sqliteDocsPerTransaction) {
        const part = docs.slice(j, j + sqliteDocsPerTransaction);
        try {
          await deps.db.transaction().execute((trx) => upsertDocuments(trx, deps.engine, part, deps.clock.now()));
        } catch (error) {
          // Another process indexed the same asset at the same moment: the next pass settles it.
          if (!isUniqueViolation(error)) throw error;
        }
      }
    }
  }
}

/** Purged assets are announced by `asset.purged` events (published in the purge's transaction). */
async function removePurged(deps: Deps, since: number): Promise<void> {
  const events = await eventDataSince(deps.db, 'asset.purged', since);
  const ids = events
    .map((e) => (e as { asset?: { id?: string } }).asset?.id)
    .filter((id): id is string => typeof id === 'string');
  const gone: string[] = [];
  for (let i = 0; i < ids.length; i += BATCH) {
    const batch = ids.slice(i, i + BATCH);
    const alive = await existingAssetIds(deps.db, batch);
    gone.push(...batch.filter((id) => !alive.has(id)));
  }
  if (gone.length > 0) await deps.db.transaction().execute((trx) => removeDocuments(trx, deps.engine, gone));
}

/** Drops every document whose asset no longer exists (a full check; `tessera` maintenance, not the loop). */
export async function removeOrphanDocuments(deps: Deps): Promise<number> {
  const { rows } = await sql<{ asset_id: string }>`
    select d.asset_id from search_docs d where not exists (select 1 from assets a where a.id = d.asset_id)`.execute(
    deps.db,
  );
  if (rows.length > 0)
    await deps.db.transaction().execute((trx) =>
      removeDocuments(
        trx,
        deps.engine,
        rows.map((r) => r.asset_id),
      ),
    );
  return rows.length;
}

async function pass(deps: Deps): Promise<number> {
  const started = deps.clock.now();
  const watermark = await readWatermark(deps);
  const since = Math.max(0, watermark - MARGIN_MS);
  const ids = await changedAssetIds(deps, since);
  await reindex(deps, ids);
  await removePurged(deps, since);
  // Moving the watermark is a write: only when it has fallen a second behind.
  if (started - watermark >= 1000) await writeWatermark(deps, started);
  return ids.length;
}

/**
 * Brings the index up to date with every asset write committed before the call. Concurrent
 * callers share passes: one that arrives while a pass runs waits for the next one, which starts
 * after its own writes were committed.
 */
export function syncSearchIndex(deps: Deps): Promise<number> {
  const state = deps.runtime.search.indexer;
  // Every write committed before `begun` is seen by the pass's first read (the thread's pass starts after the call).
  const finished = (begun: { startedAt: number; writes: number }) => (n: number) => {
    if (!state.lastPass || state.lastPass.startedAt < begun.startedAt) state.lastPass = begun;
    return n;
  };
  if (state.thread) return state.thread.sync().then(finished({ startedAt: performance.now(), writes: state.writes }));
  if (state.next) return state.next;
  const run = (): Promise<number> => {
    const begun = { startedAt: performance.now(), writes: state.writes };
    const p = pass(deps)
      .then(finished(begun))
      .finally(() => {
        if (state.running === p) state.running = null;
      });
    state.running = p;
    state.runningFrom = begun.writes;
    return p;
  };
  if (!state.running) return run();
  state.next = state.running
    .catch(() => 0)
    .then(() => {
      state.next = null;
      return run();
    });
  return state.next;
}

/**
 * Passes of this Deps are asked of another thread (src/background-thread.ts) until the returned
 * function is called.
 */
export function delegateSearchIndexing(deps: Deps, sync: () => Promise<number>): () => void {
  const state = deps.runtime.search.indexer;
  const thread = { sync };
  state.thread = thread;
  return () => {
    if (state.thread === thread) state.thread = null;
  };
}

/** The background loop (started with the workers, in this thread or the background thread). */
export function startSearchIndexer(deps: Deps, intervalMs = 250): { stop(): Promise<void> } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = async () => {
    if (stopped) return;
    try {
      await syncSearchIndex(deps);
    } catch (error) {
      deps.log.warn({ err: error }, 'search indexer pass failed');
    }
    if (!stopped) timer = setTimeout(tick, intervalMs);
  };
  timer = setTimeout(tick, 0);
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await deps.runtime.search.indexer.running?.catch(() => {});
    },
  };
}
