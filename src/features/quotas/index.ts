export { quotaRoutes } from './quotas.routes.ts';
export type { ShareMailUsage } from './quotas.service.ts';
export { checkRoom, orgHoldings, releaseHoldings, reserveHoldings, type Holdings } from './holdings.ts';
export { countUpload, registerApiKeyRequestLimit } from './rates.ts';
export { orgLimits, createQuotaRuntime, type QuotaRuntime, type Limits } from './limits.ts';
