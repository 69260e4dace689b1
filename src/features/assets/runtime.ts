import type { Deps } from '../../deps.ts';
import type { RevisionCache } from '../../core/db/revision-cache.ts';
import { createAssetViewCache, type AssetView } from './views/asset-views.ts';

/** The assets feature's per-process state (deps.runtime.assets), built by src/runtime.ts. */
export interface AssetRuntime {
  /** Asset views (row, security, template) by "org\0id", until content or identity changes (core/db/revision.ts). */
  readonly views: RevisionCache<AssetView>;
}

export function createAssetRuntime(deps: Deps): AssetRuntime {
  return { views: createAssetViewCache(deps) };
}
