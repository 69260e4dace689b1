import { sql } from 'kysely';
import type { Deps } from '../../../deps.ts';
import {
  MAX_TOTAL_BYTES,
  catchUpInBackground,
  loadMemoryIndex,
  loadedIndex,
  loadedIndexes,
  memoryIndexStats,
} from './search.memindex.ts';
import { readSnapshot, writeSnapshot } from './search.snapshot.ts';

/**
 * The embedded engine's in-memory index is loaded at start, in the background, by the processes
 * that answer searches (`serve`, `serve --no-workers`; never `worker`), so the first searches after
 * a start do not wait for it (docs/decisions/0011-search-index-at-start.md). Organizations go
 * largest first, one at a time, until the estimate of what is loaded reaches the memory cap.
 * Until an organization's index is loaded its searches take the SQL path (search.service.ts).
 */
export interface SearchIndexWarmup {
  cancelled: boolean;
  running: Promise<void> | null;
  /** Started in this process: its indexes are written as snapshots at close and every SNAPSHOT_EVERY_MS. */
  started: boolean;
  /** The periodic snapshot writer. */
  timer: NodeJS.Timeout | null;
  /** Snapshot writes under way (one writer at a time). */
  writing: Promise<void> | null;
}

export function createWarmupState(): SearchIndexWarmup {
  return { cancelled: false, running: null, started: false, timer: null, writing: null };
}

/**
 * Changed indexes are written as snapshots this often, so a crash (no snapshot at close) leaves
 * one at most this old, and the catch-up after it stays small.
 */
export const SNAPSHOT_EVERY_MS = 5 * 60_000;

/** Bytes per document the estimate uses (docs/search.md: 45.4 MiB for 1,000,000 documents). */
const BYTES_PER_DOC = 48;

/**
 * Reads the snapshots (one file read each, then a check against the database: about a second per
 * million assets), then — in the background — builds from SQLite the organizations that had no
 * usable snapshot and writes theirs. The promise settles when the snapshots are read: `serve`
 * listens after it, so the organizations with a snapshot answer from the index from the start.
 */
export async function startSearchIndexWarmup(deps: Deps): Promise<void> {
  if (deps.engine !== 'sqlite') return;
  const state = deps.runtime.search.warmup;
  if (state.running) return;
  state.cancelled = false;
  state.started = true;
  state.timer ??= setInterval(() => void writeSnapshots(deps, { changedOnly: true }), SNAPSHOT_EVERY_MS);
  state.timer.unref();
  deps.log.info('search index warm-up started');
  const started = performance.now();
  // One scan of the (org_id, deleted, current_version, doc_no) index.
  const { rows } = await sql<{
    org_id: string;
    n: number;
  }>`select org_id, count(*) as n from search_docs group by org_id order by n desc`.execute(deps.db);
  let budget = MAX_TOTAL_BYTES - memoryIndexStats(deps.db).reduce((n, s) => n + s.bytes, 0);
  const toBuild: { orgId: string; n: number }[] = [];
  for (const r of rows) {
    const estimate = Number(r.n) * BYTES_PER_DOC;
    if (estimate > budget) continue;
    const t0 = performance.now();
    const outcome = await readSnapshot(deps.db, deps.config.dataDir, r.org_id).catch((error: unknown) => {
      deps.log.warn({ err: error, orgId: r.org_id }, 'search index snapshot could not be read');
      return 'corrupt' as const;
    });
    if (outcome === 'loaded') {
      const bytes = loadedIndex(deps.db, r.org_id)?.bytes() ?? estimate;
      budget -= bytes;
      deps.log.info(
        { orgId: r.org_id, documents: Number(r.n), ms: Math.round(performance.now() - t0), bytes, from: 'snapshot' },
        'search index loaded',
      );
    } else {
      if (outcome !== 'missing') deps.log.info({ orgId: r.org_id, outcome }, 'search index snapshot not used');
      budget -= estimate;
      toBuild.push({ orgId: r.org_id, n: Number(r.n) });
    }
  }
  state.running = (async () => {
    // Snapshots far behind the database catch up first, in slices, while their searches take the
    // bounded path (search.bounded.ts); never inside a search.
    for (const r of rows) {
      if (state.cancelled) return;
      await catchUpInBackground(
        deps.db,
        r.org_id,
        () => deps.clock.now(),
        () => state.cancelled,
      );
    }
    let built = 0;
    for (const r of toBuild) {
      if (state.cancelled) return;
      const t0 = performance.now();
      try {
        await loadMemoryIndex(deps.db, r.orgId, { cancelled: () => state.cancelled });
      } catch (error) {
        if (state.cancelled) return;
        deps.log.warn({ err: error, orgId: r.orgId }, 'search index could not be loaded at start');
        continue;
      }
      const idx = loadedIndex(deps.db, r.orgId);
      built += 1;
      deps.log.info(
        {
          orgId: r.orgId,
          documents: r.n,
          ms: Math.round(performance.now() - t0),
          bytes: idx?.bytes(),
          from: 'database',
        },
        'search index loaded',
      );
      if (idx)
        await writeSnapshot(deps.db, deps.config.dataDir, idx).catch((error: unknown) =>
          deps.log.warn({ err: error, orgId: r.orgId }, 'search index snapshot could not be written'),
        );
    }
    deps.log.info(
      { organizations: rows.length, built, ms: Math.round(performance.now() - started) },
      'search index warm-up finished',
    );
  })()
    .catch((error: unknown) => {
      if (!state.cancelled) deps.log.warn({ err: error }, 'search index warm-up failed');
    })
    .finally(() => {
      state.running = null;
    });
}

/**
 * Writes a snapshot of every loaded index — or, with `changedOnly`, of those changed since their
 * last snapshot (the periodic writer) — in processes that ran the warm-up. One writer at a time.
 */
export async function writeSnapshots(deps: Deps, options: { changedOnly?: boolean } = {}): Promise<void> {
  const state = deps.runtime.search.warmup;
  if (deps.engine !== 'sqlite' || !state.started) return;
  while (state.writing) await state.writing;
  state.writing = (async () => {
    for (const idx of loadedIndexes(deps.db)) {
      if (options.changedOnly && idx.snapshotVersion === idx.version) continue;
      await writeSnapshot(deps.db, deps.config.dataDir, idx).catch((error: unknown) =>
        deps.log.warn({ err: error, orgId: idx.orgId }, 'search index snapshot could not be written'),
      );
    }
  })().finally(() => {
    state.writing = null;
  });
  await state.writing;
}

/** Ends the warm-up at its next slice and the periodic snapshots (deps.close()). */
export async function stopSearchIndexWarmup(state: SearchIndexWarmup): Promise<void> {
  state.cancelled = true;
  if (state.timer) clearInterval(state.timer);
  state.timer = null;
  await state.running;
}
