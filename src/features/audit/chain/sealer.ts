import type { Deps } from '../../../deps.ts';
import { sealPending } from './chain.ts';
import { schedulePrune } from './retention.ts';

/**
 * The background half of the chain (started by src/workers.ts): every second, rows committed since
 * the last pass are sealed, organization by organization; once a day the retention job is queued.
 * Reads of the trail seal their organization first too, so nobody waits for this loop.
 */
export function startAuditSealer(deps: Deps, intervalMs = 1000): { stop(): Promise<void> } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | null = null;
  const pruneState = { day: -1 };
  const tick = async () => {
    if (stopped) return;
    running = (async () => {
      await sealPending(deps.db, deps.engine, deps.keys);
      await schedulePrune(deps, pruneState);
    })().catch((error: unknown) => deps.log.warn({ err: error }, 'audit sealer pass failed'));
    await running;
    running = null;
    if (!stopped) timer = setTimeout(tick, intervalMs);
  };
  timer = setTimeout(tick, 0);
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
