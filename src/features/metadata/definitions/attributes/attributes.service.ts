import type { Deps } from '../../../../deps.ts';
import { audit } from '../../../../core/audit.ts';
import { requirePrivileges } from '../../../../core/authz/authorize.ts';
import type { Principal } from '../../../../core/authz/principal.ts';
import { isUniqueViolation, type DbOrTrx, type Trx } from '../../../../core/db/connect.ts';
import { toJson } from '../../../../core/db/json.ts';
import { publishEvent } from '../../../../core/events/publish.ts';
import { AppError, conflict, invalidField } from '../../../../core/http/errors.ts';
import { newId } from '../../../../core/ids.ts';
import { recordDefinitionChange } from '../../access.ts';
import { touchDefinitions } from '../template-cache.ts';
import { nameContains } from '../groups/groups.service.ts';
import { settingsOf, type AttributeRow, type AttributeSettings } from '../definitions.repo.ts';
import type { ExternalUsage } from '../../hooks.ts';
import {
  attributeFamily,
  findAttribute,
  freeSearchField,
  groupsUsingAttributes,
  tablesUsingAttributes,
} from '../metadata.repo.ts';
import type { AttributeCreate, AttributeOut, AttributeUpdate, LevelInput } from '../../metadata.schemas.ts';
import { DATE_FORMATS, type AttributeType, type DateFormat } from '../../validation/model.ts';
import { attributeOut } from '../present.ts';
import { lookupTable } from '../../../../core/lookup.ts';
import { checkEmbeddedFields } from './embedded-fields.ts';

const TYPE_ALIASES = lookupTable<AttributeType>({
  text: 'text',
  textbox: 'text',
  textarea: 'text',
  date: 'date',
  controlledvocabulary: 'controlledVocabulary',
  controlled_vocabulary: 'controlledVocabulary',
  'controlled vocabulary': 'controlledVocabulary',
  vocabulary: 'controlledVocabulary',
  dropdown: 'controlledVocabulary',
  table: 'table',
  tabular: 'table',
  cascade: 'cascade',
  cascading: 'cascade',
});

function normalizeType(value: string, field: string): AttributeType {
  const type = TYPE_ALIASES[value.trim().toLowerCase()];
  if (!type)
    throw invalidField(
      field,
      `${JSON.stringify(value)} is not an attribute type: text, date, controlledVocabulary, table or cascade`,
    );
  return type;
}

const SLUG = /^[a-z][a-z0-9_]{0,99}$/;
const attributeNotFound = () => new AppError('not_found', 'Metadata attribute not found');
const duplicateName = () => conflict('A metadata attribute with this name already exists', 'body.name');

async function present(db: DbOrTrx, orgId: string, ids: string[]): Promise<AttributeOut[]> {
  const family = await attributeFamily(db, orgId, ids);
  return ids.flatMap((id) => {
    const row = family.get(id);
    return row ? [attributeOut(row, family)] : [];
  });
}

async function checkVocabularies(db: DbOrTrx, orgId: string, ids: { id: string; field: string }[]): Promise<void> {
  if (ids.length === 0) return;
  const found = new Set(
    (
      await db
        .selectFrom('metadata_vocabularies')
        .select('id')
        .where('org_id', '=', orgId)
        .where(
          'id',
          'in',
          ids.map((i) => i.id),
        )
        .execute()
    ).map((r) => r.id),
  );
  for (const { id, field } of ids)
    if (!found.has(id)) throw invalidField(field, `controlled vocabulary ${id} does not exist`);
}

async function checkColumns(db: DbOrTrx, orgId: string, selfId: string, ids: string[]): Promise<void> {
  if (ids.length === 0) throw invalidField('body.tableFieldIds', 'a table needs at least one column attribute');
  const seen = new Set<string>();
  ids.forEach((id, i) => {
    if (seen.has(id)) throw invalidField(`body.tableFieldIds[${i}]`, 'appears twice');
    if (id === selfId) throw invalidField(`body.tableFieldIds[${i}]`, 'a table cannot be its own column');
    seen.add(id);
  });
  const rows = await db
    .selectFrom('metadata_attributes')
    .select(['id', 'type', 'system', 'readonly'])
    .where('org_id', '=', orgId)
    .where('parent_id', 'is', null)
    .where('id', 'in', ids)
    .execute();
  const byId = new Map(rows.map((r) => [r.id, r]));
  ids.forEach((id, i) => {
    const row = byId.get(id);
    if (!row) throw invalidField(`body.tableFieldIds[${i}]`, `attribute ${id} does not exist`);
    if (row.type === 'table')
      throw invalidField(`body.tableFieldIds[${i}]`, 'a table cannot be a column of another table');
  });
}

