import type { DbOrTrx } from '../../core/db/connect.ts';
import type { Config } from '../../config.ts';

/** Every quota and limit Tessera keeps per organization (docs/quotas.md). */
export const QUOTA_NAMES = [
  'storageBytes',
  'assets',
  'uploadsPerUserPerHour',
  'shareMailPerHour',
  'apiRequestsPerKeyPerMinute',
] as const;
export type QuotaName = (typeof QUOTA_NAMES)[number];

/** The org_quotas column of each quota. */
export const QUOTA_COLUMNS = {
  storageBytes: 'storage_bytes',
  assets: 'assets',
  uploadsPerUserPerHour: 'uploads_per_user_per_hour',
  shareMailPerHour: 'share_mail_per_hour',
  apiRequestsPerKeyPerMinute: 'api_requests_per_key_per_minute',
} as const satisfies Record<QuotaName, string>;

/** The server setting each quota defaults to. */
export const QUOTA_SETTINGS: Record<QuotaName, string> = {
  storageBytes: 'TESSERA_QUOTA_STORAGE_BYTES',
  assets: 'TESSERA_QUOTA_ASSETS',
  uploadsPerUserPerHour: 'TESSERA_QUOTA_UPLOADS_PER_USER_PER_HOUR',
  shareMailPerHour: 'TESSERA_SHARE_MAIL_PER_ORG_PER_HOUR',
  apiRequestsPerKeyPerMinute: 'TESSERA_QUOTA_API_REQUESTS_PER_KEY_PER_MINUTE',
};

export interface EffectiveLimit {
  /** null: no limit. */
  limit: number | null;
  /** organization: set for this organization; default: the server setting. */
  source: 'organization' | 'default';
}

export type Limits = Record<QuotaName, EffectiveLimit>;

type QuotaConfig = Pick<Config, 'quotas' | 'shareMailPerOrgPerHour'>;

function defaults(config: QuotaConfig): Record<QuotaName, number> {
  return {
    storageBytes: config.quotas.storageBytes,
    assets: config.quotas.assets,
    uploadsPerUserPerHour: config.quotas.uploadsPerUserPerHour,
    shareMailPerHour: config.shareMailPerOrgPerHour,
    apiRequestsPerKeyPerMinute: config.quotas.apiRequestsPerKeyPerMinute,
  };
}

/** An organization's limits: its own where set (0 = none), else the server's (0 = none). */
export async function orgLimits(db: DbOrTrx, config: QuotaConfig, orgId: string): Promise<Limits> {
  const row = await db.selectFrom('org_quotas').selectAll().where('org_id', '=', orgId).executeTakeFirst();
  const fallback = defaults(config);
  const out = {} as Limits;
  for (const name of QUOTA_NAMES) {
    const own = row?.[QUOTA_COLUMNS[name]];
    const value = own === null || own === undefined ? fallback[name] : Number(own);
    out[name] = {
      limit: value > 0 ? value : null,
      source: own === null || own === undefined ? 'default' : 'organization',
    };
  }
  return out;
}

const CACHE_MS = 1000;

/**
 * Limits read on every request of an API key (the per-key request limit): kept for a second per
 * organization in this process, so a request costs no read for them. A change made through this
 * process is seen at once (forgetLimits); other processes see it within a second. The counters
 * themselves are always the database's.
 */
export class LimitsCache {
  private readonly entries = new Map<string, { limits: Limits; at: number }>();

  peek(orgId: string, now: number): Limits | undefined {
    const hit = this.entries.get(orgId);
    return hit && now - hit.at < CACHE_MS ? hit.limits : undefined;
  }

  async get(db: DbOrTrx, config: QuotaConfig, orgId: string, now: number): Promise<Limits> {
    const hit = this.peek(orgId, now);
    if (hit) return hit;
    const limits = await orgLimits(db, config, orgId);
    if (this.entries.size > 10_000) this.entries.clear();
    this.entries.set(orgId, { limits, at: now });
    return limits;
  }

  forget(orgId: string): void {
    this.entries.delete(orgId);
  }
}

export interface QuotaRuntime {
  readonly limits: LimitsCache;
}

export function createQuotaRuntime(): QuotaRuntime {
  return { limits: new LimitsCache() };
}
