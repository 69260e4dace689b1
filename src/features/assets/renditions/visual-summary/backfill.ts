import { createHash } from 'node:crypto';
import { isUniqueViolation } from '../../../../core/db/connect.ts';
import { toJson } from '../../../../core/db/json.ts';
import type { JobPayload } from '../../../../core/jobs/catalog.ts';
import { enqueueJob } from '../../../../core/jobs/queue.ts';
import type { Deps } from '../../../../deps.ts';
import { storedRenditions } from '../../views/present.ts';
import { summaryOfThumbnail, writeVisualSummary } from './visual-summary.service.ts';

export const VISUAL_BACKFILL_JOB = 'assets.visual_backfill';
const HOUR = 3_600_000;
/** Assets read per query, and at most this many batches per job before it hands over to the next. */
const PAGE = 200;
const BATCHES_PER_JOB = 10;

/**
 * Assets rendered before placeholders and perceptual hashes existed (issue 25, items 5 and 7) have
 * neither: no `placeholder` to paint and no row in asset_visual_hashes for near-duplicate search.
 * Fills both from each asset's stored thumbnail (no re-rendering), in id order from `after`.
 * Returns the last id looked at when there may be more, else null.
 */
export async function backfillVisualSummaries(
  deps: Deps,
  after = '',
): Promise<{ filled: number; next: string | null }> {
  let filled = 0;
  let cursor = after;
  for (let batch = 0; batch < BATCHES_PER_JOB; batch++) {
    const rows = await candidates(deps, cursor, PAGE);
    if (rows.length === 0) return { filled, next: null };
    for (const row of rows) {
      const thumb = storedRenditions(row).imageThumb;
      if (!thumb) continue;
      const summary = await summaryOfThumbnail(deps, thumb.key, null);
      if (!summary) continue;
      const now = deps.clock.now();
      await deps.db.transaction().execute(async (trx) => {
        // Only if the content is still the one whose thumbnail was read.
        const changed = await trx
          .updateTable('assets')
          .set({ placeholder: toJson(summary.placeholder) })
          .where('id', '=', row.id)
          .where('sha256', '=', row.sha256)
          .where('renditions', '=', row.renditions)
          .executeTakeFirst();
        if (Number(changed.numUpdatedRows) === 0) return;
        await writeVisualSummary(trx, row.org_id, row.id, summary.hash, now);
        filled++;
      });
    }
    cursor = rows[rows.length - 1]!.id;
    if (rows.length < PAGE) return { filled, next: null };
  }
  return { filled, next: cursor };
}

/** Live assets with ready renditions that lack a placeholder or a perceptual hash. */
function candidates(deps: Deps, after: string, limit: number) {
  return deps.db
    .selectFrom('assets as a')
    .leftJoin('asset_visual_hashes as h', 'h.asset_id', 'a.id')
    .select(['a.id', 'a.org_id', 'a.sha256', 'a.renditions'])
    .where('a.renditions_state', '=', 'ready')
    .where('a.deleted_at', 'is', null)
    .where((eb) => eb.or([eb('a.placeholder', 'is', null), eb('h.asset_id', 'is', null)]))
    .where('a.id', '>', after)
    .orderBy('a.id')
    .limit(limit)
    .execute();
}

function jobIdFor(key: string): string {
  const hex = createHash('sha256').update(`${VISUAL_BACKFILL_JOB}:${key}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * At start (src/workers.ts): when any asset lacks its placeholder or hash, enqueues the backfill
 * under a job id derived from the hour, so processes starting together enqueue one. An idle
 * installation with nothing to fill enqueues nothing.
 */
export async function scheduleVisualBackfill(deps: Deps): Promise<boolean> {
  if ((await candidates(deps, '', 1)).length === 0) return false;
  const now = deps.clock.now();
  try {
    await enqueueJob(deps.db, now, {
      id: jobIdFor(`start:${Math.floor(now / HOUR)}`),
      type: VISUAL_BACKFILL_JOB,
      payload: {},
      maxAttempts: 5,
    });
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    return false;
  }
  deps.jobs.wake();
  return true;
}

/** One job: up to BATCHES_PER_JOB pages from its cursor, then the next job takes over from where it stopped. */
export async function runVisualBackfill(deps: Deps, payload: JobPayload<typeof VISUAL_BACKFILL_JOB>): Promise<void> {
  const { filled, next } = await backfillVisualSummaries(deps, payload.after ?? '');
  if (filled > 0) deps.log.info({ filled }, 'placeholders and perceptual hashes filled for older assets');
  if (next === null) return;
  await enqueueJob(deps.db, deps.clock.now(), { type: VISUAL_BACKFILL_JOB, payload: { after: next }, maxAttempts: 5 });
  deps.jobs.wake();
}
