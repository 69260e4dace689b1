import type { Deps } from '../../deps.ts';
import { createRevisionCache, type RevisionCache } from '../../core/db/revision-cache.ts';
import type { User } from './identity.schemas.ts';

/** The identity feature's per-process state (deps.runtime.identity), built by src/runtime.ts. */
export interface IdentityRuntime {
  /** GET /v1/user answers by "org user", until identity changes (core/db/revision.ts). */
  readonly currentUsers: RevisionCache<User>;
}

export function createIdentityRuntime(deps: Deps): IdentityRuntime {
  return { currentUsers: createRevisionCache<User>(deps) };
}
