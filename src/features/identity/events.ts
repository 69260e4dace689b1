import type { Trx } from '../../core/db/connect.ts';
import { fromJson } from '../../core/db/json.ts';
import { PERMISSIONS, permissionFromId } from '../../core/authz/catalog.ts';
import { publishEvent } from '../../core/events/index.ts';

// Webhook events of the identity services (user.*, security.template.*), published in the
// transaction of the change. Payloads follow reference §14.5.

export async function publishUserEvent(
  trx: Trx,
  now: number,
  orgId: string,
  actorId: string,
  type: 'user.created' | 'user.updated',
  userId: string,
): Promise<void> {
  const row = await trx
    .selectFrom('users')
    .innerJoin('roles', 'roles.id', 'users.role_id')
    .select([
      'users.id',
      'users.username',
      'users.email',
      'users.first_name',
      'users.last_name',
      'users.friendly_name',
      'users.company',
      'users.country',
      'users.phone',
      'users.contact',
      'users.status',
      'users.account_type',
      'users.role_id',
      'roles.name as role_name',
    ])
    .where('users.org_id', '=', orgId)
    .where('users.id', '=', userId)
    .executeTakeFirstOrThrow();
  const groups = await trx
    .selectFrom('user_groups')
    .innerJoin('groups', 'groups.id', 'user_groups.group_id')
    .select(['groups.id', 'groups.name'])
    .where('user_groups.org_id', '=', orgId)
    .where('user_groups.user_id', '=', userId)
    .orderBy('groups.id')
    .execute();
  await publishEvent(trx, now, {
    orgId,
    type,
    actor: actorId,
    data: {
      user: {
        id: row.id,
        username: row.account_type === 'federated' ? '' : row.username,
        email: row.email,
        firstName: row.first_name,
        lastName: row.last_name,
        friendlyName: row.friendly_name,
        company: row.company ?? '',
        country: row.country ?? '',
        phone: row.phone ?? '',
        contact: row.contact ?? '',
        role: { id: row.role_id, name: row.role_name },
        status: row.status,
        accountType: row.account_type,
        groups: groups.map((g) => ({ id: g.id, name: g.name })),
      },
    },
  });
}

export interface TemplateSnapshot {
  name: string | null;
  grants: Map<string, Set<string>>;
}

/** The template's name and grants (group → permission names), to diff before and after a change. */
export async function templateSnapshot(trx: Trx, orgId: string, templateId: string): Promise<TemplateSnapshot> {
  const row = await trx
    .selectFrom('security_templates')
    .select('name')
    .where('org_id', '=', orgId)
    .where('id', '=', templateId)
    .executeTakeFirst();
  const grants = await trx
    .selectFrom('security_template_grants')
    .select(['group_id', 'permissions'])
    .where('org_id', '=', orgId)
    .where('template_id', '=', templateId)
    .execute();
  const names = (json: string) =>
    new Set(
      fromJson<string[]>(json, [])
        .map((id) => permissionFromId(id))
        .filter((p) => p !== undefined)
        .map((p) => PERMISSIONS[p].name),
    );
  return { name: row?.name ?? null, grants: new Map(grants.map((g) => [g.group_id, names(g.permissions)])) };
}

export async function publishTemplateEvent(
  trx: Trx,
  now: number,
  orgId: string,
  actorId: string,
  type: 'security.template.created' | 'security.template.updated' | 'security.template.deleted',
  templateId: string,
  before: TemplateSnapshot,
): Promise<void> {
  if (type === 'security.template.deleted') {
    await publishEvent(trx, now, {
      orgId,
      type,
      actor: actorId,
      data: { securityTemplate: { id: templateId, name: before.name ?? '' } },
    });
    return;
  }
  const after = await templateSnapshot(trx, orgId, templateId);
  const groupIds = [...new Set([...before.grants.keys(), ...after.grants.keys()])];
  const groupNames =
    groupIds.length === 0
      ? new Map<string, string>()
      : new Map(
          (
            await trx
              .selectFrom('groups')
              .select(['id', 'name'])
              .where('org_id', '=', orgId)
              .where('id', 'in', groupIds)
              .execute()
          ).map((g) => [g.id, g.name]),
        );
  const groups = groupIds
    .map((id) => {
      const was = before.grants.get(id) ?? new Set<string>();
      const now_ = after.grants.get(id) ?? new Set<string>();
      return {
        id,
        name: groupNames.get(id) ?? '',
        permissions: {
          added: [...now_].filter((p) => !was.has(p)).sort(),
          removed: [...was].filter((p) => !now_.has(p)).sort(),
        },
      };
    })
    .filter((g) => g.permissions.added.length > 0 || g.permissions.removed.length > 0);
  await publishEvent(trx, now, {
    orgId,
    type,
    actor: actorId,
    data: { securityTemplate: { id: templateId, name: { previous: before.name, current: after.name }, groups } },
  });
}

export const EMPTY_TEMPLATE: TemplateSnapshot = { name: null, grants: new Map() };
