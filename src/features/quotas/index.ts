export { quotaRoutes } from './quotas.routes.ts';
export type { ShareMailUsage } from './quotas.service.ts';
export { checkRoom, foldUsage, orgHoldings, releaseHoldings, reserveHoldings, type Holdings } from './holdings.ts';
export { startUsageFold } from './usage-fold.ts';
export { countUpload, registerApiKeyRequestLimit } from './rates.ts';
export { orgLimits, createQuotaRuntime, type QuotaRuntime, type Limits } from './limits.ts';
