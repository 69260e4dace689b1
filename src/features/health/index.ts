export { healthRoutes } from './health.routes.ts';
export { metricsRoutes } from './metrics.routes.ts';
