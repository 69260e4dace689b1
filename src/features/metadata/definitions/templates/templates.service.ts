import type { Selectable } from 'kysely';
import type { Deps } from '../../../../deps.ts';
import { audit } from '../../../../core/audit.ts';
import { hasPrivilege, permissionsOn, requirePrivileges } from '../../../../core/authz/authorize.ts';
import type { Principal } from '../../../../core/authz/principal.ts';
import { isUniqueViolation, type DbOrTrx, type Trx } from '../../../../core/db/connect.ts';
import { fromJson, toJson } from '../../../../core/db/json.ts';
import type { MetadataTemplatesTable } from '../../../../core/db/schema.ts';
import { publishEvent } from '../../../../core/events/publish.ts';
import { AppError, conflict, invalidField } from '../../../../core/http/errors.ts';
import { newId } from '../../../../core/ids.ts';
import { enqueueJob } from '../../../../core/jobs/queue.ts';
import { customerIdOf, securityTemplateNames } from '../../../identity/index.ts';
import { recordDefinitionChange } from '../../access.ts';
import { touchDefinitions } from '../template-cache.ts';
import { groupAttributeIds, loadCompiledTemplate } from '../definitions.repo.ts';
import { checkNoDuplicateAttributes, nameContains } from '../groups/groups.service.ts';
import type { ExternalUsage } from '../../hooks.ts';
import { attributeFamily } from '../metadata.repo.ts';
import type { TemplateCreate, TemplateListQuery, TemplateUpdate } from '../../metadata.schemas.ts';
import { attributeOut, iso } from '../present.ts';
import { validateMetadata } from '../../validation/validate.ts';
import { requireMetadataRead } from '../vocabularies/vocabularies.service.ts';
import { ACTION_OBJECT_JOB, isActionTemplate, normalizeTemplateTypes, type ActionObjectJob } from './template-types.ts';

type TemplateRow = Selectable<MetadataTemplatesTable>;
type DefaultValue = { searchField: string; value: unknown };

const templateNotFound = () => new AppError('not_found', 'Metadata Template not found');
const duplicateName = () => conflict('A metadata template with this name already exists', 'body.name');

/** The webhook label of a template's type (reference §14.5). */
function typeLabel(types: string[]): string {
  return types.includes('action') ? 'Action' : 'Asset';
}

interface Details {
  groupIds: Map<string, string[]>;
  legacyGroups: Map<string, ReturnType<typeof legacyGroup>[]>;
}

function legacyGroup(
  order: number,
  group: { id: string; name: string; search_field: string; name_visible: number; system: number },
  attributes: ReturnType<typeof attributeOut>[],
) {
  return {
    groupOrder: order,
    metadataGroupId: group.id,
    metadataGroupName: group.name,
    metadataGroupSearchField: group.search_field,
    isGroupNameVisible: group.name_visible === 1,
    system: group.system === 1,
    securityPermissions: [] as never[],
    metadataAttributes: attributes,
  };
}

/** Groups (system group last) and their attribute descriptors, for each template. */
async function details(db: DbOrTrx, orgId: string, templateIds: string[]): Promise<Details> {
  const out: Details = { groupIds: new Map(), legacyGroups: new Map() };
  if (templateIds.length === 0) return out;
  const links = await db
    .selectFrom('metadata_template_groups')
    .innerJoin('metadata_groups', 'metadata_groups.id', 'metadata_template_groups.group_id')
    .select([
      'metadata_template_groups.template_id',
      'metadata_template_groups.position',
      'metadata_groups.id',
      'metadata_groups.name',
      'metadata_groups.search_field',
      'metadata_groups.name_visible',
      'metadata_groups.system',
    ])
    .where('metadata_template_groups.org_id', '=', orgId)
    .where('metadata_template_groups.template_id', 'in', templateIds)
    .execute();
  links.sort((a, b) => a.system - b.system || a.position - b.position);
  const groupIds = [...new Set(links.map((l) => l.id))];
  const attrLinks = await groupAttributeIds(db, orgId, groupIds);
  const family = await attributeFamily(db, orgId, [...new Set(attrLinks.map((l) => l.attributeId))]);
  for (const id of templateIds) {
    const mine = links.filter((l) => l.template_id === id);
    out.groupIds.set(
      id,
      mine.map((g) => g.id),
    );
    out.legacyGroups.set(
      id,
      mine.map((g, order) =>
        legacyGroup(
          order,
          g,
          attrLinks
            .filter((l) => l.groupId === g.id)
            .flatMap((l, i) => {
              const row = family.get(l.attributeId);
              return row ? [attributeOut(row, family, i)] : [];
            }),
        ),
      ),
    );
  }
  return out;
}

