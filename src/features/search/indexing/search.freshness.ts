import type { FastifyRequest } from 'fastify';
import { onCommittedWrite } from '../../../core/db/revision.ts';
import { currentRequest } from '../../../core/http/request-context.ts';
import type { Deps } from '../../../deps.ts';
import { syncSearchIndex, type IndexerState } from './search.indexer.ts';

/**
 * When a search needs an indexing pass first (decision 0027).
 *
 * Read-your-writes used to be bought by every search: each ran a pass first, so it waited for
 * whatever any process had changed since the last pass — on PostgreSQL under a mixed load, one to
 * two passes of ~50–100 ms each, most of a search's time. Now:
 * - **A request that commits an asset write is answered only after a pass that started after that
 *   commit** (`indexBeforeAnswer`, an onSend hook in app.ts): once a client holds the answer of
 *   its write, the write is searchable, on this process and — PostgreSQL's index being shared —
 *   on every other.
 * - **A search runs a pass first only when it may be needed** (`syncForSearch`): an asset write
 *   this process committed outside a request (a job, a service call) that no finished pass has
 *   seen, or no pass having started in the last FRESH_MS (writes of other processes made outside
 *   their requests, when no worker's loop indexes them). Otherwise it reads the index as it is.
 */
export const FRESH_MS = 250;

const written = new WeakMap<FastifyRequest, number>();
const answered = new WeakSet<FastifyRequest>();

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route's asset writes are indexed after its answer, not before (decision 0027's update):
     * bulk creation, whose answer would otherwise wait for the indexing of up to 1000 documents.
     * This process's next search indexes them first; other processes within FRESH_MS.
     */
    indexAfterAnswer?: boolean;
  }
}

/**
 * Counts this process's asset commits into `state` (once per Deps, by the search runtime). With
 * `beforeAnswer` (PostgreSQL, whose index every process shares) a request's writes are held for
 * its answer; otherwise (SQLite, or a route with `indexAfterAnswer`) every write is one the next
 * search of this process indexes first.
 */
export function watchAssetWrites(db: Deps['db'], state: IndexerState, beforeAnswer: boolean): () => void {
  return onCommittedWrite(db, 'assets', () => {
    state.writes += 1;
    const request = currentRequest();
    if (beforeAnswer && request && !answered.has(request) && request.routeOptions.config.indexAfterAnswer !== true)
      written.set(request, state.writes);
    else state.outsideWrites = state.writes;
  });
}

/**
 * Before a request's answer: when it committed an asset write that no pass has covered yet, a
 * promise that settles (never rejects) once the index covers it; otherwise `undefined`, and the
 * answer goes out at once, in the same tick (so the hook stays synchronous for every other request).
 */
export function indexBeforeAnswer(deps: Deps, request: FastifyRequest): Promise<void> | undefined {
  answered.add(request);
  const upTo = written.get(request);
  if (upTo === undefined) return undefined;
  written.delete(request);
  const state = deps.runtime.search.indexer;
  if (state.lastPass && state.lastPass.writes >= upTo) return undefined;
  return coverWrite(deps, state, upTo);
}

async function coverWrite(deps: Deps, state: IndexerState, upTo: number): Promise<void> {
  try {
    // The pass under way covers the write when it started after its commit; else the next one.
    if (state.running && state.runningFrom >= upTo) await state.running;
    else await syncSearchIndex(deps);
  } catch (error) {
    // The write is committed; the next pass (a search's or the loop's) indexes it.
    state.outsideWrites = Math.max(state.outsideWrites, upTo);
    deps.log.warn({ err: error }, 'search index pass before an answer failed');
  }
}

/**
 * Before a search: on PostgreSQL a pass only when this process's own writes or the time since the
 * last pass ask for one; on SQLite always (a pass that finds nothing costs about a millisecond, and
 * other instances on the same file hold no answers for the index).
 */
export async function syncForSearch(deps: Deps): Promise<void> {
  if (deps.engine !== 'postgres') {
    await syncSearchIndex(deps);
    return;
  }
  const state = deps.runtime.search.indexer;
  const last = state.lastPass;
  if (last && last.writes >= state.outsideWrites && performance.now() - last.startedAt <= FRESH_MS) return;
  // A pass under way that saw this process's writes will do: under load a pass can outlast
  // FRESH_MS, and waiting for the one after it too doubled the wait (decision 0027).
  if (state.running && state.runningFrom >= state.outsideWrites) {
    await state.running;
    return;
  }
  await syncSearchIndex(deps);
}
