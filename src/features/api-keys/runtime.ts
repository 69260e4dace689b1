import type { CompiledQuery } from 'kysely';
import type { Deps } from '../../deps.ts';
import type { Principal } from '../../core/authz/principal.ts';
import { createRevisionCache, type RevisionCache } from '../../core/db/revision-cache.ts';
import { UsageTracker } from './authenticate/usage.ts';
import type { LookupRow } from './authenticate/verify.ts';

/** The API-key feature's per-process state (deps.runtime.apiKeys), built by src/runtime.ts. */
export interface ApiKeyRuntime {
  /** Principals by a digest of the presented key, until identity changes (core/db/revision.ts). */
  readonly principals: RevisionCache<Principal>;
  /** lastUsedAt batching and known (key, address) pairs; flushed every second and by close(). */
  readonly usage: UsageTracker;
  /** The key lookup, compiled on first use. */
  lookup: CompiledQuery<LookupRow> | undefined;
  /** Writes pending lastUsedAt values; called by deps.close() before the database closes. */
  close(): Promise<void>;
}

export function createApiKeyRuntime(deps: Deps): ApiKeyRuntime {
  const usage = new UsageTracker(deps);
  return { principals: createRevisionCache<Principal>(deps), usage, lookup: undefined, close: () => usage.stop() };
}
