import type { Deps } from '../../deps.ts';
import type { AuditSeal } from '../../core/audit.ts';
import type { RevisionCache } from '../../core/db/revision-cache.ts';
import { createAssetViewCache, type AssetView } from './views/asset-views.ts';
import { createSimilarIndex, type SimilarIndex } from './similar/similar-index.ts';

/** The assets feature's per-process state (deps.runtime.assets), built by src/runtime.ts. */
export interface AssetRuntime {
  /** Asset views (row, security, template) by "org\0id", until content or identity changes (core/db/revision.ts). */
  readonly views: RevisionCache<AssetView>;
  /** Perceptual hashes per organization for near-duplicate search (POST /v1/search/similar). */
  readonly similar: SimilarIndex;
  /**
   * Seals audit rows as they are inserted (bulk creation, decision 0039): the audit feature's
   * `insertSealer`, handed over by src/runtime.ts so that assets does not import audit (which reads assets).
   */
  readonly auditSealer: () => Promise<AuditSeal>;
}

export function createAssetRuntime(deps: Deps, auditSealer: () => Promise<AuditSeal>): AssetRuntime {
  return { views: createAssetViewCache(deps), similar: createSimilarIndex(), auditSealer };
}
