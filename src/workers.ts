import type { Deps } from './deps.ts';
import type { AllJobHandlers } from './core/jobs/catalog.ts';
import { JOB_PROBE_MS, startWorker, type Worker } from './core/jobs/worker.ts';
import { auditJobHandlers, startAuditSealer } from './features/audit/index.ts';
import { authJobHandlers } from './features/auth/index.ts';
import { startDelivery } from './features/webhooks/index.ts';
import { metadataJobHandlers } from './features/metadata/index.ts';
import {
  applyMetadataToAssets,
  assetJobHandlers,
  scheduleRightsSweep,
  scheduleVisualBackfill,
  startPendingRenditionSweep,
} from './features/assets/index.ts';
import { collectionJobHandlers } from './features/collections/index.ts';
import { delegateSearchIndexing, startSearchIndexer, syncSearchIndex } from './features/search/index.ts';
import { backgroundThreadPossible, startBackgroundThread } from './background-thread.ts';
import { startUsageFold } from './features/quotas/index.ts';

/**
 * Every background job's handler, by feature (each feature's `<feature>.jobs.ts`). The names and
 * payloads are listed in core/jobs/catalog.ts; a job without a handler here does not compile.
 */
export function jobHandlers(deps: Deps): AllJobHandlers {
  return {
    ...authJobHandlers(deps),
    // POST /v1/metadata/apply hands pending definition changes to each feature that stores metadata.
    ...metadataJobHandlers(deps, { applyHandlers: { assets: applyMetadataToAssets } }),
    ...assetJobHandlers(deps),
    ...collectionJobHandlers(deps),
    ...auditJobHandlers(deps),
  };
}

type Loop = { stop(): Promise<void> };

function startIndexerAndSealer(deps: Deps): { indexer: Loop; sealer: Loop } {
  if (!backgroundThreadPossible(deps)) return { indexer: startSearchIndexer(deps), sealer: startAuditSealer(deps) };
  let local: Loop[] = [];
  let undelegate = () => {};
  const thread = startBackgroundThread(deps, () => {
    undelegate();
    local = [startSearchIndexer(deps), startAuditSealer(deps)];
    return () => syncSearchIndex(deps);
  });
  undelegate = delegateSearchIndexing(deps, () => thread.syncSearchIndex());
  return {
    indexer: {
      async stop() {
        undelegate();
        await thread.stop();
        await Promise.all(local.map((l) => l.stop()));
      },
    },
    sealer: { stop: async () => {} },
  };
}

export function startWorkers(deps: Deps): Worker {
  const jobs = startWorker({
    db: deps.db,
    engine: deps.engine,
    clock: deps.clock,
    log: deps.log,
    signal: deps.jobs,
    handlers: jobHandlers(deps),
    concurrency: deps.config.jobs.concurrency,
    leaseMs: deps.config.jobs.leaseMs,
    tracing: deps.tracing,
    // Jobs other processes enqueue (an API process without workers) are claimed within 250 ms.
    probeMs: deps.config.database.kind === 'postgres' ? JOB_PROBE_MS : undefined,
  });
  // Webhook delivery has its own loop and tables (leases, per-endpoint queues, batched attempt log).
  const delivery = startDelivery(deps, { leaseMs: deps.config.webhookLeaseMs });
  // Search index: assets changed since the last pass are re-indexed every 250 ms. Audit rows committed
  // since the last pass are chained every second (features/audit/chain/sealer.ts). Both on the background
  // thread (its own connection) when it can run, so their work leaves the thread that answers requests.
  const { indexer, sealer } = startIndexerAndSealer(deps);
  // Usage deltas appended by uploads and purges are folded into each organization's total every second.
  const usageFold = startUsageFold(deps);
  // Renditions left pending with no live job (lost to a crash or an old outage) are enqueued again, at start and every 5 min.
  const sweep = startPendingRenditionSweep(deps);
  // Placeholders and perceptual hashes for assets rendered before they existed: enqueued at start only
  // when some asset lacks them (features/assets/renditions/visual-summary/backfill.ts).
  void scheduleVisualBackfill(deps).catch((error: unknown) =>
    deps.log.warn({ err: error }, 'could not schedule the placeholder backfill'),
  );
  // Usage rights: the hourly expiry sweep is enqueued once per hour across processes (features/assets/rights),
  // the first a minute after start, so an idle start runs no job (test/lean-start.test.ts).
  const rightsState = { hour: -1 };
  const scheduleRights = () =>
    scheduleRightsSweep(deps, rightsState).then(
      () => deps.jobs.wake(),
      (error: unknown) => deps.log.warn({ err: error }, 'could not schedule the rights expiry sweep'),
    );
  const rightsTimer = setInterval(() => void scheduleRights(), 60_000);
  rightsTimer.unref();
  return {
    async stop(graceMs?: number) {
      clearInterval(rightsTimer);
      await Promise.all([
        jobs.stop(graceMs),
        delivery.stop(),
        indexer.stop(),
        sealer.stop(),
        sweep.stop(),
        usageFold.stop(),
      ]);
    },
    drain: () => jobs.drain(),
  };
}
