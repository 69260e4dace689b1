import type { DbOrTrx } from '../db/connect.ts';
import { forbidden } from '../http/errors.ts';
import { PERMISSIONS, PRIVILEGES, isPermission, permissionFromId, type Permission, type Privilege } from './catalog.ts';
import { permitted } from './permissions.ts';
import type { Principal } from './principal.ts';

/**
 * The only place privilege and permission rules live.
 * - Privileges come from the caller's role (for an API key, already capped by its creator's).
 * - Permissions on a thing are the union, over the thing's security templates, of what each
 *   template grants to any of the caller's groups.
 */
export function hasPrivilege(principal: Principal, privilege: Privilege): boolean {
  return principal.privileges.has(privilege);
}

/** Throws 403 unless the caller holds every named privilege. */
export function requirePrivileges(principal: Principal, ...privileges: Privilege[]): void {
  const missing = privileges.filter((p) => !principal.privileges.has(p));
  if (missing.length > 0) {
    throw forbidden(`Missing privilege: ${missing.map((p) => PRIVILEGES[p].name).join(', ')}`);
  }
}

/** Throws 403 unless the caller holds at least one of the named privileges. */
export function requireAnyPrivilege(principal: Principal, ...privileges: Privilege[]): void {
  if (!privileges.some((p) => principal.privileges.has(p))) {
    throw forbidden(`Missing privilege: one of ${privileges.map((p) => PRIVILEGES[p].name).join(', ')}`);
  }
}

export async function permissionsOn(
  db: DbOrTrx,
  principal: Principal,
  templateIds: readonly string[],
): Promise<Set<Permission>> {
  const granted = new Set<Permission>();
  if (templateIds.length === 0 || principal.groupIds.length === 0) return granted;
  const rows = await db
    .selectFrom('security_template_permissions')
    .select('permission')
    .distinct()
    .where('org_id', '=', principal.orgId)
    .where('template_id', 'in', [...templateIds])
    .where('group_id', 'in', [...principal.groupIds])
    .execute();
  for (const row of rows) if (isPermission(row.permission)) granted.add(row.permission);
  return granted;
}

export async function hasPermission(
  db: DbOrTrx,
  principal: Principal,
  templateIds: readonly string[],
  permission: Permission,
): Promise<boolean> {
  return (await permissionsOn(db, principal, templateIds)).has(permission);
}

/**
 * Whether `candidate` holds no privilege that `holder` lacks: used to refuse impersonating,
 * or minting keys for, someone more powerful than the caller.
 */
export function privilegesWithin(candidate: ReadonlySet<Privilege>, holder: ReadonlySet<Privilege>): boolean {
  for (const p of candidate) if (!holder.has(p)) return false;
  return true;
}

const NOT_OWN_SIGN_IN: Record<Exclude<Principal['via'], 'password'>, string> = {
  api_key: 'an API key cannot',
  impersonation: 'an impersonation token cannot',
  oauth: 'a third-party (OAuth) token cannot',
};

/**
 * Only a person's own sign-in creates or changes lasting credentials (passwords, users, API keys,
 * OAuth clients): API keys, impersonation tokens and third-party OAuth tokens get 403.
 */
export function requireOwnSignIn(principal: Principal, action: string): void {
  if (principal.via === 'password' && principal.kind === 'user' && !principal.impersonatorId && !principal.scopes)
    return;
  const via = principal.via === 'password' ? 'api_key' : principal.via;
  throw forbidden(`${action} needs your own sign-in: ${NOT_OWN_SIGN_IN[via]} do it`);
}

/** Subquery of template ids that grant `permission` to any of the caller's groups, for SQL filters (indexed). */
export function templatesGranting(db: DbOrTrx, principal: Principal, permission: Permission) {
  return db
    .selectFrom('security_template_permissions')
    .select('template_id')
    .where('org_id', '=', principal.orgId)
    .where('group_id', 'in', principal.groupIds.length > 0 ? [...principal.groupIds] : [''])
    .where('permission', '=', permission);
}

/** What the caller's groups are granted by each of `templateIds` (template id → permissions; one query). */
export async function permissionsByTemplate(
  db: DbOrTrx,
  principal: Principal,
  templateIds: readonly string[],
): Promise<Map<string, Set<Permission>>> {
  const out = new Map<string, Set<Permission>>();
  if (templateIds.length === 0 || principal.groupIds.length === 0) return out;
  const rows = await db
    .selectFrom('security_template_permissions')
    .select(['template_id', 'permission'])
    .where('org_id', '=', principal.orgId)
    .where('template_id', 'in', [...new Set(templateIds)])
    .where('group_id', 'in', [...principal.groupIds])
    .execute();
  for (const row of rows) {
    if (!isPermission(row.permission)) continue;
    const set = out.get(row.template_id) ?? new Set<Permission>();
    set.add(row.permission);
    out.set(row.template_id, set);
  }
  return out;
}