function checkLevels(levels: LevelInput[] | undefined): LevelInput[] {
  if (!levels || levels.length < 2)
    throw invalidField('body.levels', 'a cascade needs at least two levels (each a vocabulary)');
  const names = new Set<string>();
  levels.forEach((l, i) => {
    const name = l.name.trim();
    if (name === '') throw invalidField(`body.levels[${i}].name`, 'cannot be empty');
    if (names.has(name.toLowerCase()))
      throw invalidField(`body.levels[${i}].name`, `level name ${JSON.stringify(name)} appears twice`);
    names.add(name.toLowerCase());
  });
  return levels;
}

function checkDateFormat(value: string | undefined): DateFormat {
  const format = value ?? 'MM/dd/yyyy';
  if (!(DATE_FORMATS as readonly string[]).includes(format))
    throw invalidField('body.dateFormat', `must be one of ${DATE_FORMATS.join(', ')}`);
  return format as DateFormat;
}

async function nameTaken(db: DbOrTrx, orgId: string, name: string, exceptId?: string): Promise<boolean> {
  let q = db
    .selectFrom('metadata_attributes')
    .select('id')
    .where('org_id', '=', orgId)
    .where('parent_id', 'is', null)
    .where('name_key', '=', name.toLowerCase());
  if (exceptId) q = q.where('id', '!=', exceptId);
  return Boolean(await q.executeTakeFirst());
}

/** Writes the level rows of a cascade: keeps levels sent with their id, creates new ones, removes the rest. */
async function writeLevels(
  trx: Trx,
  orgId: string,
  now: number,
  cascade: { id: string; searchField: string; createdBy: string },
  levels: LevelInput[],
): Promise<string[]> {
  const existing = await trx
    .selectFrom('metadata_attributes')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('parent_id', '=', cascade.id)
    .execute();
  const byId = new Map(existing.map((r) => [r.id, r]));
  const kept = new Set<string>();
  const taken = new Set<string>();
  for (const [position, level] of levels.entries()) {
    const settings: AttributeSettings = {
      vocabularyId: level.controlledVocabularyId,
      multiple: level.isMultipleSelect ?? false,
    };
    const current = level.id ? byId.get(level.id) : undefined;
    if (level.id && !current)
      throw invalidField(`body.levels[${position}].id`, `${level.id} is not a level of this cascade`);
    if (current) {
      kept.add(current.id);
      await trx
        .updateTable('metadata_attributes')
        .set({
          name: level.name.trim(),
          name_key: level.name.trim().toLowerCase(),
          settings: toJson(settings),
          required: level.required ? 1 : 0,
          position,
          updated_at: now,
        })
        .where('org_id', '=', orgId)
        .where('id', '=', current.id)
        .execute();
    } else {
      const searchField = await freeSearchField(
        trx,
        'metadata_attributes',
        orgId,
        `${cascade.searchField}_${level.name}`,
        taken,
      );
      taken.add(searchField);
      await trx
        .insertInto('metadata_attributes')
        .values({
          id: newId(now),
          org_id: orgId,
          parent_id: cascade.id,
          name: level.name.trim(),
          name_key: level.name.trim().toLowerCase(),
          search_field: searchField,
          type: 'controlledVocabulary',
          sub_type: 'dropdown',
          settings: toJson(settings),
          required: level.required ? 1 : 0,
          readonly: 0,
          visible: 1,
          facetable: 0,
          sortable: 0,
          restricted: 0,
          system: 0,
          position,
          created_by: cascade.createdBy,
          created_at: now,
          updated_at: now,
        })
        .execute();
    }
  }
  const removed = existing.filter((r) => !kept.has(r.id));
  if (removed.length > 0)
    await trx
      .deleteFrom('metadata_attributes')
      .where('org_id', '=', orgId)
      .where(
        'id',
        'in',
        removed.map((r) => r.id),
      )
      .execute();
  return removed.map((r) => r.id);
}

/** `embeddedFields` of a write (kept from `base` when not sent); other types refuse a non-empty list. */
function embedded(
  type: AttributeType,
  input: Partial<AttributeCreate>,
  base: AttributeSettings,
): Pick<AttributeSettings, 'embeddedFields'> {
  const fields =
    input.embeddedFields === undefined ? (base.embeddedFields ?? []) : checkEmbeddedFields(input.embeddedFields, type);
  return fields.length > 0 ? { embeddedFields: fields } : {};
}

