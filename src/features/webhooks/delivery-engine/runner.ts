import type { Deps } from '../../../deps.ts';
import { createDeliveryEngine, type DeliveryEngine, type DeliveryOptions, type RoundSummary } from './engine.ts';

/** The webhooks feature's per-process state (deps.runtime.webhooks), built by src/runtime.ts. */
export interface WebhookRuntime {
  /** The engine runDeliveryOnce drives, made on first use and stopped by close(). */
  manualEngine: DeliveryEngine | undefined;
  close(): Promise<void>;
}

export function createWebhookRuntime(): WebhookRuntime {
  const runtime: WebhookRuntime = {
    manualEngine: undefined,
    async close() {
      await runtime.manualEngine?.stop();
      runtime.manualEngine = undefined;
    },
  };
  return runtime;
}

/** Drives delivery deterministically (tests, CLI): one engine per Deps, so token caches and rate limits persist across calls. */
export function runDeliveryOnce(deps: Deps): Promise<RoundSummary> {
  const runtime = deps.runtime.webhooks;
  runtime.manualEngine ??= createDeliveryEngine(deps, { manual: true });
  return runtime.manualEngine.runOnce();
}

/** Production: the delivery loop of this process. */
export function startDelivery(deps: Deps, options: DeliveryOptions = {}): { stop(): Promise<void> } {
  const engine = createDeliveryEngine(deps, options);
  engine.start();
  return { stop: () => engine.stop() };
}
