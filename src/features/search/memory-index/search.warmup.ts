import { sql } from 'kysely';
import type { Deps } from '../../../deps.ts';
import { MAX_TOTAL_BYTES, loadMemoryIndex, loadedIndex, loadedIndexes, memoryIndexStats } from './search.memindex.ts';
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
  /** Started in this process: its indexes are written as snapshots at close. */
  started: boolean;
}

export function createWarmupState(): SearchIndexWarmup {
  return { cancelled: false, running: null, started: false };
}

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

/** Writes a snapshot of every loaded index (at close, in processes that ran the warm-up). */
export async function writeSnapshots(deps: Deps): Promise<void> {
  if (deps.engine !== 'sqlite' || !deps.runtime.search.warmup.started) return;
  for (const idx of loadedIndexes(deps.db)) {
    await writeSnapshot(deps.db, deps.config.dataDir, idx).catch((error: unknown) =>
      deps.log.warn({ err: error, orgId: idx.orgId }, 'search index snapshot could not be written'),
    );
  }
}

/** Ends the warm-up at its next slice (deps.close()). */
export async function stopSearchIndexWarmup(state: SearchIndexWarmup): Promise<void> {
  state.cancelled = true;
  await state.running;
}
