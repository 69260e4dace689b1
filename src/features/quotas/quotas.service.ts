import type { Principal } from '../../core/authz/principal.ts';
import { requireAction } from '../../core/authz/permissions.ts';
import { audit } from '../../core/audit.ts';
import type { DbOrTrx } from '../../core/db/connect.ts';
import { invalidField } from '../../core/http/errors.ts';
import type { Deps } from '../../deps.ts';
import { orgHoldings } from './holdings.ts';
import { orgLimits, QUOTA_COLUMNS, QUOTA_NAMES, QUOTA_SETTINGS, type QuotaName } from './limits.ts';
import { API_KEY_WINDOW, HOUR_MS, MINUTE_MS, UPLOAD_WINDOW } from './rates.ts';
import { currentWindow } from './windows.ts';

/** Share mails the organization queued in the last hour: the assets feature counts its outbox (wired in app.ts). */
export type ShareMailUsage = (db: DbOrTrx, orgId: string, now: number) => Promise<number>;

export type QuotaUpdate = Partial<Record<QuotaName, number | null>>;

const iso = (ms: number) => new Date(ms).toISOString();

/** GET /v1/quotas: every quota with its limit, where it comes from and the current use. */
export async function getQuotas(deps: Deps, principal: Principal, shareMailUsage: ShareMailUsage) {
  requireAction(principal, 'quota.read');
  const orgId = principal.orgId;
  const now = deps.clock.now();
  const [limits, held, own, uploads, requests, mails] = await Promise.all([
    orgLimits(deps.db, deps.config, orgId),
    orgHoldings(deps.db, orgId),
    deps.db.selectFrom('org_quotas').selectAll().where('org_id', '=', orgId).executeTakeFirst(),
    currentWindow(deps.db, orgId, UPLOAD_WINDOW, HOUR_MS, now),
    currentWindow(deps.db, orgId, API_KEY_WINDOW, MINUTE_MS, now),
    shareMailUsage(deps.db, orgId, now),
  ]);
  const state = (name: QuotaName, used: number) => {
    const own_ = own?.[QUOTA_COLUMNS[name]];
    const { limit, source } = limits[name];
    return {
      limit,
      source,
      organizationValue: own_ === null || own_ === undefined ? null : Number(own_),
      setting: QUOTA_SETTINGS[name],
      used,
      remaining: limit === null ? null : Math.max(0, limit - used),
    };
  };
  const windowed = (w: { start: number; subjects: { id: string; count: number }[] }, length: number) => ({
    window: { start: iso(w.start), end: iso(w.start + length) },
    subjects: w.subjects.map((s) => ({ id: s.id, used: s.count })),
  });
  return {
    usage: held,
    quotas: {
      storageBytes: state('storageBytes', held.storageBytes),
      assets: state('assets', held.assets),
      uploadsPerUserPerHour: {
        ...state('uploadsPerUserPerHour', uploads.subjects[0]?.count ?? 0),
        ...windowed(uploads, HOUR_MS),
      },
      shareMailPerHour: {
        ...state('shareMailPerHour', mails),
        window: { start: iso(now - HOUR_MS), end: iso(now) },
      },
      apiRequestsPerKeyPerMinute: {
        ...state('apiRequestsPerKeyPerMinute', requests.subjects[0]?.count ?? 0),
        ...windowed(requests, MINUTE_MS),
      },
    },
    updatedEpoch: own ? Number(own.updated_at) : null,
  };
}

/** PATCH /v1/quotas: sets the named quotas (a number, 0 for none, null for the server default); audited. */
export async function updateQuotas(
  deps: Deps,
  principal: Principal,
  input: QuotaUpdate,
  shareMailUsage: ShareMailUsage,
) {
  requireAction(principal, 'quota.manage');
  const names = QUOTA_NAMES.filter((n) => input[n] !== undefined);
  if (names.length === 0) throw invalidField('body', `send at least one of ${QUOTA_NAMES.join(', ')}`);
  const orgId = principal.orgId;
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    const before = await trx.selectFrom('org_quotas').selectAll().where('org_id', '=', orgId).executeTakeFirst();
    const values: Record<string, number | null> = {};
    const changes: Record<string, { before: unknown; after: unknown }> = {};
    for (const name of names) {
      const column = QUOTA_COLUMNS[name];
      const previous = before?.[column] ?? null;
      const next = input[name] ?? null;
      values[column] = next;
      if ((previous === null ? null : Number(previous)) !== next)
        changes[name] = { before: previous === null ? null : Number(previous), after: next };
    }
    if (before) {
      await trx
        .updateTable('org_quotas')
        .set({ ...values, updated_by: principal.userId, updated_at: now })
        .where('org_id', '=', orgId)
        .execute();
    } else {
      await trx
        .insertInto('org_quotas')
        .values({
          org_id: orgId,
          storage_bytes: null,
          assets: null,
          uploads_per_user_per_hour: null,
          share_mail_per_hour: null,
          api_requests_per_key_per_minute: null,
          ...values,
          updated_by: principal.userId,
          updated_at: now,
        })
        .execute();
    }
    await audit(trx, {
      orgId,
      at: now,
      actorId: principal.userId,
      action: 'quotas.updated',
      targetType: 'organization',
      targetId: orgId,
      changes,
    });
  });
  deps.runtime.quotas.limits.forget(orgId);
  return getQuotas(deps, principal, shareMailUsage);
}
