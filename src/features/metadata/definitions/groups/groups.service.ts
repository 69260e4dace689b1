import { sql, type Selectable } from 'kysely';
import type { Deps } from '../../../../deps.ts';
import { audit } from '../../../../core/audit.ts';
import { requirePrivileges } from '../../../../core/authz/authorize.ts';
import type { Principal } from '../../../../core/authz/principal.ts';
import { isUniqueViolation, type DbOrTrx, type Trx } from '../../../../core/db/connect.ts';
import type { MetadataGroupsTable } from '../../../../core/db/schema.ts';
import { publishEvent } from '../../../../core/events/publish.ts';
import { AppError, conflict, invalidField } from '../../../../core/http/errors.ts';
import { newId } from '../../../../core/ids.ts';
import { recordDefinitionChange } from '../../access.ts';
import { touchDefinitions } from '../template-cache.ts';
import { groupAttributeIds } from '../definitions.repo.ts';
import { freeSearchField, templatesUsingGroups } from '../metadata.repo.ts';
import type { GroupCreate, GroupListQuery, GroupUpdate } from '../../metadata.schemas.ts';
import { groupRowOut } from '../present.ts';

type GroupRow = Selectable<MetadataGroupsTable>;
const groupNotFound = () => new AppError('not_found', 'Metadata group not found');
const duplicateName = () => conflict('A metadata group with this name already exists', 'body.name');

/** `name_key` contains the term, case-insensitively; % and _ in the term are literal. */
export function nameContains(term: string) {
  const pattern = `%${term.toLowerCase().replace(/[%_\\]/g, (c) => `\\${c}`)}%`;
  return sql<boolean>`name_key like ${pattern} escape '\\'`;
}

async function present(db: DbOrTrx, orgId: string, rows: GroupRow[]) {
  if (rows.length === 0) return [];
  const links = await groupAttributeIds(
    db,
    orgId,
    rows.map((r) => r.id),
  );
  const attrIds = [...new Set(links.map((l) => l.attributeId))];
  const attrs =
    attrIds.length === 0
      ? []
      : await db
          .selectFrom('metadata_attributes')
          .select(['id', 'name', 'search_field', 'type'])
          .where('org_id', '=', orgId)
          .where('id', 'in', attrIds)
          .execute();
  const byId = new Map(attrs.map((a) => [a.id, a]));
  const templates = await templatesUsingGroups(
    db,
    orgId,
    rows.map((r) => r.id),
  );
  return rows.map((row) => {
    const ids = links.filter((l) => l.groupId === row.id).map((l) => l.attributeId);
    return {
      ...groupRowOut(row),
      attributeIds: ids,
      attributes: ids.flatMap((id) => {
        const a = byId.get(id);
        return a ? [{ id: a.id, name: a.name, searchField: a.search_field, type: a.type }] : [];
      }),
      templates: templates.get(row.id) ?? [],
    };
  });
}

