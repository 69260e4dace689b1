export { webhookRoutes } from './webhooks.routes.ts';
export { matchesEventType } from './event-types.ts';
export { createDeliveryEngine, type DeliveryOptions, type RoundSummary } from './delivery-engine.ts';
export { runDeliveryOnce, startDelivery, createWebhookRuntime, type WebhookRuntime } from './delivery-runner.ts';
export { pruneDeliveryLog, RETENTION_MS } from './delivery-store.ts';
