import type { Kysely, Selectable } from 'kysely';
import type { DbOrTrx } from '../../core/db/connect.ts';
import { prepared } from '../../core/db/prepared.ts';
import type { AssetsTable, Database } from '../../core/db/schema.ts';
import { isUuid } from '../../core/ids.ts';
import { customerIdColumn, securityTemplateNames, userNames } from '../identity/index.ts';

export type AssetRow = Selectable<AssetsTable>;
export type AssetWithOrg = AssetRow & { customer_id: string };

const byIdQuery = (db: Kysely<Database>, p: { readonly orgId: string; readonly id: string }) =>
  db
    .selectFrom('assets')
    .selectAll('assets')
    .select((eb) => customerIdColumn(db, eb.ref('assets.org_id')).as('customer_id'))
    .where('assets.org_id', '=', p.orgId)
    .where((eb) => eb.or([eb('assets.id', '=', p.id), eb('assets.file_id', '=', p.id)]));
// The read path of every asset request: compiled once (core/db/prepared.ts). An asset exists from
// the moment it is created, its content pending or not (reference §7.2: metadata-only until it arrives).
export const visibleAssetQuery = prepared<{ orgId: string; id: string }>()((db, p) => byIdQuery(db, p));

/** One version by objectId or fileId, with the organization's customer id, whether its content has arrived or not. */
export async function findAsset(db: DbOrTrx, orgId: string, id: string): Promise<AssetWithOrg | undefined> {
  if (!isUuid(id)) return undefined;
  const rows = await visibleAssetQuery.execute(db, { orgId, id });
  return rows[0] as AssetWithOrg | undefined;
}

/** The version chain an id belongs to (objectId, fileId or originalFileId of any version). */
export async function findChainId(db: DbOrTrx, orgId: string, id: string): Promise<string | undefined> {
  if (!isUuid(id)) return undefined;
  const row = await db
    .selectFrom('assets')
    .select('original_file_id')
    .where('org_id', '=', orgId)
    .where((eb) => eb.or([eb('id', '=', id), eb('file_id', '=', id), eb('original_file_id', '=', id)]))
    .limit(1)
    .executeTakeFirst();
  return row?.original_file_id;
}

export async function currentOfChain(db: DbOrTrx, orgId: string, chainId: string): Promise<AssetWithOrg | undefined> {
  return db
    .selectFrom('assets')
    .selectAll('assets')
    .select((eb) => customerIdColumn(db, eb.ref('assets.org_id')).as('customer_id'))
    .where('assets.org_id', '=', orgId)
    .where('assets.original_file_id', '=', chainId)
    .where('assets.is_current', '=', 1)
    .executeTakeFirst();
}

export async function versionsOfChain(db: DbOrTrx, orgId: string, chainId: string): Promise<AssetWithOrg[]> {
  return db
    .selectFrom('assets')
    .selectAll('assets')
    .select((eb) => customerIdColumn(db, eb.ref('assets.org_id')).as('customer_id'))
    .where('assets.org_id', '=', orgId)
    .where('assets.original_file_id', '=', chainId)
    .orderBy('assets.version_number', 'desc')
    .execute();
}

export interface AssetSecurity {
  templateIds: string[];
  /** Every group's permission keys, over all the asset's templates. */
  byGroup: Map<string, Set<string>>;
  /** Template id → name, read in the same query (responses and events name the templates). */
  names?: Map<string, string>;
}

export const securityOfOneQuery = prepared<{ orgId: string; assetId: string }>()((db, p) =>
  db
    .selectFrom('asset_security as s')
    .innerJoin('security_templates as t', 't.id', 's.template_id')
    .leftJoin('security_template_permissions as p', 'p.template_id', 's.template_id')
    .select(['s.asset_id', 's.template_id', 't.name as template_name', 'p.group_id', 'p.permission'])
    .where('s.org_id', '=', p.orgId)
    .where('s.asset_id', '=', p.assetId),
);