function settingsFor(
  type: AttributeType,
  input: Partial<AttributeCreate>,
  base: AttributeSettings = {},
): AttributeSettings {
  switch (type) {
    case 'text': {
      const multiple = input.isMultipleSelect ?? base.multiple ?? false;
      return {
        length: input.length ?? base.length ?? 1000,
        multiLine: input.isMultiLine ?? base.multiLine ?? false,
        ...(multiple ? { multiple } : {}),
        ...embedded(type, input, base),
      };
    }
    case 'date':
      return { dateFormat: checkDateFormat(input.dateFormat ?? base.dateFormat), ...embedded(type, input, base) };
    case 'controlledVocabulary': {
      const vocabularyId = input.controlledVocabularyId ?? base.vocabularyId;
      if (!vocabularyId)
        throw invalidField('body.controlledVocabularyId', 'a controlled vocabulary attribute needs its vocabulary');
      if (input.embeddedFields?.length) checkEmbeddedFields(input.embeddedFields, type);
      return { vocabularyId, multiple: input.isMultipleSelect ?? base.multiple ?? false };
    }
    case 'table':
      if (input.embeddedFields?.length) checkEmbeddedFields(input.embeddedFields, type);
      return {
        singleRow: input.isSingleRow ?? base.singleRow ?? false,
        columnIds: input.tableFieldIds ?? base.columnIds ?? [],
      };
    case 'cascade':
      if (input.embeddedFields?.length) checkEmbeddedFields(input.embeddedFields, type);
      return {};
  }
}

function defaultSubType(type: AttributeType, settings: AttributeSettings): string {
  return type === 'text'
    ? settings.multiLine
      ? 'textArea'
      : 'textBox'
    : type === 'date'
      ? 'datePicker'
      : type === 'controlledVocabulary'
        ? 'dropdown'
        : type;
}

const summary = (row: AttributeRow) => ({ id: row.id, name: row.name, searchField: row.search_field, type: row.type });

export async function listAttributes(
  deps: Deps,
  principal: Principal,
  query: { searchTerm?: string; type?: string },
): Promise<AttributeOut[]> {
  requirePrivileges(principal, 'metadata_management');
  let q = deps.db
    .selectFrom('metadata_attributes')
    .select('id')
    .where('org_id', '=', principal.orgId)
    .where('parent_id', 'is', null);
  if (query.searchTerm) q = q.where(nameContains(query.searchTerm));
  if (query.type) q = q.where('type', '=', normalizeType(query.type, 'query.type'));
  const ids = (await q.orderBy('name_key').execute()).map((r) => r.id);
  return present(deps.db, principal.orgId, ids);
}

export async function getAttribute(deps: Deps, principal: Principal, id: string): Promise<AttributeOut> {
  requirePrivileges(principal, 'metadata_management');
  const [out] = await present(deps.db, principal.orgId, [id]);
  if (!out || (await findAttribute(deps.db, principal.orgId, id)) === undefined) throw attributeNotFound();
  return out;
}

