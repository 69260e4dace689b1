import { sql } from 'kysely';
import type { Deps } from '../../../deps.ts';
import { MAX_TOTAL_BYTES, loadMemoryIndex, memoryIndexStats } from './search.memindex.ts';

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
}

export function createWarmupState(): SearchIndexWarmup {
  return { cancelled: false, running: null };
}

/** Bytes per document the estimate uses (docs/search.md: 45.4 MiB for 1,000,000 documents). */
const BYTES_PER_DOC = 48;

export function startSearchIndexWarmup(deps: Deps): void {
  if (deps.engine !== 'sqlite') return;
  const state = deps.runtime.search.warmup;
  if (state.running) return;
  state.cancelled = false;
  deps.log.info('search index warm-up started');
  state.running = (async () => {
    const started = performance.now();
    // One scan of the (org_id, deleted, current_version, doc_no) index.
    const { rows } = await sql<{
      org_id: string;
      n: number;
    }>`select org_id, count(*) as n from search_docs group by org_id order by n desc`.execute(deps.db);
    let budget = MAX_TOTAL_BYTES - memoryIndexStats(deps.db).reduce((n, s) => n + s.bytes, 0);
    let loaded = 0;
    for (const r of rows) {
      if (state.cancelled) return;
      const estimate = Number(r.n) * BYTES_PER_DOC;
      if (estimate > budget) continue;
      const t0 = performance.now();
      try {
        await loadMemoryIndex(deps.db, r.org_id, { cancelled: () => state.cancelled });
      } catch (error) {
        if (state.cancelled) return;
        deps.log.warn({ err: error, orgId: r.org_id }, 'search index could not be loaded at start');
        continue;
      }
      const stats = memoryIndexStats(deps.db).find((s) => s.orgId === r.org_id);
      budget -= stats?.bytes ?? estimate;
      loaded += 1;
      deps.log.info(
        { orgId: r.org_id, documents: Number(r.n), ms: Math.round(performance.now() - t0), bytes: stats?.bytes },
        'search index loaded',
      );
    }
    deps.log.info(
      { organizations: loaded, ms: Math.round(performance.now() - started) },
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

/** Ends the warm-up at its next slice (deps.close()). */
export async function stopSearchIndexWarmup(state: SearchIndexWarmup): Promise<void> {
  state.cancelled = true;
  await state.running;
}