async function presentAdmin(db: DbOrTrx, orgId: string, rows: TemplateRow[], externalUsage: ExternalUsage) {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const d = await details(db, orgId, ids);
  const access = await db
    .selectFrom('metadata_template_access')
    .select(['template_id', 'security_template_id'])
    .where('org_id', '=', orgId)
    .where('template_id', 'in', ids)
    .execute();
  // Security templates and organizations are identity's tables: read through its index.ts.
  const names = await securityTemplateNames(
    db,
    orgId,
    access.map((a) => a.security_template_id),
  );
  const usage = await externalUsage(db, orgId, 'template', ids);
  const customer = await customerIdOf(db, orgId);
  return rows.map((row) => {
    const override = fromJson<unknown>(row.template_override, undefined);
    return {
      templateId: row.id,
      name: row.name,
      customerId: customer,
      createdBy: row.created_by,
      createdEpoch: row.created_at,
      createdDate: iso(row.created_at),
      lastUpdatedBy: row.updated_by,
      lastUpdatedEpoch: row.updated_at,
      lastUpdatedDate: iso(row.updated_at),
      groupIds: d.groupIds.get(row.id) ?? [],
      templateType: fromJson<string[]>(row.template_types, []),
      isDefault: row.is_default === 1,
      actionObjectId: row.action_object_id,
      attributesDefaultValue: fromJson<DefaultValue[]>(row.default_values, []),
      templateDenormalized: d.legacyGroups.get(row.id) ?? [],
      accessTemplates: access
        .filter((a) => a.template_id === row.id)
        .map((a) => ({ id: a.security_template_id, name: names.get(a.security_template_id) ?? '(deleted)' })),
      ...(override === undefined ? {} : { templateOverride: override }),
      inUse: (usage.get(row.id)?.length ?? 0) > 0,
    };
  });
}

async function presentLegacy(db: DbOrTrx, orgId: string, rows: TemplateRow[]) {
  const d = await details(
    db,
    orgId,
    rows.map((r) => r.id),
  );
  return rows.map((row) => ({
    template: {
      templateId: row.id,
      templateName: row.name,
      templateType: fromJson<string[]>(row.template_types, []),
      isDefault: row.is_default === 1,
      actionObjectId: row.action_object_id,
      createdEpoch: row.created_at,
      lastUpdatedEpoch: row.updated_at,
      metadataGroups: d.legacyGroups.get(row.id) ?? [],
    },
  }));
}

/** Templates the caller may use: administrators see all; others those open to them (access templates). */
async function usableRows(db: DbOrTrx, principal: Principal, rows: TemplateRow[]): Promise<TemplateRow[]> {
  if (hasPrivilege(principal, 'metadata_management') || rows.length === 0) return rows;
  const access = await db
    .selectFrom('metadata_template_access')
    .select(['template_id', 'security_template_id'])
    .where('org_id', '=', principal.orgId)
    .where(
      'template_id',
      'in',
      rows.map((r) => r.id),
    )
    .execute();
  const granted = await permissionsOnEach(db, principal, [...new Set(access.map((a) => a.security_template_id))]);
  return rows.filter((row) => {
    const mine = access.filter((a) => a.template_id === row.id);
    return mine.length === 0 || mine.some((a) => granted.has(a.security_template_id));
  });
}

async function permissionsOnEach(db: DbOrTrx, principal: Principal, templateIds: string[]): Promise<Set<string>> {
  const out = new Set<string>();
  for (const id of templateIds) if ((await permissionsOn(db, principal, [id])).has('view')) out.add(id);
  return out;
}

