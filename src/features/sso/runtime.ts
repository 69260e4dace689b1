import type { Dispatcher } from 'undici';
import type { Deps } from '../../deps.ts';
import { createGuardedDispatcher } from '../../core/net/ssrf.ts';

export type Jwks = { keys: Record<string, unknown>[] };

/**
 * Single sign-on's per-process state (deps.runtime.sso), built by src/runtime.ts and closed with it:
 * the guarded HTTP dispatcher that talks to identity providers (made on the first sign-in, so a
 * server nobody signs in to through a provider never loads undici) and the providers' key sets.
 */
export interface SsoRuntime {
  /** The SSRF-guarded dispatcher for provider calls. */
  dispatcher(): Dispatcher;
  /** Key sets by jwks_uri, with when each was fetched. */
  readonly jwks: Map<string, { at: number; jwks: Jwks }>;
  /** Closes the dispatcher's connections. */
  close(): Promise<void>;
}

export function createSsoRuntime(deps: Deps): SsoRuntime {
  let made: Dispatcher | undefined;
  const jwks = new Map<string, { at: number; jwks: Jwks }>();
  return {
    dispatcher: () => {
      made ??= createGuardedDispatcher({ allowPrivate: deps.config.allowPrivateTargets });
      return made;
    },
    jwks,
    close: async () => {
      jwks.clear();
      const d = made;
      made = undefined;
      await d?.close().catch(() => undefined);
    },
  };
}
