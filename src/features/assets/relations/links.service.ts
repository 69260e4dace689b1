import type { Deps } from '../../../deps.ts';
import type { DbOrTrx } from '../../../core/db/connect.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import { publishEvent } from '../../../core/events/index.ts';
import { AppError } from '../../../core/http/errors.ts';
import { isUuid } from '../../../core/ids.ts';
import { loadAssetFor, visibleAmong } from '../access.ts';
import { findAsset, securityOf, type AssetWithOrg } from '../assets.repo.ts';

export const LINK_TYPES = ['child', 'derivative', 'placed-graphic'] as const;
export type LinkType = (typeof LINK_TYPES)[number];

export interface LinkItem {
  id?: string;
  linkType?: string;
}

export type LinkResult = { status: 'success' | 'error'; message: string; relationshipId?: string };

const relationshipId = (primary: string, secondary: string) => `${primary}-${secondary}`;

/** The training guide spells it placed_graphic; both spellings mean the same type. */
function normalizeType(value: string | undefined): LinkType | undefined {
  const v = value === 'placed_graphic' ? 'placed-graphic' : value;
  return (LINK_TYPES as readonly string[]).includes(v ?? '') ? (v as LinkType) : undefined;
}

/** A bad item list is refused as a whole, with the reference's message naming the item. */
export function checkItems(
  items: LinkItem[] | undefined,
  creating: boolean,
): { id: string; linkType: LinkType | undefined }[] {
  if (!items || items.length === 0)
    throw new AppError('validation_failed', 'Invalid Request: ["Missing Secondary Object IDs"]', {
      details: [{ field: 'body.secondaryIds', message: 'is required (at least one item)' }],
    });
  return items.map((item, i) => {
    const linkType = normalizeType(item.linkType);
    if (!item.id || (creating && !linkType)) {
      throw new AppError(
        'validation_failed',
        `Invalid Request: ["Missing Secondary Object ID or Link Type for Relationship ${i}"]`,
        {
          details: [{ field: `body.secondaryIds.${i}`, message: `needs id and linkType (${LINK_TYPES.join(', ')})` }],
        },
      );
    }
    return { id: item.id, linkType };
  });
}

/** GET /v1/asset/{id}/link: every relationship of the asset, either side, whose other asset the caller may view. */
export async function listLinks(deps: Deps, principal: Principal, id: string) {
  const { asset } = await loadAssetFor(deps.db, principal, id, 'asset.view');
  const rows = await deps.db
    .selectFrom('asset_links')
    .selectAll()
    .where('org_id', '=', principal.orgId)
    .where((eb) => eb.or([eb('primary_id', '=', asset.id), eb('secondary_id', '=', asset.id)]))
    .orderBy('created_at')
    .execute();
  const others = [...new Set(rows.map((r) => (r.primary_id === asset.id ? r.secondary_id : r.primary_id)))];
  const security = await securityOf(deps.db, principal.orgId, others);
  const otherRows = (await Promise.all(others.map((o) => findAsset(deps.db, principal.orgId, o)))).filter(
    (a) => a !== undefined,
  );
  const visible = new Set((await visibleAmong(deps.db, principal, otherRows, security)).map((a) => a.id));
  return rows
    .filter((r) => visible.has(r.primary_id === asset.id ? r.secondary_id : r.primary_id))
    .map((r) => ({
      primaryId: r.primary_id,
      secondaryId: r.secondary_id,
      linkType: r.link_type,
      relationshipId: relationshipId(r.primary_id, r.secondary_id),
      customerId: asset.customer_id,
      createdEpoch: r.created_at,
      lastUpdatedEpoch: r.updated_at,
    }));
}

/** Whether following `linkType` edges from `from` reaches `to` (a new edge to→from would close a cycle). */
async function reaches(deps: Deps, orgId: string, from: string, to: string, linkType: string): Promise<boolean> {
  const seen = new Set<string>([from]);
  let frontier = [from];
  while (frontier.length > 0 && seen.size < 100_000) {
    const rows = await deps.db
      .selectFrom('asset_links')
      .select('secondary_id')
      .where('org_id', '=', orgId)
      .where('link_type', '=', linkType)
      .where('primary_id', 'in', frontier)
      .execute();
    frontier = [];
    for (const r of rows) {
      if (r.secondary_id === to) return true;
      if (!seen.has(r.secondary_id)) {
        seen.add(r.secondary_id);
        frontier.push(r.secondary_id);
      }
    }
  }
  return false;
}

