import type { Deps } from '../../../deps.ts';
import { audit } from '../../../core/audit.ts';
import { requirePrivileges, writeTemplatePermissions } from '../../../core/authz/authorize.ts';
import { ALL_PERMISSIONS, PERMISSIONS, permissionFromId } from '../../../core/authz/catalog.ts';
import { byKind, holdingsOfPrincipal } from '../../../core/authz/ceiling.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import { isUniqueViolation, type DbOrTrx } from '../../../core/db/connect.ts';
import { fromJson, toJson } from '../../../core/db/json.ts';
import type { SecurityTemplatesTable } from '../../../core/db/schema.ts';
import { conflict, forbidden, invalidField, notFound } from '../../../core/http/errors.ts';
import { newId } from '../../../core/ids.ts';
import type { SecurityTemplate, SecurityTemplateUpdate, SecurityTemplateWrite } from '../identity.schemas.ts';
import { existingGroupIds, findTemplate } from '../identity.repo.ts';
import { EMPTY_TEMPLATE, publishTemplateEvent, templateSnapshot } from '../events.ts';

type Grants = Map<string, string[]>;

async function present(db: DbOrTrx, rows: SecurityTemplatesTable[]): Promise<SecurityTemplate[]> {
  if (rows.length === 0) return [];
  const grants = await db
    .selectFrom('security_template_grants')
    .select(['template_id', 'group_id', 'permissions'])
    .where(
      'template_id',
      'in',
      rows.map((r) => r.id),
    )
    .orderBy('group_id')
    .execute();
  return rows.map((row) => {
    const mine = grants.filter((g) => g.template_id === row.id);
    return {
      templateId: row.id,
      templateName: row.name,
      description: row.description,
      securityDenormalized: mine.map((g) => ({
        groupId: g.group_id,
        permissions: fromJson<string[]>(g.permissions, []),
      })),
      templateDocument: mine.map((g) => {
        const granted = new Set(fromJson<string[]>(g.permissions, []));
        return {
          groupId: g.group_id,
          groupPermissions: ALL_PERMISSIONS.map((p) => ({
            permissionId: PERMISSIONS[p].id,
            isPermitted: granted.has(PERMISSIONS[p].id),
          })),
        };
      }),
      createdEpoch: row.created_at,
      lastUpdatedEpoch: row.updated_at,
    };
  });
}

/** Either input encoding (the reference's templateDocument or securityDenormalized) → group → permission ids. */
function grantsFrom(
  input: Pick<SecurityTemplateWrite, 'templateDocument' | 'securityDenormalized'>,
): Grants | undefined {
  if (input.templateDocument && input.securityDenormalized)
    throw invalidField('body.securityDenormalized', 'send templateDocument or securityDenormalized, not both');
  const grants: Grants = new Map();
  const add = (field: string, groupId: string, ids: string[]) => {
    for (const id of ids)
      if (!permissionFromId(id))
        throw invalidField(field, `${id} is not a permission; see GET /v1/security/permissions`);
    const merged = new Set([...(grants.get(groupId) ?? []), ...ids.map((id) => id.toLowerCase())]);
    grants.set(groupId, [...merged].sort());
  };
  if (input.templateDocument) {
    for (const doc of input.templateDocument)
      add(
        'body.templateDocument',
        doc.groupId,
        doc.groupPermissions.filter((p) => p.isPermitted).map((p) => p.permissionId),
      );
  } else if (input.securityDenormalized) {
    for (const grant of input.securityDenormalized) add('body.securityDenormalized', grant.groupId, grant.permissions);
  } else {
    return undefined;
  }
  return grants;
}

async function writeGrants(db: DbOrTrx, orgId: string, templateId: string, grants: Grants): Promise<void> {
  const groups = [...grants.keys()];
  const found = await existingGroupIds(db, orgId, groups);
  const missing = groups.filter((g) => !found.has(g));
  if (missing.length > 0)
    throw invalidField('body.templateDocument', `names groups that do not exist: ${missing.join(', ')}`);
  await db
    .deleteFrom('security_template_grants')
    .where('org_id', '=', orgId)
    .where('template_id', '=', templateId)
    .execute();
  const rows = [...grants]
    .filter(([, ids]) => ids.length > 0)
    .map(([group_id, ids]) => ({ org_id: orgId, template_id: templateId, group_id, permissions: toJson(ids) }));
  if (rows.length > 0) await db.insertInto('security_template_grants').values(rows).execute();
  await writeTemplatePermissions(db, orgId, templateId, grants);
}

/**
 * A template change changes what its groups hold on everything it protects (core/authz/ceiling.ts):
 * every permission granted or withdrawn, for any group (the caller's own included), must be one
 * the caller holds.
 */
async function assertTemplateChangeWithin(
  db: DbOrTrx,
  principal: Principal,
  before: Map<string, Set<string>>,
  after: Grants,
): Promise<void> {
  const anywhere = byKind(await holdingsOfPrincipal(db, principal)).grants.get('*') ?? new Set();
  const lacking = new Set<string>();
  for (const group of new Set([...before.keys(), ...after.keys()])) {
    const was = before.get(group) ?? new Set<string>();
    const now = new Set(after.get(group) ?? []);
    for (const id of new Set([...was, ...now])) {
      const p = permissionFromId(id);
      if (!p || was.has(id) === now.has(id)) continue;
      if (!anywhere.has(p)) lacking.add(PERMISSIONS[p].name);
    }
  }
  if (lacking.size > 0)
    throw forbidden(`You cannot grant or withdraw permissions you do not hold (${[...lacking].join(', ')})`);
}

