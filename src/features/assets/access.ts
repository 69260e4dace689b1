import { PERMISSIONS, type Permission } from '../../core/authz/catalog.ts';
import { mayPerform, permissionsFor, requireAction, type Action } from '../../core/authz/permissions.ts';
import type { Principal } from '../../core/authz/principal.ts';
import type { DbOrTrx } from '../../core/db/connect.ts';
import { AppError, notFound } from '../../core/http/errors.ts';
import { findAsset, securityOf, type AssetSecurity, type AssetWithOrg } from './assets.repo.ts';
import { templateAccess, templateOpenTo, type TemplateAccess } from '../metadata/index.ts';

/**
 * What the caller may do to an asset: the union, over the asset's security templates, of what
 * each grants to the caller's groups. An asset the caller may not view does not exist for them.
 */
export function callerPermissions(principal: Principal, security: AssetSecurity): Set<Permission> {
  const out = new Set<Permission>();
  for (const groupId of principal.groupIds) {
    const granted = security.byGroup.get(groupId);
    if (granted) for (const p of granted) out.add(p as Permission);
  }
  return out;
}

/**
 * Whether any of the caller's groups is granted `permission` by any of the asset's templates: the
 * same as `callerPermissions(…).has(permission)`, without building the set (the cached GET path).
 */
export function isGranted(principal: Principal, security: AssetSecurity, permission: Permission): boolean {
  for (const groupId of principal.groupIds) if (security.byGroup.get(groupId)?.has(permission)) return true;
  return false;
}

/**
 * The one visibility rule for an asset (every route, story-board view and job that shows one asks
 * it; search applies the same rule in SQL): View through one of its security templates, and its
 * metadata template open to the caller (see templateOpenTo). An asset failing it does not exist
 * for the caller (404).
 */
export function assetVisibleTo(principal: Principal, security: AssetSecurity, access: TemplateAccess): boolean {
  return isGranted(principal, security, 'view') && templateOpenTo(principal, access);
}

/** As assetVisibleTo, for several assets: their metadata templates' access read once per template. */
export async function visibleAmong<T extends { id: string; metadata_template_id: string | null }>(
  db: DbOrTrx,
  principal: Principal,
  assets: readonly T[],
  security: ReadonlyMap<string, AssetSecurity>,
): Promise<T[]> {
  const access = new Map<string | null, TemplateAccess>();
  const out: T[] = [];
  for (const a of assets) {
    const s = security.get(a.id);
    if (!s || !isGranted(principal, s, 'view')) continue;
    if (!access.has(a.metadata_template_id))
      access.set(a.metadata_template_id, await templateAccess(db, principal.orgId, a.metadata_template_id));
    if (templateOpenTo(principal, access.get(a.metadata_template_id)!)) out.push(a);
  }
  return out;
}

export interface AccessibleAsset {
  asset: AssetWithOrg;
  security: AssetSecurity;
  permissions: Set<Permission>;
}

export const assetNotFound = () => notFound('Asset');

/** Loads an asset the caller may view and checks `need`; 404 when invisible, 403 when visible but not allowed. */
export async function loadAsset(
  db: DbOrTrx,
  principal: Principal,
  id: string,
  ...need: Permission[]
): Promise<AccessibleAsset> {
  const asset = await findAsset(db, principal.orgId, id);
  if (!asset) throw assetNotFound();
  const security = (await securityOf(db, principal.orgId, [asset.id])).get(asset.id)!;
  const permissions = callerPermissions(principal, security);
  if (
    !permissions.has('view') ||
    !templateOpenTo(principal, await templateAccess(db, principal.orgId, asset.metadata_template_id))
  )
    throw assetNotFound();
  requirePermissions(permissions, need);
  return { asset, security, permissions };
}

/**
 * Loads an asset for `action` of the permission table (core/authz/permissions.ts): the caller's
 * role must hold the action's privileges (403), the asset must be viewable (404) and its templates
 * must grant the action's permissions (403).
 */
export async function loadAssetFor(
  db: DbOrTrx,
  principal: Principal,
  id: string,
  action: Action,
): Promise<AccessibleAsset> {
  requireAction(principal, action);
  return loadAsset(db, principal, id, ...permissionsFor(action));
}

export function requirePermissions(permissions: ReadonlySet<Permission>, need: readonly Permission[]): void {
  const missing = need.filter((p) => !permissions.has(p));
  if (missing.length > 0)
    throw new AppError(
      'forbidden',
      `Missing permission on this asset: ${missing.map((p) => PERMISSIONS[p].name).join(', ')}`,
    );
}

/** Whether the caller may act on assets at all (API keys act as their service account). */
export function canUpload(principal: Principal): boolean {
  return mayPerform(principal, 'asset.create');
}

/** Permission ids per group, as the reference's securityDenormalized. */
export function securityDenormalized(security: AssetSecurity): { groupId: string; permissions: string[] }[] {
  return [...security.byGroup]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([groupId, keys]) => ({
      groupId,
      permissions: [...keys]
        .map((k) => PERMISSIONS[k as Permission]?.id)
        .filter(Boolean)
        .sort() as string[],
    }));
}
