export { webhookRoutes } from './webhooks.routes.ts';
export { matchesEventType, webhookEventsDocument } from './event-types.ts';
export { createDeliveryEngine, type DeliveryOptions, type RoundSummary } from './delivery-engine/engine.ts';
export { runDeliveryOnce, startDelivery, createWebhookRuntime, type WebhookRuntime } from './delivery-engine/runner.ts';
export { pruneDeliveryLog, RETENTION_MS } from './delivery-engine/message-store.ts';
export { rotateWebhookSecrets } from './endpoints/secret-rotation.ts';