export async function createAttribute(
  deps: Deps,
  principal: Principal,
  input: AttributeCreate,
  ip: string,
): Promise<AttributeOut> {
  requirePrivileges(principal, 'metadata_management');
  const name = input.name.trim();
  if (name === '') throw invalidField('body.name', 'name cannot be empty');
  const type = normalizeType(input.type, 'body.type');
  const settings = settingsFor(type, input);
  const levels = type === 'cascade' ? checkLevels(input.levels) : [];
  if (input.searchField !== undefined && !SLUG.test(input.searchField))
    throw invalidField('body.searchField', 'must be a slug: a lower-case letter, then lower-case letters, digits or _');
  const now = deps.clock.now();
  const id = newId(now);
  try {
    return await deps.db.transaction().execute(async (trx) => {
      await touchDefinitions(trx, principal.orgId, now);
      if (await nameTaken(trx, principal.orgId, name)) throw duplicateName();
      if (settings.vocabularyId)
        await checkVocabularies(trx, principal.orgId, [
          { id: settings.vocabularyId, field: 'body.controlledVocabularyId' },
        ]);
      await checkVocabularies(
        trx,
        principal.orgId,
        levels.map((l, i) => ({ id: l.controlledVocabularyId, field: `body.levels[${i}].controlledVocabularyId` })),
      );
      if (type === 'table') await checkColumns(trx, principal.orgId, id, settings.columnIds ?? []);
      let searchField = input.searchField;
      if (searchField) {
        const taken = await trx
          .selectFrom('metadata_attributes')
          .select('id')
          .where('org_id', '=', principal.orgId)
          .where('search_field', '=', searchField)
          .executeTakeFirst();
        if (taken) throw conflict(`searchField ${searchField} is already used`, 'body.searchField');
      } else {
        searchField = await freeSearchField(trx, 'metadata_attributes', principal.orgId, name);
      }
      const row: AttributeRow = {
        id,
        org_id: principal.orgId,
        parent_id: null,
        name,
        name_key: name.toLowerCase(),
        search_field: searchField,
        type,
        sub_type: input.subType ?? defaultSubType(type, settings),
        settings: toJson(settings),
        required: input.required ? 1 : 0,
        readonly: input.readonly ? 1 : 0,
        visible: input.visible === false ? 0 : 1,
        facetable: input.facetable ? 1 : 0,
        sortable: input.sortable ? 1 : 0,
        restricted: input.isRestricted ? 1 : 0,
        system: 0,
        position: 0,
        created_by: principal.userId,
        created_at: now,
        updated_at: now,
      };
      await trx.insertInto('metadata_attributes').values(row).execute();
      if (type === 'cascade')
        await writeLevels(trx, principal.orgId, now, { id, searchField, createdBy: principal.userId }, levels);
      await audit(trx, {
        orgId: principal.orgId,
        at: now,
        actorId: principal.userId,
        action: 'metadata.attribute.created',
        targetType: 'metadata_attribute',
        targetId: id,
        ip,
      });
      await publishEvent(trx, now, {
        orgId: principal.orgId,
        type: 'metadata.attribute.created',
        actor: principal.userId,
        data: { attribute: summary(row) },
      });
      return (await present(trx, principal.orgId, [id]))[0]!;
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw duplicateName();
    throw error;
  }
}

const UPDATABLE = new Set([
  'name',
  'subType',
  'length',
  'isMultiLine',
  'dateFormat',
  'controlledVocabularyId',
  'isMultipleSelect',
  'isSingleRow',
  'tableFieldIds',
  'embeddedFields',
  'levels',
  'required',
  'readonly',
  'visible',
  'facetable',
  'sortable',
  'isRestricted',
  'type',
  'searchField',
]);
const IMMUTABLE = new Set([
  'id',
  'system',
  'customerId',
  'createdEpoch',
  'createdDate',
  'lastUpdatedEpoch',
  'lastUpdatedDate',
  'createdBy',
]);

export async function updateAttribute(
  deps: Deps,
  principal: Principal,
  id: string,
  input: AttributeUpdate,
  ip: string,
): Promise<AttributeOut> {
  requirePrivileges(principal, 'metadata_management');
  for (const key of Object.keys(input)) {
    if (IMMUTABLE.has(key)) throw invalidField(`body.${key}`, 'cannot be changed');
    if (!UPDATABLE.has(key)) throw invalidField(`body.${key}`, 'is not a field of a metadata attribute');
  }
  if (Object.keys(input).length === 0) throw invalidField('body', 'send at least one field to change');
  const now = deps.clock.now();
  try {
    return await deps.db.transaction().execute(async (trx) => {
      await touchDefinitions(trx, principal.orgId, now);
      const row = await findAttribute(trx, principal.orgId, id);
      if (!row) throw attributeNotFound();
      const type = row.type as AttributeType;
      if (input.type !== undefined && normalizeType(input.type, 'body.type') !== type)
        throw invalidField('body.type', 'cannot be changed; create a new attribute instead');
      if (input.searchField !== undefined && input.searchField !== row.search_field)
        throw invalidField('body.searchField', 'cannot be changed (search, defaults and stored documents use it)');
      if (row.system === 1 && input.readonly !== undefined && (input.readonly ? 1 : 0) !== row.readonly)
        throw invalidField('body.readonly', 'cannot be changed on a system attribute');
      const before = settingsOf(row);
      const settings = settingsFor(type, input as Partial<AttributeCreate>, before);
      if (input.controlledVocabularyId)
        await checkVocabularies(trx, principal.orgId, [
          { id: input.controlledVocabularyId, field: 'body.controlledVocabularyId' },
        ]);
      if (type === 'table' && input.tableFieldIds) await checkColumns(trx, principal.orgId, id, input.tableFieldIds);
      let levels: LevelInput[] | undefined;
      if (type === 'cascade' && input.levels) {
        levels = checkLevels(input.levels);
        await checkVocabularies(
          trx,
          principal.orgId,
          levels.map((l, i) => ({ id: l.controlledVocabularyId, field: `body.levels[${i}].controlledVocabularyId` })),
        );
      }
      const name = input.name?.trim();
      if (name === '') throw invalidField('body.name', 'name cannot be empty');
      if (name && name.toLowerCase() !== row.name_key && (await nameTaken(trx, principal.orgId, name, id)))
        throw duplicateName();
      const flag = (v: boolean | undefined, current: number) => (v === undefined ? current : v ? 1 : 0);
      const patch = {
        name: name ?? row.name,
        name_key: (name ?? row.name).toLowerCase(),
        sub_type: input.subType ?? row.sub_type,
        settings: toJson(settings),
        required: flag(input.required, row.required),
        readonly: flag(input.readonly, row.readonly),
        visible: flag(input.visible, row.visible),
        facetable: flag(input.facetable, row.facetable),
        sortable: flag(input.sortable, row.sortable),
        restricted: flag(input.isRestricted, row.restricted),
        updated_at: now,
      };
      await trx
        .updateTable('metadata_attributes')
        .set(patch)
        .where('org_id', '=', principal.orgId)
        .where('id', '=', id)
        .execute();
      const removedLevels = levels
        ? await writeLevels(
            trx,
            principal.orgId,
            now,
            { id, searchField: row.search_field, createdBy: principal.userId },
            levels,
          )
        : [];
      const changed = Object.keys(input).filter((k) => k !== 'type' && k !== 'searchField');
      await recordDefinitionChange(trx, now, {
        orgId: principal.orgId,
        kind: 'attribute.updated',
        subjectType: 'attribute',
        subjectId: id,
        actorId: principal.userId,
        data: {
          searchField: row.search_field,
          fields: changed,
          previous: { name: row.name, settings: before },
          current: { name: patch.name, settings },
          removedLevels,
        },
      });
      await audit(trx, {
        orgId: principal.orgId,
        at: now,
        actorId: principal.userId,
        action: 'metadata.attribute.updated',
        targetType: 'metadata_attribute',
        targetId: id,
        ip,
        data: { fields: changed },
      });
      await publishEvent(trx, now, {
        orgId: principal.orgId,
        type: 'metadata.attribute.updated',
        actor: principal.userId,
        data: { attribute: summary({ ...row, ...patch }) },
      });
      return (await present(trx, principal.orgId, [id]))[0]!;
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw duplicateName();
    throw error;
  }
}

export async function deleteAttribute(
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
    const row = await findAttribute(trx, principal.orgId, id);
    if (!row) throw attributeNotFound();
    if (row.system === 1) throw conflict(`${row.name} is a system attribute and cannot be deleted`);
    const groups = (await groupsUsingAttributes(trx, principal.orgId, [id])).get(id);
    if (groups?.length)
      throw conflict(`Metadata attribute is used by metadata groups: ${groups.map((g) => g.name).join(', ')}`);
    const tables = (await tablesUsingAttributes(trx, principal.orgId, [id])).get(id);
    if (tables?.length)
      throw conflict(`Metadata attribute is a column of table attributes: ${tables.map((g) => g.name).join(', ')}`);
    const external = (await externalUsage(trx, principal.orgId, 'attribute', [id])).get(id);
    if (external?.length) throw conflict(`Metadata attribute is in use: ${external.join(', ')}`);
    await trx.deleteFrom('metadata_attributes').where('org_id', '=', principal.orgId).where('id', '=', id).execute();
    await recordDefinitionChange(trx, now, {
      orgId: principal.orgId,
      kind: 'attribute.deleted',
      subjectType: 'attribute',
      subjectId: id,
      actorId: principal.userId,
      data: { name: row.name, searchField: row.search_field },
    });
    await audit(trx, {
      orgId: principal.orgId,
      at: now,
      actorId: principal.userId,
      action: 'metadata.attribute.deleted',
      targetType: 'metadata_attribute',
      targetId: id,
      ip,
      data: { name: row.name },
    });
    await publishEvent(trx, now, {
      orgId: principal.orgId,
      type: 'metadata.attribute.deleted',
      actor: principal.userId,
      data: { attribute: summary(row) },
    });
  });
}
