import type { Deps } from '../../deps.ts';
import { audit } from '../../core/audit.ts';
import { recordLastUsed, rememberIp } from './api-keys.repo.ts';

const FLUSH_EVERY_MS = 1000;
const MAX_REMEMBERED_IPS = 100_000;

/**
 * Per-process bookkeeping of key use, so that authenticating with a key costs no database write:
 * lastUsedAt is kept in memory and written in one batch every second (and when the app closes);
 * (key, IP) pairs already known are remembered so only a first use from a new address writes.
 */
class UsageTracker {
  private pending = new Map<string, { orgId: string; at: number }>();
  private knownIps = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private readonly deps: Deps;

  constructor(deps: Deps) {
    this.deps = deps;
  }

  used(orgId: string, apiKeyId: string, at: number): void {
    const previous = this.pending.get(apiKeyId);
    if (!previous || previous.at < at) this.pending.set(apiKeyId, { orgId, at });
    if (!this.timer) {
      this.timer = setInterval(() => void this.flush(), FLUSH_EVERY_MS);
      this.timer.unref();
    }
  }

  /** Not yet written lastUsedAt of a key, if this process has one. */
  pendingLastUsed(apiKeyId: string): number | undefined {
    return this.pending.get(apiKeyId)?.at;
  }

  /** Records the first use of a key from `ip` (once per key and address, across instances). */
  usedFrom(orgId: string, apiKeyId: string, actorId: string, ip: string, at: number): Promise<void> | undefined {
    const pair = `${apiKeyId} ${ip}`;
    // The common case (a known address) stays synchronous: no promise on the hot path.
    if (this.knownIps.has(pair)) return undefined;
    if (this.knownIps.size >= MAX_REMEMBERED_IPS) this.knownIps.clear();
    // Remember before the write so concurrent first requests from one address write once.
    this.knownIps.add(pair);
    return this.recordNewIp(pair, orgId, apiKeyId, actorId, ip, at);
  }

  private async recordNewIp(pair: string, orgId: string, apiKeyId: string, actorId: string, ip: string, at: number): Promise<void> {
    try {
      await this.deps.db.transaction().execute(async (trx) => {
        if (await rememberIp(trx, orgId, apiKeyId, ip, at)) {
          await audit(trx, { orgId, at, actorId, action: 'api_key.used_from_new_ip', targetType: 'api_key', targetId: apiKeyId, ip });
        }
      });
    } catch (error) {
      this.knownIps.delete(pair);
      this.deps.log.warn({ err: error, apiKeyId }, 'could not record the address an API key was used from');
    }
  }

  flush(): Promise<void> {
    // Serialised, so a close-time flush waits for a timer flush already under way.
    this.flushing = this.flushing.then(async () => {
      if (this.pending.size === 0) return;
      const batch = this.pending;
      this.pending = new Map();
      try {
        await this.deps.db.transaction().execute(async (trx) => {
          for (const [id, { orgId, at }] of batch) await recordLastUsed(trx, orgId, id, at);
        });
      } catch (error) {
        for (const [id, entry] of batch) {
          const newer = this.pending.get(id);
          if (!newer || newer.at < entry.at) this.pending.set(id, entry);
        }
        this.deps.log.warn({ err: error }, 'could not record API key lastUsedAt; will retry');
      }
    });
    return this.flushing;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}

const trackers = new WeakMap<Deps, UsageTracker>();

export function usageTracker(deps: Deps): UsageTracker {
  let tracker = trackers.get(deps);
  if (!tracker) {
    tracker = new UsageTracker(deps);
    trackers.set(deps, tracker);
  }
  return tracker;
}

/** Writes pending lastUsedAt values now (the app does this every second and on close). */
export function flushApiKeyUsage(deps: Deps): Promise<void> {
  return usageTracker(deps).flush();
}