/** The groups granted `permission` on each of the named templates (template id → group ids). */
export async function groupsGranting(
  db: DbOrTrx,
  orgId: string,
  templateIds: readonly string[],
  permission: Permission,
): Promise<Map<string, Set<string>>> {
  const byTemplate = new Map<string, Set<string>>();
  if (templateIds.length === 0) return byTemplate;
  const rows = await db
    .selectFrom('security_template_permissions')
    .select(['template_id', 'group_id'])
    .where('org_id', '=', orgId)
    .where('template_id', 'in', [...templateIds])
    .where('permission', '=', permission)
    .execute();
  for (const row of rows) {
    const groups = byTemplate.get(row.template_id) ?? new Set<string>();
    groups.add(row.group_id);
    byTemplate.set(row.template_id, groups);
  }
  return byTemplate;
}

/**
 * Keeps the normalised grants (one row per template, group and permission) in step with a
 * template's grants. Call in the transaction that writes security_template_grants.
 */
export async function writeTemplatePermissions(
  db: DbOrTrx,
  orgId: string,
  templateId: string,
  grants: ReadonlyMap<string, readonly string[]>,
): Promise<void> {
  await db
    .deleteFrom('security_template_permissions')
    .where('org_id', '=', orgId)
    .where('template_id', '=', templateId)
    .execute();
  const rows: { org_id: string; template_id: string; group_id: string; permission: string }[] = [];
  for (const [groupId, ids] of grants) {
    const keys = new Set(ids.map((id) => permissionFromId(id)).filter((p): p is Permission => p !== undefined));
    for (const permission of keys) rows.push({ org_id: orgId, template_id: templateId, group_id: groupId, permission });
  }
  if (rows.length > 0) await db.insertInto('security_template_permissions').values(rows).execute();
}

/** Every permission the named templates grant, to any group (what applying them hands out). */
export async function permissionsGrantedBy(
  db: DbOrTrx,
  orgId: string,
  templateIds: readonly string[],
): Promise<Set<Permission>> {
  const granted = new Set<Permission>();
  if (templateIds.length === 0) return granted;
  const rows = await db
    .selectFrom('security_template_permissions')
    .select('permission')
    .distinct()
    .where('org_id', '=', orgId)
    .where('template_id', 'in', [...templateIds])
    .execute();
  for (const row of rows) if (isPermission(row.permission)) granted.add(row.permission);
  return granted;
}

/**
 * Changing the security templates of a thing (an asset, a version chain): the caller needs Apply
 * Security Template on it, and every template added may grant (to anyone) only permissions the
 * caller already holds on it ("nobody acts beyond what they hold"): someone with View, Edit
 * Metadata and Apply Security Template cannot add a template that hands out Download or Delete,
 * to themselves or to another group. Removing templates only takes away. No change, no check.
 */
export async function assertMayApplyTemplates(
  db: DbOrTrx,
  principal: Principal,
  held: ReadonlySet<Permission>,
  current: readonly string[],
  next: readonly string[],
): Promise<void> {
  const before = new Set(current.map((id) => id.toLowerCase()));
  const after = new Set(next.map((id) => id.toLowerCase()));
  if (before.size === after.size && [...after].every((id) => before.has(id))) return;
  if (!permitted(held, 'asset.apply_security_template'))
    throw forbidden('Missing permission on this asset: Apply Security Template');
  const added = [...after].filter((id) => !before.has(id));
  const beyondHeld = [...(await permissionsGrantedBy(db, principal.orgId, added))].filter((p) => !held.has(p));
  if (beyondHeld.length > 0) {
    throw forbidden(
      `The security templates added grant permissions you do not hold on this asset (${beyondHeld.map((p) => PERMISSIONS[p].name).join(', ')})`,
    );
  }
}

/** Whether any template grants `permission` to any of the caller's groups (a cheap up-front refusal). */
export async function holdsPermissionAnywhere(
  db: DbOrTrx,
  principal: Principal,
  permission: Permission,
): Promise<boolean> {
  return (await templatesGranting(db, principal, permission).limit(1).executeTakeFirst()) !== undefined;
}
