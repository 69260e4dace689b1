import type { Deps } from '../../deps.ts';
import { foldUsage } from './holdings.ts';

/**
 * The background half of what an organization holds (started by src/workers.ts): every second the
 * deltas appended by uploads, creates and purges are folded into org_usage, one short transaction
 * per organization, so the delta table stays small. Reads add the pending deltas, so nothing waits
 * for this loop; it keeps no state, and any number of processes may run it at once.
 */
export function startUsageFold(deps: Deps, intervalMs = 1000): { stop(): Promise<void> } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | null = null;
  const tick = async () => {
    if (stopped) return;
    running = foldUsage(deps.db, deps.clock.now()).catch((error: unknown) =>
      deps.log.warn({ err: error }, 'usage fold pass failed'),
    );
    await running;
    running = null;
    if (!stopped) timer = setTimeout(tick, intervalMs);
  };
  timer = setTimeout(tick, intervalMs);
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