async function grantIds(db: DbOrTrx, orgId: string, templateId: string): Promise<Map<string, Set<string>>> {
  const rows = await db
    .selectFrom('security_template_grants')
    .select(['group_id', 'permissions'])
    .where('org_id', '=', orgId)
    .where('template_id', '=', templateId)
    .execute();
  return new Map(
    rows.map((r) => [r.group_id, new Set(fromJson<string[]>(r.permissions, []).map((id) => id.toLowerCase()))]),
  );
}

const duplicate = () => conflict('A security template with this name already exists', 'body.templateName');

export async function listTemplates(deps: Deps, principal: Principal): Promise<SecurityTemplate[]> {
  requirePrivileges(principal, 'security_template_management');
  const rows = await deps.db
    .selectFrom('security_templates')
    .selectAll()
    .where('org_id', '=', principal.orgId)
    .orderBy('name_key')
    .execute();
  return present(deps.db, rows);
}

export async function getTemplate(deps: Deps, principal: Principal, id: string): Promise<SecurityTemplate> {
  requirePrivileges(principal, 'security_template_management');
  const row = await findTemplate(deps.db, principal.orgId, id);
  if (!row) throw notFound('Security template');
  return (await present(deps.db, [row]))[0]!;
}

export async function createTemplate(
  deps: Deps,
  principal: Principal,
  input: SecurityTemplateWrite,
  ip: string,
): Promise<SecurityTemplate> {
  requirePrivileges(principal, 'security_template_management');
  const grants = grantsFrom(input) ?? new Map();
  const now = deps.clock.now();
  const row: SecurityTemplatesTable = {
    id: newId(now),
    org_id: principal.orgId,
    name: input.templateName,
    name_key: input.templateName.toLowerCase(),
    description: input.description ?? '',
    created_at: now,
    updated_at: now,
  };
  try {
    return await deps.db.transaction().execute(async (trx) => {
      await assertTemplateChangeWithin(trx, principal, new Map(), grants);
      await trx.insertInto('security_templates').values(row).execute();
      await writeGrants(trx, principal.orgId, row.id, grants);
      await audit(trx, {
        orgId: principal.orgId,
        at: now,
        actorId: principal.userId,
        action: 'security_template.created',
        targetType: 'security_template',
        targetId: row.id,
        ip,
      });
      await publishTemplateEvent(
        trx,
        now,
        principal.orgId,
        principal.userId,
        'security.template.created',
        row.id,
        EMPTY_TEMPLATE,
      );
      return (await present(trx, [row]))[0]!;
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw duplicate();
    throw error;
  }
}

export async function updateTemplate(
  deps: Deps,
  principal: Principal,
  id: string,
  input: SecurityTemplateUpdate,
  ip: string,
): Promise<SecurityTemplate> {
  requirePrivileges(principal, 'security_template_management');
  const grants = grantsFrom(input);
  const now = deps.clock.now();
  try {
    return await deps.db.transaction().execute(async (trx) => {
      const row = await findTemplate(trx, principal.orgId, id);
      if (!row) throw notFound('Security template');
      const before = await templateSnapshot(trx, principal.orgId, id);
      if (grants) await assertTemplateChangeWithin(trx, principal, await grantIds(trx, principal.orgId, id), grants);
      const patch: Partial<SecurityTemplatesTable> = { updated_at: now };
      if (input.templateName !== undefined)
        Object.assign(patch, { name: input.templateName, name_key: input.templateName.toLowerCase() });
      if (input.description !== undefined) patch.description = input.description;
      await trx
        .updateTable('security_templates')
        .set(patch)
        .where('org_id', '=', principal.orgId)
        .where('id', '=', id)
        .execute();
      if (grants) await writeGrants(trx, principal.orgId, id, grants);
      await audit(trx, {
        orgId: principal.orgId,
        at: now,
        actorId: principal.userId,
        action: 'security_template.updated',
        targetType: 'security_template',
        targetId: id,
        ip,
      });
      await publishTemplateEvent(trx, now, principal.orgId, principal.userId, 'security.template.updated', id, before);
      return (await present(trx, [{ ...row, ...patch }]))[0]!;
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw duplicate();
    throw error;
  }
}

export async function deleteTemplate(deps: Deps, principal: Principal, id: string, ip: string): Promise<void> {
  requirePrivileges(principal, 'security_template_management');
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    const row = await findTemplate(trx, principal.orgId, id);
    if (!row) throw notFound('Security template');
    await assertTemplateChangeWithin(trx, principal, await grantIds(trx, principal.orgId, id), new Map());
    await publishTemplateEvent(trx, now, principal.orgId, principal.userId, 'security.template.deleted', id, {
      name: row.name,
      grants: new Map(),
    });
    await trx
      .deleteFrom('security_template_grants')
      .where('org_id', '=', principal.orgId)
      .where('template_id', '=', id)
      .execute();
    await trx.deleteFrom('security_templates').where('org_id', '=', principal.orgId).where('id', '=', id).execute();
    await audit(trx, {
      orgId: principal.orgId,
      at: now,
      actorId: principal.userId,
      action: 'security_template.deleted',
      targetType: 'security_template',
      targetId: id,
      ip,
      data: { name: row.name },
    });
  });
}

export function listPermissions() {
  return {
    permissions: ALL_PERMISSIONS.map((p) => ({ permissionId: PERMISSIONS[p].id, id: p, name: PERMISSIONS[p].name })),
  };
}
