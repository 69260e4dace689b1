export { webhookRoutes } from './webhooks.routes.ts';
export { matchesEventType } from './event-types.ts';
export { createDeliveryEngine, runDeliveryOnce, startDelivery, type DeliveryOptions, type RoundSummary } from './delivery-engine.ts';
export { pruneDeliveryLog, RETENTION_MS } from './delivery-store.ts';
