import type { Deps } from '../../deps.ts';
import type { Principal } from '../../core/authz/principal.ts';
import { createRevisionCache, type RevisionCache } from '../../core/db/revision-cache.ts';
import { createKeyState, type KeyState } from './keys/signing-keys.ts';

/** The auth feature's per-process state (deps.runtime.auth), built by src/runtime.ts. */
export interface AuthRuntime {
  /** Principals by presented token, until the token expires or identity changes (core/db/revision.ts). */
  readonly principals: RevisionCache<Principal>;
  /** Signing and verification keys, and the tokens whose signature was already checked. */
  readonly keys: KeyState;
  /** The hour whose cleanup job this process already enqueued (cleanup.ts). */
  cleanupScheduledHour: number | undefined;
}

export function createAuthRuntime(deps: Deps): AuthRuntime {
  return { principals: createRevisionCache<Principal>(deps), keys: createKeyState(), cleanupScheduledHour: undefined };
}
