import type { DbOrTrx } from '../../core/db/connect.ts';

/** SCIM's own facts about identity's users and groups (table scim_resources): externalId and deletion. */
export type ResourceType = 'User' | 'Group';

/** The organization's resources of this type the provider deleted, as a subquery (identity leaves them out). */
export function deletedIds(db: DbOrTrx, orgId: string, type: ResourceType) {
  return db
    .selectFrom('scim_resources')
    .select('resource_id')
    .where('org_id', '=', orgId)
    .where('resource_type', '=', type)
    .where('deleted_at', 'is not', null);
}

/** External ids of these resources (those that have one). */
export async function externalIds(
  db: DbOrTrx,
  orgId: string,
  type: ResourceType,
  ids: readonly string[],
): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('scim_resources')
    .select(['resource_id', 'external_id'])
    .where('org_id', '=', orgId)
    .where('resource_type', '=', type)
    .where('resource_id', 'in', [...new Set(ids)])
    .where('external_id', 'is not', null)
    .execute();
  return new Map(rows.map((r) => [r.resource_id, r.external_id!]));
}

/** Ids of the organization's live resources with this external id (case-exact, as RFC 7643 defines it). */
export async function idsByExternalId(
  db: DbOrTrx,
  orgId: string,
  type: ResourceType,
  externalId: string,
): Promise<string[]> {
  const rows = await db
    .selectFrom('scim_resources')
    .select('resource_id')
    .where('org_id', '=', orgId)
    .where('resource_type', '=', type)
    .where('external_id', '=', externalId)
    .where('deleted_at', 'is', null)
    .execute();
  return rows.map((r) => r.resource_id);
}

/** Sets (or with null clears) a resource's external id; `deleted` marks it deleted by the provider. */
export async function recordResource(
  db: DbOrTrx,
  orgId: string,
  type: ResourceType,
  id: string,
  now: number,
  change: { externalId?: string | null; deleted?: boolean },
): Promise<void> {
  const values = {
    ...(change.externalId !== undefined ? { external_id: change.externalId } : {}),
    ...(change.deleted !== undefined ? { deleted_at: change.deleted ? now : null } : {}),
    updated_at: now,
  };
  await db
    .insertInto('scim_resources')
    .values({
      resource_type: type,
      resource_id: id,
      org_id: orgId,
      external_id: change.externalId ?? null,
      deleted_at: change.deleted ? now : null,
      updated_at: now,
    })
    .onConflict((oc) => oc.columns(['resource_type', 'resource_id']).doUpdateSet(values))
    .execute();
}

/** Forgets a resource (a deleted group: identity deleted its row). */
export async function forgetResource(db: DbOrTrx, orgId: string, type: ResourceType, id: string): Promise<void> {
  await db
    .deleteFrom('scim_resources')
    .where('org_id', '=', orgId)
    .where('resource_type', '=', type)
    .where('resource_id', '=', id)
    .execute();
}