/** POST /v1/asset/{id}/link: per item, in request order; duplicates and same-type cycles are refused per item. */
export async function createLinks(
  deps: Deps,
  principal: Principal,
  id: string,
  items: LinkItem[] | undefined,
): Promise<LinkResult[]> {
  const checked = checkItems(items, true);
  const { asset: primary } = await loadAssetFor(deps.db, principal, id, 'asset.relationship');
  const results: LinkResult[] = [];
  for (const item of checked) {
    const secondary = isUuid(item.id) ? await findAsset(deps.db, principal.orgId, item.id) : undefined;
    if (!secondary || !(await visibleSecondary(deps, principal, secondary))) {
      results.push({ status: 'error', message: 'Failed to create Relationship: secondary asset not found' });
      continue;
    }
    const rid = relationshipId(primary.id, secondary.id);
    if (secondary.id === primary.id) {
      results.push({ status: 'error', message: 'Circular dependency', relationshipId: rid });
      continue;
    }
    const existing = await deps.db
      .selectFrom('asset_links')
      .select('link_type')
      .where('primary_id', '=', primary.id)
      .where('secondary_id', '=', secondary.id)
      .executeTakeFirst();
    if (existing) {
      results.push({
        status: 'error',
        message: existing.link_type === item.linkType ? 'Item already exists' : 'Relationship exists',
        relationshipId: rid,
      });
      continue;
    }
    if (await reaches(deps, principal.orgId, secondary.id, primary.id, item.linkType!)) {
      results.push({ status: 'error', message: 'Circular dependency', relationshipId: rid });
      continue;
    }
    const now = deps.clock.now();
    await deps.db.transaction().execute(async (trx) => {
      await insertLink(trx, {
        orgId: principal.orgId,
        primaryId: primary.id,
        secondaryId: secondary.id,
        linkType: item.linkType!,
        createdBy: principal.userId,
        now,
      });
      await publishEvent(trx, now, {
        orgId: principal.orgId,
        type: 'relationship.created',
        actor: principal.userId,
        data: { asset: { id: secondary.id }, relationship: { type: item.linkType!, parent: primary.id } },
      });
    });
    results.push({ status: 'success', message: 'Relationship created successfully', relationshipId: rid });
  }
  return results;
}

async function visibleSecondary(deps: Deps, principal: Principal, asset: AssetWithOrg): Promise<boolean> {
  return (
    (await visibleAmong(deps.db, principal, [asset], await securityOf(deps.db, principal.orgId, [asset.id]))).length ===
    1
  );
}

/** PATCH /v1/asset/{id}/link: removes relationships, per item. */
export async function removeLinks(
  deps: Deps,
  principal: Principal,
  id: string,
  items: LinkItem[] | undefined,
): Promise<LinkResult[]> {
  const checked = checkItems(items, false);
  const { asset: primary } = await loadAssetFor(deps.db, principal, id, 'asset.relationship');
  const results: LinkResult[] = [];
  for (const item of checked) {
    const found = isUuid(item.id) ? await findAsset(deps.db, principal.orgId, item.id) : undefined;
    // A secondary the caller may not view answers exactly as a missing one (no existence oracle), and stays linked.
    const secondary = found && (await visibleSecondary(deps, principal, found)) ? found : undefined;
    const rid = relationshipId(primary.id, secondary?.id ?? item.id);
    const row = secondary
      ? await deps.db
          .selectFrom('asset_links')
          .select('link_type')
          .where('primary_id', '=', primary.id)
          .where('secondary_id', '=', secondary.id)
          .executeTakeFirst()
      : undefined;
    if (!secondary || !row || (item.linkType && row.link_type !== item.linkType)) {
      results.push({ status: 'error', message: `relationship retrieval failed [${rid}]` });
      continue;
    }
    const now = deps.clock.now();
    await deps.db.transaction().execute(async (trx) => {
      await trx
        .deleteFrom('asset_links')
        .where('primary_id', '=', primary.id)
        .where('secondary_id', '=', secondary.id)
        .execute();
      await publishEvent(trx, now, {
        orgId: principal.orgId,
        type: 'relationship.deleted',
        actor: principal.userId,
        data: { asset: { id: secondary.id }, relationship: { type: row.link_type, parent: primary.id } },
      });
    });
    results.push({ status: 'success', message: 'Relationship deleted successfully', relationshipId: rid });
  }
  return results;
}

/** Writes one relationship row (no checks: callers have checked both assets and the link type). */
export async function insertLink(
  db: DbOrTrx,
  link: { orgId: string; primaryId: string; secondaryId: string; linkType: string; createdBy: string; now: number },
): Promise<void> {
  await db
    .insertInto('asset_links')
    .values({
      org_id: link.orgId,
      primary_id: link.primaryId,
      secondary_id: link.secondaryId,
      link_type: link.linkType,
      created_by: link.createdBy,
      created_at: link.now,
      updated_at: link.now,
    })
    .execute();
}
