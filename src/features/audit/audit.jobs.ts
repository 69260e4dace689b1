import type { HandlersFor } from '../../core/jobs/catalog.ts';
import type { Deps } from '../../deps.ts';
import { PRUNE_JOB, pruneAll } from './chain/retention.ts';

/** The audit feature's jobs (payloads in core/jobs/catalog.ts), for src/workers.ts. */
export function auditJobHandlers(deps: Deps): HandlersFor<typeof PRUNE_JOB> {
  return {
    // Enqueued once a day by the sealer loop (retention.ts) when TESSERA_AUDIT_RETENTION_DAYS is set.
    [PRUNE_JOB]: async () => {
      const removed = await pruneAll(deps);
      deps.log.info({ removed }, 'audit retention');
    },
  };
}