/** The asset's templates, their names and what they grant, in one query (asset_security ⋈ security_templates ⋈ security_template_permissions). */
export async function securityOf(
  db: DbOrTrx,
  orgId: string,
  assetIds: readonly string[],
): Promise<Map<string, AssetSecurity>> {
  const out = new Map<string, AssetSecurity>();
  if (assetIds.length === 0) return out;
  for (const id of assetIds) out.set(id, { templateIds: [], byGroup: new Map(), names: new Map() });
  const rows =
    assetIds.length === 1
      ? await securityOfOneQuery.execute(db, { orgId, assetId: assetIds[0]! })
      : await db
          .selectFrom('asset_security as s')
          .innerJoin('security_templates as t', 't.id', 's.template_id')
          .leftJoin('security_template_permissions as p', 'p.template_id', 's.template_id')
          .select(['s.asset_id', 's.template_id', 't.name as template_name', 'p.group_id', 'p.permission'])
          .where('s.org_id', '=', orgId)
          .where('s.asset_id', 'in', [...assetIds])
          .execute();
  for (const row of rows) {
    const entry = out.get(row.asset_id)!;
    if (!entry.templateIds.includes(row.template_id)) entry.templateIds.push(row.template_id);
    entry.names!.set(row.template_id, row.template_name);
    if (row.group_id && row.permission) {
      let set = entry.byGroup.get(row.group_id);
      if (!set) entry.byGroup.set(row.group_id, (set = new Set()));
      set.add(row.permission);
    }
  }
  for (const entry of out.values()) entry.templateIds.sort();
  return out;
}

/** Replaces the asset's templates (`fresh`: a new asset, which has none yet). */
export async function setAssetSecurity(
  db: DbOrTrx,
  orgId: string,
  assetId: string,
  templateIds: readonly string[],
  options: { fresh?: boolean } = {},
): Promise<void> {
  if (!options.fresh)
    await db.deleteFrom('asset_security').where('org_id', '=', orgId).where('asset_id', '=', assetId).execute();
  const unique = [...new Set(templateIds.map((t) => t.toLowerCase()))];
  if (unique.length > 0)
    await db
      .insertInto('asset_security')
      .values(unique.map((template_id) => ({ org_id: orgId, asset_id: assetId, template_id })))
      .execute();
}

/** Which of `ids` are security templates of the organization. */
export async function existingTemplates(
  db: DbOrTrx,
  orgId: string,
  ids: readonly string[],
): Promise<Map<string, string>> {
  const valid = ids.filter(isUuid).map((id) => id.toLowerCase());
  return securityTemplateNames(db, orgId, valid);
}

export async function templateNames(
  db: DbOrTrx,
  orgId: string,
  ids: readonly string[],
): Promise<{ id: string; name: string }[]> {
  const names = await existingTemplates(db, orgId, ids);
  return ids.filter((id) => names.has(id)).map((id) => ({ id, name: names.get(id)! }));
}

/** Whether any asset of the organization (live or in the recycle bin) holds this content. */
/** Assets of the organization (not in the recycle bin) whose content is these bytes, but `exceptId`: duplicates (issue 25 item 5). */
export async function sameContent(
  db: DbOrTrx,
  orgId: string,
  sha256: string,
  exceptId?: string,
): Promise<{ id: string; original_file_id: string; is_current: number; metadata_template_id: string | null }[]> {
  let q = db
    .selectFrom('assets')
    .select(['id', 'original_file_id', 'is_current', 'metadata_template_id'])
    .where('org_id', '=', orgId)
    .where('sha256', '=', sha256)
    .where('content_state', '=', 'available')
    .where('deleted_at', 'is', null);
  if (exceptId) q = q.where('id', '!=', exceptId);
  return q.orderBy('created_at').limit(100).execute();
}

export async function contentHeld(db: DbOrTrx, orgId: string, sha256: string): Promise<boolean> {
  return (
    (await db
      .selectFrom('assets')
      .select('id')
      .where('org_id', '=', orgId)
      .where('sha256', '=', sha256)
      .limit(1)
      .executeTakeFirst()) !== undefined
  );
}

