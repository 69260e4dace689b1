import { PostgresAdapter } from 'kysely';
import type { DbOrTrx } from '../db/connect.ts';
import { fromJson } from '../db/json.ts';
import { conflict, forbidden } from '../http/errors.ts';
import { PERMISSIONS, PRIVILEGES, permissionFromId, type Permission, type Privilege } from './catalog.ts';
import type { Principal } from './principal.ts';

/**
 * "Nobody acts beyond what they hold": what someone holds is their role's privileges plus, for
 * every security template, the permissions it grants to their groups. A change to a user, a
 * group membership, a role, a group or a template is allowed only when everything it touches and
 * everything it gives lies within the caller's holdings. The one place this rule lives.
 *
 * Template permissions are compared by kind (`byKind`): the caller must hold each permission
 * given or touched on some template. So an administrator can staff a group whose template they
 * are not in, or widen Everyone (themselves included) on a new template, but someone who can only
 * View and Download gives nobody — themselves included — Delete, and cannot join Administrators.
 */
export interface Holdings {
  privileges: ReadonlySet<Privilege>;
  /** template id → permissions granted to the holder's groups on it */
  grants: ReadonlyMap<string, ReadonlySet<Permission>>;
}

export const NO_HOLDINGS: Holdings = { privileges: new Set(), grants: new Map() };

/** Template permissions brought by a set of groups. */
export async function grantsOfGroups(
  db: DbOrTrx,
  orgId: string,
  groupIds: readonly string[],
): Promise<Map<string, Set<Permission>>> {
  const grants = new Map<string, Set<Permission>>();
  if (groupIds.length === 0) return grants;
  const rows = await db
    .selectFrom('security_template_grants')
    .select(['template_id', 'permissions'])
    .where('org_id', '=', orgId)
    .where('group_id', 'in', [...new Set(groupIds)])
    .execute();
  for (const row of rows) {
    let set = grants.get(row.template_id);
    if (!set) grants.set(row.template_id, (set = new Set()));
    for (const id of fromJson<string[]>(row.permissions, [])) {
      const p = permissionFromId(id);
      if (p) set.add(p);
    }
  }
  return grants;
}

export async function holdingsOf(
  db: DbOrTrx,
  orgId: string,
  privileges: ReadonlySet<Privilege>,
  groupIds: readonly string[],
): Promise<Holdings> {
  return { privileges, grants: await grantsOfGroups(db, orgId, groupIds) };
}

/** What the caller holds now (an API key: its capped privileges and its creator's groups). */
export function holdingsOfPrincipal(db: DbOrTrx, principal: Principal): Promise<Holdings> {
  return holdingsOf(db, principal.orgId, principal.privileges, principal.groupIds);
}

const ANY_TEMPLATE = '*';

/** Holdings with every template's permissions merged (see the rule above). */
export function byKind(h: Holdings): Holdings {
  const all = new Set<Permission>();
  for (const permissions of h.grants.values()) for (const p of permissions) all.add(p);
  return { privileges: h.privileges, grants: all.size > 0 ? new Map([[ANY_TEMPLATE, all]]) : new Map() };
}

/** What `candidate` holds beyond `holder`, as names; empty when within. */
export function beyond(candidate: Holdings, holder: Holdings): string[] {
  const out: string[] = [];
  for (const p of candidate.privileges) if (!holder.privileges.has(p)) out.push(PRIVILEGES[p].name);
  for (const [template, permissions] of candidate.grants) {
    const mine = holder.grants.get(template);
    for (const p of permissions)
      if (!mine?.has(p))
        out.push(
          template === ANY_TEMPLATE ? PERMISSIONS[p].name : `${PERMISSIONS[p].name} on security template ${template}`,
        );
  }
  return out;
}

export function holdingsWithin(candidate: Holdings, holder: Holdings): boolean {
  return beyond(candidate, holder).length === 0;
}

/** 403 unless `candidate` lies within the caller's holdings. `what` completes "… holds privileges or permissions you do not have". */
export function assertWithin(candidate: Holdings, caller: Holdings, what: string): void {
  const extra = beyond(candidate, caller);
  if (extra.length > 0)
    throw forbidden(
      `${what} privileges or permissions you do not have (${extra.slice(0, 3).join(', ')}${extra.length > 3 ? ', …' : ''})`,
    );
}

/**
 * Serializes ceiling-sensitive changes within one organization (PostgreSQL: a row lock on the
 * organization; SQLite runs one write transaction at a time), so two administrators demoting
 * each other cannot both succeed and leave nobody holding a privilege.
 */
export async function lockOrganization(trx: DbOrTrx, orgId: string): Promise<void> {
  if (!(trx.getExecutor().adapter instanceof PostgresAdapter)) return;
  await trx.selectFrom('organizations').select('id').where('id', '=', orgId).forUpdate().execute();
}

/** Privileges held by at least one enabled person (service accounts of API keys do not count). */
export async function privilegesHeldByPeople(db: DbOrTrx, orgId: string): Promise<Set<Privilege>> {
  const rows = await db
    .selectFrom('roles')
    .select('privileges')
    .where('org_id', '=', orgId)
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('users')
          .select('users.id')
          .whereRef('users.role_id', '=', 'roles.id')
          .where('users.org_id', '=', orgId)
          .where('users.status', '=', 'enabled')
          .where('users.account_type', '!=', 'service'),
      ),
    )
    .execute();
  const held = new Set<Privilege>();
  for (const row of rows)
    for (const id of fromJson<string[]>(row.privileges, []))
      if (Object.hasOwn(PRIVILEGES, id)) held.add(id as Privilege);
  return held;
}

/** 409 when a change (already written in `trx`) left some privilege held before with no enabled holder. */
export async function assertPrivilegesStillHeld(
  trx: DbOrTrx,
  orgId: string,
  before: ReadonlySet<Privilege>,
): Promise<void> {
  const after = await privilegesHeldByPeople(trx, orgId);
  const lost = [...before].filter((p) => !after.has(p));
  if (lost.length > 0) {
    throw conflict(`This would leave no enabled user holding ${lost.map((p) => PRIVILEGES[p].name).join(', ')}`);
  }
}
