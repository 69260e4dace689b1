// The audit trail: reading, exporting, chaining, verifying and pruning the rows every feature
// records with core/audit.ts (docs/audit.md).
export { auditRoutes } from './audit.routes.ts';
export { auditJobHandlers } from './audit.jobs.ts';
export { startAuditSealer } from './chain/sealer.ts';
export { verifyOrganization } from './audit.service.ts';
export {
  auditedOrganizations,
  insertSealer,
  resealChainKey,
  sealOrg,
  sealPending,
  verifyChain,
  type ChainReport,
  type BrokenLink,
} from './chain/chain.ts';
export { pruneAll, pruneOrg } from './chain/retention.ts';
