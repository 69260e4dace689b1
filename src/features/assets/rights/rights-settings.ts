import type { Principal } from '../../../core/authz/principal.ts';
import { requireAction } from '../../../core/authz/permissions.ts';
import { audit } from '../../../core/audit.ts';
import type { Deps } from '../../../deps.ts';
import { expiredDownloadsOf, type ExpiredDownloads } from './gate.ts';

/** GET /v1/rights/settings (who may read the quotas). */
export async function getRightsSettings(deps: Deps, principal: Principal) {
  requireAction(principal, 'quota.read');
  const row = await deps.db
    .selectFrom('org_rights_settings')
    .select('updated_at')
    .where('org_id', '=', principal.orgId)
    .executeTakeFirst();
  return {
    expiredDownloads: await expiredDownloadsOf(deps.db, principal.orgId),
    updatedEpoch: row ? Number(row.updated_at) : null,
  };
}

/** PATCH /v1/rights/settings (Quota Management); audited. */
export async function updateRightsSettings(deps: Deps, principal: Principal, mode: ExpiredDownloads) {
  requireAction(principal, 'quota.manage');
  const orgId = principal.orgId;
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    const before = await expiredDownloadsOf(trx, orgId);
    await trx
      .insertInto('org_rights_settings')
      .values({ org_id: orgId, expired_downloads: mode, updated_by: principal.userId, updated_at: now })
      .onConflict((oc) =>
        oc.column('org_id').doUpdateSet({ expired_downloads: mode, updated_by: principal.userId, updated_at: now }),
      )
      .execute();
    await audit(trx, {
      orgId,
      at: now,
      actorId: principal.userId,
      action: 'rights_settings.updated',
      targetType: 'organization',
      targetId: orgId,
      changes: before === mode ? {} : { expiredDownloads: { before, after: mode } },
    });
  });
  return getRightsSettings(deps, principal);
}
