import { randomUUID } from 'node:crypto';
import type { Deps } from '../../../deps.ts';
import type { DbOrTrx } from '../../../core/db/connect.ts';
import { insertRows } from '../../../core/db/insert-rows.ts';
import { requireAction } from '../../../core/authz/permissions.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import { audit } from '../../../core/audit.ts';
import { AppError, notFound } from '../../../core/http/errors.ts';
import { loadAssetFor } from '../access.ts';
import type { AssetWithOrg } from '../assets.repo.ts';

/**
 * Download links (GET /v1/asset/{id}/content) and exposed URLs (POST /v1/asset/expose) are each a
 * row their URL names (signed): DELETE /v1/asset/link/{linkId} ends one at once (410), like
 * DELETE /v1/asset/share/{shareId} ends a share. Rows go with their asset (purge cascades) and
 * expired ones are pruned when an organization issues new links.
 */
export interface LinkToIssue {
  id: string;
  asset: AssetWithOrg;
  component: string;
  expiresAtSeconds: number;
}

export const newLinkId = (): string => randomUUID();

/** Records issued links (in the caller's transaction when they belong with other writes). */
export async function recordContentLinks(
  db: DbOrTrx,
  principal: Principal,
  now: number,
  links: readonly LinkToIssue[],
): Promise<void> {
  if (links.length === 0) return;
  await db
    .deleteFrom('asset_content_links')
    .where('org_id', '=', principal.orgId)
    .where('expires_at', '<', now)
    .execute();
  await insertRows(
    db,
    'asset_content_links',
    links.map((l) => ({
      id: l.id,
      org_id: principal.orgId,
      asset_id: l.asset.id,
      component: l.component,
      created_by: principal.userId,
      created_at: now,
      expires_at: l.expiresAtSeconds * 1000,
      revoked_at: null,
    })),
  );
}

/** For the signed content route: a link naming a record serves only while the record stands (410 once revoked). */
export async function assertLinkLive(
  deps: Deps,
  linkId: string,
  asset: AssetWithOrg,
  component: string,
): Promise<void> {
  const row = await deps.db
    .selectFrom('asset_content_links')
    .select(['asset_id', 'component', 'revoked_at'])
    .where('id', '=', linkId)
    .where('org_id', '=', asset.org_id)
    .executeTakeFirst();
  if (!row || row.revoked_at !== null || row.asset_id !== asset.id || row.component !== component)
    throw new AppError('gone', 'This link was revoked');
}

/**
 * DELETE /v1/asset/link/{linkId}: ends one download link or exposed URL at once. The person it was
 * made for (still holding the Download privilege), or someone who may share the asset (what governs
 * handing its bytes to others: Download privilege, View + Download + Share on it) — a colleague who
 * may only download it cannot end another's link (403). A link of an asset the caller may not see,
 * or of another organization, is a 404 as for a missing one.
 */
export async function revokeContentLink(deps: Deps, principal: Principal, linkId: string): Promise<void> {
  requireAction(principal, 'asset.download');
  const row = await deps.db
    .selectFrom('asset_content_links')
    .selectAll()
    .where('id', '=', linkId.toLowerCase())
    .where('org_id', '=', principal.orgId)
    .executeTakeFirst();
  if (!row) throw notFound('Link');
  if (row.created_by !== principal.userId) {
    try {
      await loadAssetFor(deps.db, principal, row.asset_id, 'asset.share');
    } catch (error) {
      if (error instanceof AppError && error.code === 'not_found') throw notFound('Link');
      if (error instanceof AppError && error.code === 'forbidden')
        throw new AppError(
          'forbidden',
          'Only the person a link was made for, or someone who may share the asset, revokes it',
        );
      throw error;
    }
  }
  if (row.revoked_at !== null) return;
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    await trx
      .updateTable('asset_content_links')
      .set({ revoked_at: now })
      .where('id', '=', row.id)
      .where('org_id', '=', principal.orgId)
      .execute();
    await audit(trx, {
      orgId: principal.orgId,
      at: now,
      actorId: principal.userId,
      action: 'asset.link_revoked',
      targetType: 'asset',
      targetId: row.asset_id,
      data: { linkId: row.id, component: row.component },
    });
  });
}
