import { PERMISSIONS, type Permission } from '../../core/authz/catalog.ts';
import { mayPerform, permissionsFor, requireAction, type Action } from '../../core/authz/permissions.ts';
import type { Principal } from '../../core/authz/principal.ts';
import type { DbOrTrx } from '../../core/db/connect.ts';
import { AppError, notFound } from '../../core/http/errors.ts';
import { findAsset, securityOf, type AssetSecurity, type AssetWithOrg } from './assets.repo.ts';

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

export interface AccessibleAsset {
  asset: AssetWithOrg;
  security: AssetSecurity;
  permissions: Set<Permission>;
}

export const assetNotFound = () => notFound('Asset');

/** Loads an asset the caller may view and checks `need`; 404 when invisible, 403 when visible but not allowed. */
export async function loadAsset(db: DbOrTrx, principal: Principal, id: string, ...need: Permission[]): Promise<AccessibleAsset> {
  const asset = await findAsset(db, principal.orgId, id);
  if (!asset) throw assetNotFound();
  const security = (await securityOf(db, principal.orgId, [asset.id])).get(asset.id)!;
  const permissions = callerPermissions(principal, security);
  if (!permissions.has('view')) throw assetNotFound();
  requirePermissions(permissions, need);
  return { asset, security, permissions };
}

/**
 * Loads an asset for `action` of the permission table (core/authz/permissions.ts): the caller's
 * role must hold the action's privileges (403), the asset must be viewable (404) and its templates
 * must grant the action's permissions (403).
 */
export async function loadAssetFor(db: DbOrTrx, principal: Principal, id: string, action: Action): Promise<AccessibleAsset> {
  requireAction(principal, action);
  return loadAsset(db, principal, id, ...permissionsFor(action));
}

export function requirePermissions(permissions: ReadonlySet<Permission>, need: readonly Permission[]): void {
  const missing = need.filter((p) => !permissions.has(p));
  if (missing.length > 0) throw new AppError('forbidden', `Missing permission on this asset: ${missing.map((p) => PERMISSIONS[p].name).join(', ')}`);
}

/** Whether the caller may act on assets at all (API keys act as their service account). */
export function canUpload(principal: Principal): boolean {
  return mayPerform(principal, 'asset.create');
}

/** Permission ids per group, as the reference's securityDenormalized. */
export function securityDenormalized(security: AssetSecurity): { groupId: string; permissions: string[] }[] {
  return [...security.byGroup]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([groupId, keys]) => ({ groupId, permissions: [...keys].map((k) => PERMISSIONS[k as Permission]?.id).filter(Boolean).sort() as string[] }));
}