export async function findGroup(db: DbOrTrx, orgId: string, id: string): Promise<GroupRow | undefined> {
  return db
    .selectFrom('metadata_groups')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Attribute ids must be existing top-level attributes, each once; system attributes stay in the system group. */
async function checkAttributes(db: DbOrTrx, orgId: string, ids: string[], systemGroup: boolean): Promise<void> {
  const seen = new Set<string>();
  ids.forEach((id, i) => {
    if (seen.has(id)) throw invalidField(`body.attributeIds[${i}]`, 'appears twice');
    seen.add(id);
  });
  if (ids.length === 0) return;
  const rows = await db
    .selectFrom('metadata_attributes')
    .select(['id', 'name', 'system'])
    .where('org_id', '=', orgId)
    .where('parent_id', 'is', null)
    .where('id', 'in', ids)
    .execute();
  const byId = new Map(rows.map((r) => [r.id, r]));
  ids.forEach((id, i) => {
    const row = byId.get(id);
    if (!row) throw invalidField(`body.attributeIds[${i}]`, `attribute ${id} does not exist`);
    if (row.system === 1 && !systemGroup)
      throw invalidField(
        `body.attributeIds[${i}]`,
        `${row.name} is a system attribute: it belongs to the system group, which every template has`,
      );
  });
}

/**
 * A template's effective attributes must be distinct: throws 400 naming the attribute and the
 * groups that both hold it. `override` replaces one group's attribute list (a pending update).
 */
export async function checkNoDuplicateAttributes(
  db: DbOrTrx,
  orgId: string,
  groupIds: string[],
  field: string,
  override?: { groupId: string; attributeIds: string[] },
  templateName?: string,
): Promise<void> {
  const links = (await groupAttributeIds(db, orgId, groupIds)).filter((l) => l.groupId !== override?.groupId);
  if (override && groupIds.includes(override.groupId))
    links.push(...override.attributeIds.map((attributeId) => ({ groupId: override.groupId, attributeId })));
  const owner = new Map<string, string>();
  for (const link of links) {
    const first = owner.get(link.attributeId);
    if (first && first !== link.groupId) {
      const names = await db
        .selectFrom('metadata_groups')
        .select(['id', 'name'])
        .where('org_id', '=', orgId)
        .where('id', 'in', [first, link.groupId])
        .execute();
      const attr = await db
        .selectFrom('metadata_attributes')
        .select('name')
        .where('id', '=', link.attributeId)
        .executeTakeFirst();
      throw invalidField(
        field,
        `${templateName ? `template ${JSON.stringify(templateName)}: ` : ''}attribute ${JSON.stringify(attr?.name ?? link.attributeId)} would appear twice, in groups ${names.map((n) => JSON.stringify(n.name)).join(' and ')}`,
      );
    }
    owner.set(link.attributeId, link.groupId);
  }
}

async function writeLinks(trx: Trx, orgId: string, groupId: string, attributeIds: string[]): Promise<void> {
  await trx
    .deleteFrom('metadata_group_attributes')
    .where('org_id', '=', orgId)
    .where('group_id', '=', groupId)
    .execute();
  if (attributeIds.length > 0)
    await trx
      .insertInto('metadata_group_attributes')
      .values(
        attributeIds.map((attribute_id, position) => ({ org_id: orgId, group_id: groupId, attribute_id, position })),
      )
      .execute();
}

export async function listGroups(deps: Deps, principal: Principal, query: GroupListQuery) {
  requirePrivileges(principal, 'metadata_management');
  const sort = { groupName: 'name_key', createdEpoch: 'created_at', lastUpdatedEpoch: 'updated_at' } as const;
  let base = deps.db.selectFrom('metadata_groups').where('org_id', '=', principal.orgId);
  if (query.searchTerm) base = base.where(nameContains(query.searchTerm));
  const total = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const order = query.order ?? 'asc';
  const rows = await base
    .selectAll()
    .orderBy(sort[query.sortField ?? 'groupName'], order)
    .orderBy('id', order)
    .limit(query.limit ?? 100)
    .offset(query.from ?? 0)
    .execute();
  return { hitCount: Number(total.n), results: await present(deps.db, principal.orgId, rows) };
}

export async function getGroup(deps: Deps, principal: Principal, id: string) {
  requirePrivileges(principal, 'metadata_management');
  const row = await findGroup(deps.db, principal.orgId, id);
  if (!row) throw groupNotFound();
  return (await present(deps.db, principal.orgId, [row]))[0]!;
}

export async function createGroup(deps: Deps, principal: Principal, input: GroupCreate, ip: string) {
  requirePrivileges(principal, 'metadata_management');
  const name = input.name.trim();
  if (name === '') throw invalidField('body.name', 'name cannot be empty');
  const attributeIds = input.attributeIds ?? [];
  const now = deps.clock.now();
  try {
    return await deps.db.transaction().execute(async (trx) => {
      await touchDefinitions(trx, principal.orgId, now);
      await checkAttributes(trx, principal.orgId, attributeIds, false);
      const row: GroupRow = {
        id: newId(now),
        org_id: principal.orgId,
        name,
        name_key: name.toLowerCase(),
        search_field: await freeSearchField(trx, 'metadata_groups', principal.orgId, name),
        description: input.description ?? '',
        name_visible: input.isGroupNameVisible === false ? 0 : 1,
        system: 0,
        created_by: principal.userId,
        updated_by: principal.userId,
        created_at: now,
        updated_at: now,
      };
      await trx.insertInto('metadata_groups').values(row).execute();
      await writeLinks(trx, principal.orgId, row.id, attributeIds);
      await audit(trx, {
        orgId: principal.orgId,
        at: now,
        actorId: principal.userId,
        action: 'metadata.group.created',
        targetType: 'metadata_group',
        targetId: row.id,
        ip,
      });
      await publishEvent(trx, now, {
        orgId: principal.orgId,
        type: 'metadata.group.created',
        actor: principal.userId,
        data: { group: { id: row.id, name } },
      });
      return (await present(trx, principal.orgId, [row]))[0]!;
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw duplicateName();
    throw error;
  }
}

export async function updateGroup(deps: Deps, principal: Principal, id: string, input: GroupUpdate, ip: string) {
  requirePrivileges(principal, 'metadata_management');
  if (Object.keys(input).length === 0)
    throw invalidField('body', 'send at least one of name, description, isGroupNameVisible, attributeIds');
  const name = input.name?.trim();
  if (name === '') throw invalidField('body.name', 'name cannot be empty');
  const now = deps.clock.now();
  try {
    return await deps.db.transaction().execute(async (trx) => {
      await touchDefinitions(trx, principal.orgId, now);
      const row = await findGroup(trx, principal.orgId, id);
      if (!row) throw groupNotFound();
      const patch: Partial<GroupRow> = { updated_at: now, updated_by: principal.userId };
      if (name !== undefined) Object.assign(patch, { name, name_key: name.toLowerCase() });
      if (input.description !== undefined) patch.description = input.description;
      if (input.isGroupNameVisible !== undefined) patch.name_visible = input.isGroupNameVisible ? 1 : 0;
      await trx
        .updateTable('metadata_groups')
        .set(patch)
        .where('org_id', '=', principal.orgId)
        .where('id', '=', id)
        .execute();
      if (input.attributeIds) {
        await checkAttributes(trx, principal.orgId, input.attributeIds, row.system === 1);
        // Every template holding this group (and, for the system group, every template) stays free of duplicates.
        const templates =
          row.system === 1
            ? await trx
                .selectFrom('metadata_templates')
                .select(['id', 'name'])
                .where('org_id', '=', principal.orgId)
                .execute()
            : ((await templatesUsingGroups(trx, principal.orgId, [id])).get(id) ?? []);
        for (const t of templates) {
          const groupIds = (
            await trx
              .selectFrom('metadata_template_groups')
              .select('group_id')
              .where('org_id', '=', principal.orgId)
              .where('template_id', '=', t.id)
              .execute()
          ).map((g) => g.group_id);
          await checkNoDuplicateAttributes(
            trx,
            principal.orgId,
            groupIds,
            'body.attributeIds',
            { groupId: id, attributeIds: input.attributeIds },
            t.name,
          );
        }
        const before = (await groupAttributeIds(trx, principal.orgId, [id])).map((l) => l.attributeId);
        await writeLinks(trx, principal.orgId, id, input.attributeIds);
        const added = input.attributeIds.filter((a) => !before.includes(a));
        const removed = before.filter((a) => !input.attributeIds!.includes(a));
        if (added.length > 0 || removed.length > 0) {
          await recordDefinitionChange(trx, now, {
            orgId: principal.orgId,
            kind: 'group.attributes.changed',
            subjectType: 'group',
            subjectId: id,
            actorId: principal.userId,
            data: { added, removed, templates: templates.map((t) => t.id) },
          });
        }
      }
      await audit(trx, {
        orgId: principal.orgId,
        at: now,
        actorId: principal.userId,
        action: 'metadata.group.updated',
        targetType: 'metadata_group',
        targetId: id,
        ip,
      });
      await publishEvent(trx, now, {
        orgId: principal.orgId,
        type: 'metadata.group.updated',
        actor: principal.userId,
        data: { group: { id, name: patch.name ?? row.name } },
      });
      return (await present(trx, principal.orgId, [{ ...row, ...patch }]))[0]!;
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw duplicateName();
    throw error;
  }
}

export async function deleteGroup(deps: Deps, principal: Principal, id: string, ip: string): Promise<void> {
  requirePrivileges(principal, 'metadata_management');
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    await touchDefinitions(trx, principal.orgId, now);
    const row = await findGroup(trx, principal.orgId, id);
    if (!row) throw groupNotFound();
    if (row.system === 1) throw conflict('The system group cannot be deleted: every template has it');
    const templates = (await templatesUsingGroups(trx, principal.orgId, [id])).get(id);
    if (templates?.length)
      throw conflict(`Metadata group is used by metadata templates: ${templates.map((t) => t.name).join(', ')}`);
    await trx.deleteFrom('metadata_groups').where('org_id', '=', principal.orgId).where('id', '=', id).execute();
    await audit(trx, {
      orgId: principal.orgId,
      at: now,
      actorId: principal.userId,
      action: 'metadata.group.deleted',
      targetType: 'metadata_group',
      targetId: id,
      ip,
      data: { name: row.name },
    });
    await publishEvent(trx, now, {
      orgId: principal.orgId,
      type: 'metadata.group.deleted',
      actor: principal.userId,
      data: { group: { id, name: row.name } },
    });
  });
}
