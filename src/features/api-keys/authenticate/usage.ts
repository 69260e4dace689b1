import type { Deps } from '../../../deps.ts';
import { audit } from '../../../core/audit.ts';
import { recordLastUsed, rememberIp } from '../api-keys.repo.ts';

const FLUSH_EVERY_MS = 1000;
const MAX_REMEMBERED_IPS = 100_000;

/**
 * Per-process bookkeeping of key use, so that authenticating with a key costs no database write:
 * lastUsedAt is kept in memory and written in one batch every second (and when the app closes);
 * (key, IP) pairs already known are remembered so only a first use from a new address writes.
 */
export class UsageTracker {
  private pending = new Map<string, { orgId: string; at: number }>();
  /** Addresses each key is known to have been used from (bounded by MAX_REMEMBERED_IPS in all). */
  private knownIps = new Map<string, Set<string>>();
  private knownIpCount = 0;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private readonly deps: Deps;

  constructor(deps: Deps) {
    this.deps = deps;
  }

  used(orgId: string, apiKeyId: string, at: number): void {
    const previous = this.pending.get(apiKeyId);
    // Moved in place: no allocation per request for a key already pending (flush swaps the map).
    if (previous === undefined) this.pending.set(apiKeyId, { orgId, at });
    else if (previous.at < at) previous.at = at;
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
    // The common case (a known address) stays synchronous and allocates nothing: no promise, no key string.
    let ips = this.knownIps.get(apiKeyId);
    if (ips?.has(ip)) return undefined;
    if (this.knownIpCount >= MAX_REMEMBERED_IPS) {
      this.knownIps.clear();
      this.knownIpCount = 0;
      ips = undefined;
    }
    // Remember before the write so concurrent first requests from one address write once.
    if (ips === undefined) this.knownIps.set(apiKeyId, (ips = new Set()));
    ips.add(ip);
    this.knownIpCount += 1;
    return this.recordNewIp(orgId, apiKeyId, actorId, ip, at);
  }

  private async recordNewIp(orgId: string, apiKeyId: string, actorId: string, ip: string, at: number): Promise<void> {
    try {
      await this.deps.db.transaction().execute(async (trx) => {
        if (await rememberIp(trx, orgId, apiKeyId, ip, at)) {
          await audit(trx, {
            orgId,
            at,
            actorId,
            action: 'api_key.used_from_new_ip',
            targetType: 'api_key',
            targetId: apiKeyId,
            ip,
          });
        }
      });
    } catch (error) {
      if (this.knownIps.get(apiKeyId)?.delete(ip)) this.knownIpCount -= 1;
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

/** Writes pending lastUsedAt values now (the tracker does this every second, and deps.close() at the end). */
export function flushApiKeyUsage(deps: Deps): Promise<void> {
  return deps.runtime.apiKeys.usage.flush();
}
