import type { Deps } from '../../deps.ts';
import { createDeliveryEngine, type DeliveryEngine, type DeliveryOptions, type RoundSummary } from './delivery-engine.ts';

const manualEngines = new WeakMap<Deps, DeliveryEngine>();

/** Drives delivery deterministically (tests, CLI): one engine per Deps, so token caches and rate limits persist across calls. */
export function runDeliveryOnce(deps: Deps): Promise<RoundSummary> {
  let engine = manualEngines.get(deps);
  if (!engine) manualEngines.set(deps, (engine = createDeliveryEngine(deps, { manual: true })));
  return engine.runOnce();
}

/** Production: the delivery loop of this process. */
export function startDelivery(deps: Deps, options: DeliveryOptions = {}): { stop(): Promise<void> } {
  const engine = createDeliveryEngine(deps, options);
  engine.start();
  return { stop: () => engine.stop() };
}
