import type { Deps } from '../../../../deps.ts';
import { enqueueJob, liveJobsNaming } from '../../../../core/jobs/queue.ts';
import { RENDITIONS_JOB } from '../../upload/uploads.service.ts';

/** An asset whose renditions have been pending this long with no live job lost its job. */
export const STALLED_RENDITIONS_MS = 60_000;
/** How often the sweep runs after the one at start. */
export const RENDITION_SWEEP_INTERVAL_MS = 5 * 60_000;

const PAGE = 500;

/**
 * Enqueues renditions again for assets left "pending" with no pending or running renditions job
 * (a job buried by an outage before outages stopped spending attempts, a job row lost with a
 * restored database): every acknowledged upload ends with renditions, whatever happened meanwhile.
 */
export async function resumePendingRenditions(deps: Deps, olderThanMs = STALLED_RENDITIONS_MS): Promise<number> {
  const now = deps.clock.now();
  let resumed = 0;
  let after = '';
  for (;;) {
    const rows = await deps.db
      .selectFrom('assets')
      .select(['id', 'org_id'])
      .where('renditions_state', '=', 'pending')
      .where('content_state', '=', 'available')
      .where('updated_at', '<', now - olderThanMs)
      .where('id', '>', after)
      .orderBy('id')
      .limit(PAGE)
      .execute();
    if (rows.length === 0) break;
    after = rows[rows.length - 1]!.id;
    const live = await liveJobsNaming(
      deps.db,
      deps.engine,
      RENDITIONS_JOB,
      'assetId',
      rows.map((r) => r.id),
    );
    const stalled = rows.filter((r) => !live.has(r.id));
    if (stalled.length > 0) {
      await deps.db.transaction().execute(async (trx) => {
        for (const row of stalled)
          await enqueueJob(trx, now, { type: RENDITIONS_JOB, orgId: row.org_id, payload: { assetId: row.id } });
      });
      resumed += stalled.length;
    }
    if (rows.length < PAGE) break;
  }
  if (resumed > 0) {
    deps.log.info({ resumed }, 'renditions left pending with no job were enqueued again');
    deps.jobs.wake();
  }
  return resumed;
}

/** Runs the sweep now and every `intervalMs` until stopped (started with the job workers). */
export function startPendingRenditionSweep(
  deps: Deps,
  intervalMs = RENDITION_SWEEP_INTERVAL_MS,
): { stop(): Promise<void> } {
  let running: Promise<unknown> = Promise.resolve();
  const sweep = () => {
    running = running
      .then(() => resumePendingRenditions(deps))
      .catch((error: unknown) => deps.log.warn({ err: error }, 'pending renditions sweep failed'));
  };
  sweep();
  const timer = setInterval(sweep, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
