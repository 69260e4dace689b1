import type { Deps } from './deps.ts';
import { createApiKeyRuntime, type ApiKeyRuntime } from './features/api-keys/index.ts';
import { createAssetRuntime, type AssetRuntime } from './features/assets/index.ts';
import { insertSealer } from './features/audit/index.ts';
import { createAuthRuntime, type AuthRuntime } from './features/auth/index.ts';
import { createIdentityRuntime, type IdentityRuntime } from './features/identity/index.ts';
import { createQuotaRuntime, type QuotaRuntime } from './features/quotas/index.ts';
import { createSearchRuntime, type SearchRuntime } from './features/search/index.ts';
import { createSsoRuntime, type SsoRuntime } from './features/sso/index.ts';
import { createWebhookRuntime, type WebhookRuntime } from './features/webhooks/index.ts';

/**
 * The long-lived state of one process (one Deps): caches, batched writers and loop bookkeeping
 * that outlive a request. Built by createDeps (deps.runtime), closed by deps.close() before the
 * database. Each feature owns its slot and reads it directly (a property read on the hot paths),
 * and no other feature touches it. See docs/decisions/0003-composition-root-and-runtime.md.
 */
export interface Runtime {
  /** Token principals, signing keys and verified tokens, the hourly cleanup mark. */
  readonly auth: AuthRuntime;
  /** API-key principals, lastUsedAt batching, the compiled key lookup. */
  readonly apiKeys: ApiKeyRuntime;
  /** The current-user (GET /v1/user) cache. */
  readonly identity: IdentityRuntime;
  /** The asset-view cache. */
  readonly assets: AssetRuntime;
  /** The search indexer's pass state. */
  readonly search: SearchRuntime;
  /** The engine that manual webhook delivery rounds (tests, CLI) drive. */
  readonly webhooks: WebhookRuntime;
  /** Organizations' limits, kept a second (the per-key request limit reads them on every key request). */
  readonly quotas: QuotaRuntime;
  /** The dispatcher to identity providers and their key sets. */
  readonly sso: SsoRuntime;
}

export interface ClosableRuntime extends Runtime {
  /** Writes what is batched and stops what runs; the database is still open. */
  close(): Promise<void>;
}

/** `deps` may not have its runtime yet: the factories keep the reference and read only its other members. */
export function createRuntime(deps: Deps): ClosableRuntime {
  const runtime: Runtime = {
    auth: createAuthRuntime(deps),
    apiKeys: createApiKeyRuntime(deps),
    identity: createIdentityRuntime(deps),
    assets: createAssetRuntime(deps, () => insertSealer(deps.db, deps.engine, deps.keys)),
    search: createSearchRuntime(deps),
    webhooks: createWebhookRuntime(),
    quotas: createQuotaRuntime(),
    sso: createSsoRuntime(deps),
  };
  return {
    ...runtime,
    async close() {
      await Promise.all([runtime.webhooks.close(), runtime.search.close(), runtime.sso.close()]);
      // Last: the delivery engine and the indexer write nothing to api_keys, but requests may still have.
      await runtime.apiKeys.close();
    },
  };
}
