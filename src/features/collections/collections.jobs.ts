import type { Deps } from '../../deps.ts';
import type { HandlersFor } from '../../core/jobs/catalog.ts';
import { actionJobHandler } from '../actions/index.ts';
import { cleanupWork, SHARE_ACTION, SHARE_CLEANUP_JOB, shareWork } from './share/share.service.ts';

/** The collections feature's jobs (payloads in core/jobs/catalog.ts), for src/workers.ts. */
export function collectionJobHandlers(deps: Deps): HandlersFor<typeof SHARE_ACTION | typeof SHARE_CLEANUP_JOB> {
  return {
    // POST /v1/collections/{id}/share: package the collection, mail the links.
    [SHARE_ACTION]: actionJobHandler(deps, (ctx) => shareWork(deps, ctx)),
    // The share's packaged files, once its links expired.
    [SHARE_CLEANUP_JOB]: (job) => cleanupWork(deps, job.payload),
  };
}