async function findTemplate(db: DbOrTrx, orgId: string, id: string): Promise<TemplateRow | undefined> {
  return db
    .selectFrom('metadata_templates')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function listTemplatesLegacy(deps: Deps, principal: Principal) {
  requireMetadataRead(principal);
  const rows = await deps.db
    .selectFrom('metadata_templates')
    .selectAll()
    .where('org_id', '=', principal.orgId)
    .orderBy('name_key')
    .execute();
  return presentLegacy(deps.db, principal.orgId, await usableRows(deps.db, principal, rows));
}

export async function getTemplateLegacy(deps: Deps, principal: Principal, id: string) {
  requireMetadataRead(principal);
  const row = await findTemplate(deps.db, principal.orgId, id);
  if (!row || (await usableRows(deps.db, principal, [row])).length === 0) throw templateNotFound();
  return (await presentLegacy(deps.db, principal.orgId, [row]))[0]!;
}

export async function listTemplatesPaged(
  deps: Deps,
  principal: Principal,
  query: TemplateListQuery,
  externalUsage: ExternalUsage,
) {
  requirePrivileges(principal, 'metadata_management');
  const sort = { templateName: 'name_key', createdEpoch: 'created_at', lastUpdatedEpoch: 'updated_at' } as const;
  let base = deps.db.selectFrom('metadata_templates').where('org_id', '=', principal.orgId);
  if (query.searchTerm) base = base.where(nameContains(query.searchTerm));
  const total = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const order = query.order ?? 'asc';
  const rows = await base
    .selectAll()
    .orderBy(sort[query.sortField ?? 'templateName'], order)
    .orderBy('id', order)
    .limit(query.limit ?? 50)
    .offset(query.from ?? 0)
    .execute();
  return { hitCount: Number(total.n), results: await presentAdmin(deps.db, principal.orgId, rows, externalUsage) };
}

/** Ordered, de-duplicated group ids that must exist; the system group is (re-)appended last. */
async function resolveGroups(db: DbOrTrx, orgId: string, groupIds: string[]): Promise<string[]> {
  const unique = [...new Set(groupIds)];
  const rows =
    unique.length === 0
      ? []
      : await db
          .selectFrom('metadata_groups')
          .select(['id', 'system'])
          .where('org_id', '=', orgId)
          .where('id', 'in', unique)
          .execute();
  const byId = new Map(rows.map((r) => [r.id, r]));
  groupIds.forEach((id, i) => {
    if (!byId.has(id)) throw invalidField(`body.groupIds[${i}]`, `metadata group ${id} does not exist`);
  });
  const system = await db
    .selectFrom('metadata_groups')
    .select('id')
    .where('org_id', '=', orgId)
    .where('system', '=', 1)
    .executeTakeFirst();
  return [...unique.filter((id) => byId.get(id)!.system !== 1), ...(system ? [system.id] : [])];
}

async function resolveAccess(db: DbOrTrx, orgId: string, refs: unknown[]): Promise<string[]> {
  const ids = refs.map((r, i) => {
    const id =
      typeof r === 'string'
        ? r
        : ((r as { id?: string; templateId?: string }).id ?? (r as { templateId?: string }).templateId);
    if (!id) throw invalidField(`body.accessTemplates[${i}]`, 'must be a security template id');
    return id;
  });
  const unique = [...new Set(ids)];
  if (unique.length === 0) return [];
  const found = new Set((await securityTemplateNames(db, orgId, unique)).keys());
  ids.forEach((id, i) => {
    if (!found.has(id)) throw invalidField(`body.accessTemplates[${i}]`, `security template ${id} does not exist`);
  });
  return unique;
}

async function writeStructure(
  trx: Trx,
  orgId: string,
  templateId: string,
  groupIds: string[] | undefined,
  access: string[] | undefined,
): Promise<void> {
  if (groupIds) {
    await trx
      .deleteFrom('metadata_template_groups')
      .where('org_id', '=', orgId)
      .where('template_id', '=', templateId)
      .execute();
    if (groupIds.length > 0)
      await trx
        .insertInto('metadata_template_groups')
        .values(groupIds.map((group_id, position) => ({ org_id: orgId, template_id: templateId, group_id, position })))
        .execute();
  }
  if (access) {
    await trx
      .deleteFrom('metadata_template_access')
      .where('org_id', '=', orgId)
      .where('template_id', '=', templateId)
      .execute();
    if (access.length > 0)
      await trx
        .insertInto('metadata_template_access')
        .values(
          access.map((security_template_id) => ({ org_id: orgId, template_id: templateId, security_template_id })),
        )
        .execute();
  }
}

/** Default values: keys must be attributes of the effective template, values valid for them. */
async function checkDefaults(
  trx: Trx,
  orgId: string,
  templateId: string,
  defaults: DefaultValue[],
): Promise<DefaultValue[]> {
  if (defaults.length === 0) return [];
  const t = (await loadCompiledTemplate(trx, orgId, templateId))!;
  const seen = new Set<string>();
  const problems: { field: string; message: string }[] = [];
  for (const [i, d] of defaults.entries()) {
    const path = `body.attributesDefaultValue[${i}]`;
    if (typeof d.searchField !== 'string') {
      problems.push({ field: `${path}.searchField`, message: 'is required' });
      continue;
    }
    const def = t.attributes.find((a) => a.searchField === d.searchField);
    if (!def) {
      problems.push({ field: `${path}.searchField`, message: `${d.searchField} is not an attribute of this template` });
      continue;
    }
    if (seen.has(d.searchField)) {
      problems.push({ field: `${path}.searchField`, message: `${d.searchField} appears twice` });
      continue;
    }
    seen.add(d.searchField);
    const result = validateMetadata(t, [{ name: def.name, value: d.value }], {
      mode: 'patch',
      allowReadonly: false,
      path,
    });
    for (const p of result.problems) problems.push({ field: p.path.replace(`${path}[0]`, path), message: p.message });
  }
  if (problems.length > 0)
    throw new AppError('validation_failed', `${problems[0]!.field}: ${problems[0]!.message}`, { details: problems });
  return defaults.map((d) => ({ searchField: d.searchField, value: d.value }));
}

export async function createTemplate(
  deps: Deps,
  principal: Principal,
  input: TemplateCreate,
  ip: string,
  externalUsage: ExternalUsage,
) {
  requirePrivileges(principal, 'metadata_management');
  const name = input.name.trim();
  if (name === '') throw invalidField('body.name', 'name cannot be empty');
  const types = normalizeTemplateTypes(input.templateType);
  const now = deps.clock.now();
  try {
    const created = await deps.db.transaction().execute(async (trx) => {
      await touchDefinitions(trx, principal.orgId, now);
      const groupIds = await resolveGroups(trx, principal.orgId, input.groupIds);
      await checkNoDuplicateAttributes(trx, principal.orgId, groupIds, 'body.groupIds');
      const access = await resolveAccess(trx, principal.orgId, input.accessTemplates ?? []);
      const existing = await trx
        .selectFrom('metadata_templates')
        .select('id')
        .where('org_id', '=', principal.orgId)
        .where('name_key', '=', name.toLowerCase())
        .executeTakeFirst();
      if (existing) throw duplicateName();
      const row: TemplateRow = {
        id: newId(now),
        org_id: principal.orgId,
        name,
        name_key: name.toLowerCase(),
        template_types: toJson(types),
        default_values: toJson([]),
        template_override: input.templateOverride === undefined ? null : toJson(input.templateOverride),
        is_default: 0,
        action_object_id: null,
        created_by: principal.userId,
        updated_by: principal.userId,
        created_at: now,
        updated_at: now,
      };
      await trx.insertInto('metadata_templates').values(row).execute();
      await writeStructure(trx, principal.orgId, row.id, groupIds, access);
      const defaults = await checkDefaults(trx, principal.orgId, row.id, input.attributesDefaultValue ?? []);
      if (defaults.length > 0) {
        row.default_values = toJson(defaults);
        await trx
          .updateTable('metadata_templates')
          .set({ default_values: row.default_values })
          .where('id', '=', row.id)
          .execute();
      }
      await audit(trx, {
        orgId: principal.orgId,
        at: now,
        actorId: principal.userId,
        action: 'metadata.template.created',
        targetType: 'metadata_template',
        targetId: row.id,
        ip,
      });
      await publishEvent(trx, now, {
        orgId: principal.orgId,
        type: 'metadata.template.created',
        actor: principal.userId,
        data: {
          template: {
            id: row.id,
            name: { previous: null, current: name },
            type: { previous: null, current: typeLabel(types) },
            groups: { added: groupIds.map((groupId) => ({ groupId })), removed: [] },
          },
        },
      });
      await syncActionObject(trx, now, principal.orgId, types, { templateId: row.id });
      return (await presentAdmin(trx, principal.orgId, [row], externalUsage))[0]!;
    });
    if (isActionTemplate(types)) deps.jobs.wake();
    return created;
  } catch (error) {
    if (isUniqueViolation(error)) throw duplicateName();
    throw error;
  }
}

const UPDATABLE = new Set(['name', 'groupIds', 'attributesDefaultValue', 'accessTemplates', 'templateOverride']);
const IMMUTABLE = new Set([
  'templateId',
  'customerId',
  'createdBy',
  'createdEpoch',
  'createdDate',
  'templateType',
  'templateDenormalized',
  'dependencies',
]);

export async function updateTemplate(
  deps: Deps,
  principal: Principal,
  id: string,
  input: TemplateUpdate,
  ip: string,
  externalUsage: ExternalUsage,
) {
  requirePrivileges(principal, 'metadata_management');
  for (const key of Object.keys(input)) {
    if (IMMUTABLE.has(key)) throw invalidField(`body.${key}`, 'is immutable and cannot be updated');
    if (!UPDATABLE.has(key))
      throw invalidField(`body.${key}`, `is not an updatable field (${[...UPDATABLE].join(', ')})`);
  }
  if (Object.keys(input).length === 0)
    throw invalidField('body', `send at least one updatable field: ${[...UPDATABLE].join(', ')}`);
  const name = input.name?.trim();
  if (name === '') throw invalidField('body.name', 'name cannot be empty');
  const now = deps.clock.now();
  try {
    const updated = await deps.db.transaction().execute(async (trx) => {
      await touchDefinitions(trx, principal.orgId, now);
      const row = await findTemplate(trx, principal.orgId, id);
      if (!row) throw templateNotFound();
      const beforeGroups = (await details(trx, principal.orgId, [id])).groupIds.get(id) ?? [];
      let groupIds: string[] | undefined;
      if (input.groupIds) {
        groupIds = await resolveGroups(trx, principal.orgId, input.groupIds);
        await checkNoDuplicateAttributes(trx, principal.orgId, groupIds, 'body.groupIds');
      }
      const access = input.accessTemplates
        ? await resolveAccess(trx, principal.orgId, input.accessTemplates)
        : undefined;
      if (name && name.toLowerCase() !== row.name_key) {
        const clash = await trx
          .selectFrom('metadata_templates')
          .select('id')
          .where('org_id', '=', principal.orgId)
          .where('name_key', '=', name.toLowerCase())
          .where('id', '!=', id)
          .executeTakeFirst();
        if (clash) throw duplicateName();
      }
      const patch: Partial<TemplateRow> = { updated_at: now, updated_by: principal.userId };
      if (name) Object.assign(patch, { name, name_key: name.toLowerCase() });
      if (input.templateOverride !== undefined) patch.template_override = toJson(input.templateOverride);
      await writeStructure(trx, principal.orgId, id, groupIds, access);
      // Defaults must still fit the (possibly new) effective template.
      const defaults = input.attributesDefaultValue ?? fromJson<DefaultValue[]>(row.default_values, []);
      try {
        patch.default_values = toJson(await checkDefaults(trx, principal.orgId, id, defaults));
      } catch (error) {
        if (input.attributesDefaultValue === undefined && error instanceof AppError) {
          throw invalidField(
            'body.groupIds',
            `the template's attributesDefaultValue would no longer fit: ${error.message}; send attributesDefaultValue too`,
          );
        }
        throw error;
      }
      await trx
        .updateTable('metadata_templates')
        .set(patch)
        .where('org_id', '=', principal.orgId)
        .where('id', '=', id)
        .execute();
      const afterGroups = groupIds ?? beforeGroups;
      const added = afterGroups.filter((g) => !beforeGroups.includes(g));
      const removed = beforeGroups.filter((g) => !afterGroups.includes(g));
      await recordDefinitionChange(trx, now, {
        orgId: principal.orgId,
        kind: 'template.updated',
        subjectType: 'template',
        subjectId: id,
        actorId: principal.userId,
        data: { fields: Object.keys(input), groups: { added, removed } },
      });
      await audit(trx, {
        orgId: principal.orgId,
        at: now,
        actorId: principal.userId,
        action: 'metadata.template.updated',
        targetType: 'metadata_template',
        targetId: id,
        ip,
        data: { fields: Object.keys(input) },
      });
      const label = typeLabel(fromJson<string[]>(row.template_types, []));
      await publishEvent(trx, now, {
        orgId: principal.orgId,
        type: 'metadata.template.updated',
        actor: principal.userId,
        data: {
          template: {
            id,
            name: { previous: row.name, current: patch.name ?? row.name },
            type: { previous: label, current: label },
            groups: { added: added.map((groupId) => ({ groupId })), removed: removed.map((groupId) => ({ groupId })) },
          },
        },
      });
      // The Action object follows its template (name, attributes, defaults, access templates).
      await syncActionObject(trx, now, principal.orgId, fromJson<string[]>(row.template_types, []), { templateId: id });
      return (await presentAdmin(trx, principal.orgId, [{ ...row, ...patch }], externalUsage))[0]!;
    });
    if (updated.actionObjectId !== null || isActionTemplate(updated.templateType)) deps.jobs.wake();
    return updated;
  } catch (error) {
    if (isUniqueViolation(error)) throw duplicateName();
    throw error;
  }
}

export async function deleteTemplate(
  deps: Deps,
  principal: Principal,
  id: string,
  ip: string,
  externalUsage: ExternalUsage,
): Promise<void> {
  requirePrivileges(principal, 'metadata_management');
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    await touchDefinitions(trx, principal.orgId, now);
    // Locked before the usage check: an asset being created with it holds it `for share` (PostgreSQL)
    // until it commits, and is then counted as a use.
    if (deps.engine === 'postgres')
      await trx
        .selectFrom('metadata_templates')
        .select('id')
        .where('org_id', '=', principal.orgId)
        .where('id', '=', id)
        .forUpdate()
        .execute();
    const row = await findTemplate(trx, principal.orgId, id);
    if (!row) throw templateNotFound();
    if (row.is_default === 1)
      throw conflict('The default metadata template cannot be deleted: assets created without a template use it');
    const usage = (await externalUsage(trx, principal.orgId, 'template', [id])).get(id);
    if (usage?.length) throw conflict(`Metadata template is in use: ${usage.join(', ')}`);
    await trx.deleteFrom('metadata_templates').where('org_id', '=', principal.orgId).where('id', '=', id).execute();
    await audit(trx, {
      orgId: principal.orgId,
      at: now,
      actorId: principal.userId,
      action: 'metadata.template.deleted',
      targetType: 'metadata_template',
      targetId: id,
      ip,
      data: { name: row.name },
    });
    await publishEvent(trx, now, {
      orgId: principal.orgId,
      type: 'metadata.template.deleted',
      actor: principal.userId,
      data: { template: { id, name: row.name } },
    });
    // Its Action object goes to the recycle bin (it is the template's own face, not a use of it).
    await syncActionObject(trx, now, principal.orgId, fromJson<string[]>(row.template_types, []), {
      templateId: id,
      actionObjectId: row.action_object_id,
    });
  });
  deps.jobs.wake();
}

/** Action-type templates: queue the job that makes, updates or retires their Action object, in the change's transaction. */
async function syncActionObject(
  trx: Trx,
  now: number,
  orgId: string,
  types: string[],
  job: ActionObjectJob,
): Promise<void> {
  if (!isActionTemplate(types)) return;
  await enqueueJob(trx, now, { type: ACTION_OBJECT_JOB, orgId, payload: job, maxAttempts: 10 });
}
