import { sql } from 'kysely';
import { isUniqueViolation } from '../../../core/db/connect.ts';
import { eventDataSince } from '../../../core/events/index.ts';
import type { Deps } from '../../../deps.ts';
import { assetsForIndexing, existingAssetIds, type AssetWithOrg } from '../../assets/index.ts';
import { buildDocuments } from './search.documents.ts';
import { removeDocuments, upsertDocuments } from './search-index.repo.ts';

/**
 * Keeps the index in step with the assets. A change is noticed by the asset's `updated_at`
 * (every asset write sets it): each pass looks at assets changed since the last pass (minus a
 * margin for transactions that committed late) whose index document differs, rebuilds those
 * documents, and drops documents of purged assets. Searches and collection writes call
 * `syncSearchIndex` first (one indexed query when nothing changed), and the background loop runs it every 250 ms, so a change
 * is searchable well within a second of its commit without any coupling from assets to search.
 */
const MARGIN_MS = 5_000;
const BATCH = 500;
const WATERMARK = 'assets-watermark';

/** The pass under way and the one queued after it; one per Deps (deps.runtime.search.indexer). */
export interface IndexerState {
  running: Promise<number> | null;
  next: Promise<number> | null;
}

export function createIndexerState(): IndexerState {
  return { running: null, next: null };
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

async function changedAssetIds(deps: Deps, since: number): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    select a.id from assets a left join search_docs d on d.asset_id = a.id
    where a.updated_at >= ${since}
      and (d.doc_no is null or d.updated_epoch <> a.updated_at or d.current_version <> a.is_current
           or d.deleted <> (case when a.deleted_at is null then 0 else 1 end))
    limit 50000`.execute(deps.db);
  return rows.map((r) => r.id);
}

async function reindex(deps: Deps, ids: readonly string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += BATCH) {
    const assets = await assetsForIndexing(deps.db, ids.slice(i, i + BATCH));
    const byOrg = new Map<string, AssetWithOrg[]>();
    for (const a of assets) byOrg.set(a.org_id, [...(byOrg.get(a.org_id) ?? []), a]);
    for (const group of byOrg.values()) {
      const docs = await buildDocuments(deps, deps.db, group);
      try {
        await deps.db.transaction().execute((trx) => upsertDocuments(trx, deps.engine, docs, deps.clock.now()));
      } catch (error) {
        // Another process indexed the same asset at the same moment: the next pass settles it.
        if (!isUniqueViolation(error)) throw error;
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
  if (state.next) return state.next;
  const run = (): Promise<number> => {
    const p = pass(deps).finally(() => {
      if (state.running === p) state.running = null;
    });
    state.running = p;
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

/** The background loop (started with the workers). */
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