/**
 * The version before `versionNumber` in a chain, as the reference's `version.previous` names it
 * (webhooks/schemas/version.yaml): its asset, number, and who created it when.
 */
export async function previousVersionOf(db: DbOrTrx, orgId: string, originalFileId: string, versionNumber: number) {
  const row = await db
    .selectFrom('assets as a')
    .select(['a.id', 'a.version_number', 'a.created_by', 'a.created_at'])
    .where('a.org_id', '=', orgId)
    .where('a.original_file_id', '=', originalFileId)
    .where('a.version_number', '<', versionNumber)
    .orderBy('a.version_number', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!row) return null;
  const creator = row.created_by ? (await userNames(db, orgId, [row.created_by])).get(row.created_by) : undefined;
  return {
    assetId: row.id,
    versionNumber: row.version_number,
    createdBy: {
      userId: row.created_by,
      firstName: creator?.firstName ?? '',
      lastName: creator?.lastName ?? '',
      time: new Date(Number(row.created_at)).toISOString(),
    },
  };
}

/** Assets by id in any organization, with their organization's customer id (the search indexer; at most a batch of ids). */
export async function assetsForIndexing(db: DbOrTrx, ids: readonly string[]): Promise<AssetToIndex[]> {
  if (ids.length === 0) return [];
  return (await db
    .selectFrom('assets')
    .selectAll('assets')
    .select((eb) => customerIdColumn(db, eb.ref('assets.org_id')).as('customer_id'))
    .where('assets.id', 'in', [...ids])
    .execute()) as AssetToIndex[];
}

/**
 * An asset as the search indexer reads it: with its organization's customer id and `row_version`,
 * which a trigger moves on every update of the row (migration 0070, decision 0039; bigint, so a
 * string on PostgreSQL). Not in AssetsTable: no code writes it.
 */
export type AssetToIndex = AssetWithOrg & { row_version: number | string };

/** Which of `ids` are still stored assets (any organization, any state). */
/** The ids among `ids` of the organization's assets that are not in the recycle bin. */
export async function liveAssetIds(db: DbOrTrx, orgId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  return new Set(
    (
      await db
        .selectFrom('assets')
        .select('id')
        .where('org_id', '=', orgId)
        .where('id', 'in', [...ids])
        .where('deleted_at', 'is', null)
        .execute()
    ).map((r) => r.id),
  );
}

export async function existingAssetIds(db: DbOrTrx, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  return new Set(
    (
      await db
        .selectFrom('assets')
        .select('id')
        .where('id', 'in', [...ids])
        .execute()
    ).map((r) => r.id),
  );
}

/** The objectId of each of `ids` (objectIds or fileIds) that names an asset of the organization, keyed by the id given. */
export async function objectIdsByAnyId(
  db: DbOrTrx,
  orgId: string,
  ids: readonly string[],
): Promise<Map<string, string>> {
  const byAnyId = new Map<string, string>();
  if (ids.length === 0) return byAnyId;
  const rows = await db
    .selectFrom('assets')
    .select(['id', 'file_id'])
    .where('org_id', '=', orgId)
    .where((eb) => eb.or([eb('id', 'in', [...ids]), eb('file_id', 'in', [...ids])]))
    .execute();
  for (const row of rows) {
    byAnyId.set(row.id, row.id);
    byAnyId.set(row.file_id, row.id);
  }
  return byAnyId;
}

/** What the CDN origin needs to serve one asset's stored content (by objectId). */
export function servedContentOf(db: DbOrTrx, orgId: string, id: string) {
  return db
    .selectFrom('assets')
    .select([
      'blob_key',
      'content_type',
      'sha256',
      'size',
      'updated_at',
      'filename',
      'content_state',
      'deleted_at',
      'metadata_denormalized',
    ])
    .where('id', '=', id)
    .where('org_id', '=', orgId)
    .executeTakeFirst();
}
