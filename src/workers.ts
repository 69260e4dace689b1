import type { Deps } from './deps.ts';
import { startWorker, type JobHandler, type Worker } from './core/jobs/worker.ts';
import { authJobHandlers } from './features/auth/index.ts';

/** Every background job type, by feature. */
export function jobHandlers(deps: Deps): Record<string, JobHandler> {
  return {
    ...authJobHandlers(deps),
  };
}

export function startWorkers(deps: Deps): Worker {
  return startWorker({ db: deps.db, engine: deps.engine, clock: deps.clock, log: deps.log, signal: deps.jobs, handlers: jobHandlers(deps) });
}
