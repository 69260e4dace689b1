import { Server as NetServer } from 'node:net';
import type { Deps } from './deps.ts';
import type { App } from './core/http/app-types.ts';
import type { Worker } from './core/jobs/worker.ts';

/**
 * Counts the requests this server is answering, so a drain knows when the last one is done.
 * Installed once the server listens.
 */
export function trackInFlight(app: App): { count(): number; idle(): Promise<void> } {
  let inFlight = 0;
  let waiters: (() => void)[] = [];
  app.server.on('request', (_req, res) => {
    inFlight++;
    res.once('close', () => {
      inFlight--;
      if (inFlight === 0) {
        for (const wake of waiters) wake();
        waiters = [];
      }
    });
  });
  return {
    count: () => inFlight,
    idle: () => (inFlight === 0 ? Promise.resolve() : new Promise<void>((resolve) => waiters.push(resolve))),
  };
}

/**
 * SIGTERM: /readyz answers 503 `draining` at once and every answer closes its connection; the
 * listener closes (no new connections; kept-alive ones stay open only to be told); workers stop
 * claiming and get the drain time to finish their steps, then release their leases; requests in
 * flight get up to TESSERA_DRAIN_TIMEOUT_MS, after which their connections are cut. Then the
 * database closes and the process exits 0.
 */
export async function drain(
  deps: Deps,
  app: App,
  worker: Worker | undefined,
  inFlight: ReturnType<typeof trackInFlight>,
  signal: string,
): Promise<void> {
  const timeoutMs = deps.config.drainTimeoutMs;
  deps.lifecycle.draining = true;
  deps.log.info({ signal, inFlight: inFlight.count(), drainTimeoutMs: timeoutMs }, 'draining');
  // net.Server's close only stops accepting; http.Server's would also drop the idle kept-alive
  // connections on which a load balancer is about to learn that we are draining.
  NetServer.prototype.close.call(app.server);
  const workers = worker?.stop(timeoutMs);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = await Promise.race([
    inFlight.idle().then(() => false),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), timeoutMs);
    }),
  ]);
  clearTimeout(timer);
  if (timedOut) deps.log.warn({ inFlight: inFlight.count() }, 'drain timeout: cutting the requests still in flight');
  app.server.closeAllConnections();
  await app.close();
  await workers;
  await deps.close();
  deps.log.info('drained');
}
