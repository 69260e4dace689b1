import type { Deps } from '../../deps.ts';
import type { HandlersFor } from '../../core/jobs/catalog.ts';
import { CLEANUP_JOB, cleanupAuthTables } from './sessions/cleanup.ts';

/** The auth feature's jobs (payloads in core/jobs/catalog.ts), for src/workers.ts. */
export function authJobHandlers(deps: Deps): HandlersFor<typeof CLEANUP_JOB> {
  return {
    // Enqueued by the first sign-in of each hour (cleanup.ts).
    [CLEANUP_JOB]: async () => {
      const removed = await cleanupAuthTables(deps);
      deps.log.info(removed, 'auth cleanup');
    },
  };
}
