import type { Selectable } from 'kysely';
import type { Deps } from '../../../../deps.ts';
import { audit } from '../../../../core/audit.ts';
import { requireAnyPrivilege, requirePrivileges } from '../../../../core/authz/authorize.ts';
import type { Principal } from '../../../../core/authz/principal.ts';
import { isUniqueViolation, type DbOrTrx, type Trx } from '../../../../core/db/connect.ts';
import type { MetadataVocabulariesTable, MetadataVocabularyValuesTable } from '../../../../core/db/schema.ts';
import { publishEvent } from '../../../../core/events/publish.ts';
import { AppError, conflict, invalidField, notFound } from '../../../../core/http/errors.ts';
import { newId } from '../../../../core/ids.ts';
import { recordDefinitionChange } from '../../access.ts';
import { touchDefinitions } from '../template-cache.ts';
import { customerIdOf } from '../../../identity/index.ts';
import type { ExternalUsage } from '../../hooks.ts';
import { attributesUsingVocabularies, freeSearchField } from '../metadata.repo.ts';
import type { VocabValueInput, VocabularyCreate, VocabularyUpdate } from '../../metadata.schemas.ts';

type VocabRow = Selectable<MetadataVocabulariesTable>;
type ValueRow = Selectable<MetadataVocabularyValuesTable>;

/** Who may read definitions: administrators, template managers, and uploaders (who fill them in). */
export function requireMetadataRead(principal: Principal): void {
  requireAnyPrivilege(principal, 'metadata_management', 'metadata_template_management', 'upload');
}

const MAX_VALUE = 500;

async function present(db: DbOrTrx, orgId: string, rows: VocabRow[], key: 'metadata' | 'metadataDocument') {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const values = await db
    .selectFrom('metadata_vocabulary_values')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('vocabulary_id', 'in', ids)
    .orderBy('vocabulary_id')
    .orderBy('position')
    .execute();
  const users = await attributesUsingVocabularies(db, orgId, ids);
  const customer = await customerIdOf(db, orgId);
  return rows.map((row) => ({
    metadataDefinitionId: row.id,
    metadataDefinitionName: row.name,
    metadataDefinitionSearchField: row.search_field,
    metadataDefinitionType: 'controlledVocabulary' as const,
    customerId: customer,
    createdEpoch: row.created_at,
    lastUpdatedEpoch: row.updated_at,
    usedBy: users.get(row.id) ?? [],
    [key]: {
      values: values
        .filter((v) => v.vocabulary_id === row.id)
        .map((v) => ({ valueId: v.id, valueName: v.name, parentValueId: v.parent_id })),
      searchable: row.searchable === 1,
    },
  }));
}

/** In slices, so that thousands of values stay under each engine's bound-parameter limit. */
async function insertValues(db: DbOrTrx, rows: ValueRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 500)
    await db
      .insertInto('metadata_vocabulary_values')
      .values(rows.slice(i, i + 500))
      .execute();
}

async function findVocabulary(db: DbOrTrx, orgId: string, id: string): Promise<VocabRow | undefined> {
  return db
    .selectFrom('metadata_vocabularies')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .executeTakeFirst();
}

const vocabNotFound = () => new AppError('not_found', 'Controlled vocabulary not found');

function valueInput(raw: VocabValueInput, field: string): { name: string; parentId: string | null | undefined } {
  const name = (typeof raw === 'string' ? raw : (raw.valueName ?? raw.name ?? '')).trim();
  if (name === '') throw invalidField(field, 'value cannot be empty');
  if (name.length > MAX_VALUE) throw invalidField(field, `value is longer than ${MAX_VALUE} characters`);
  return { name, parentId: typeof raw === 'string' ? undefined : raw.parentValueId };
}

/** Parent values must exist in the organization, in a vocabulary other than this one. */
async function checkParents(
  db: DbOrTrx,
  orgId: string,
  vocabularyId: string,
  parentIds: string[],
  field: string,
): Promise<void> {
  const wanted = [...new Set(parentIds)];
  if (wanted.length === 0) return;
  const found = await db
    .selectFrom('metadata_vocabulary_values')
    .select(['id', 'vocabulary_id'])
    .where('org_id', '=', orgId)
    .where('id', 'in', wanted)
    .execute();
  const byId = new Map(found.map((f) => [f.id, f.vocabulary_id]));
  for (const id of wanted) {
    if (!byId.has(id)) throw invalidField(field, `parentValueId ${id} is not a value of any vocabulary`);
    if (byId.get(id) === vocabularyId)
      throw invalidField(
        field,
        `parentValueId ${id} is in this same vocabulary; a parent belongs to the previous level's vocabulary`,
      );
  }
}

function checkDuplicates(values: { name: string; parentId: string | null | undefined }[], field: string): void {
  const seen = new Set<string>();
  for (const v of values) {
    const key = `${v.parentId ?? ''}\u0000${v.name.toLowerCase()}`;
    if (seen.has(key))
      throw invalidField(
        field,
        `value ${JSON.stringify(v.name)} appears twice${v.parentId ? ' under the same parent' : ''}`,
      );
    seen.add(key);
  }
}

export async function listVocabularies(deps: Deps, principal: Principal) {
  requireMetadataRead(principal);
  const rows = await deps.db
    .selectFrom('metadata_vocabularies')
    .selectAll()
    .where('org_id', '=', principal.orgId)
    .orderBy('name_key')
    .execute();
  return present(deps.db, principal.orgId, rows, 'metadata');
}

export async function getVocabulary(deps: Deps, principal: Principal, id: string) {
  requireMetadataRead(principal);
  const row = await findVocabulary(deps.db, principal.orgId, id);
  if (!row) throw vocabNotFound();
  return (await present(deps.db, principal.orgId, [row], 'metadataDocument'))[0]!;
}

const duplicateName = () => conflict('A controlled vocabulary with this name already exists', 'body.name');

export async function createVocabulary(deps: Deps, principal: Principal, input: VocabularyCreate, ip: string) {
  requirePrivileges(principal, 'metadata_management');
  const name = input.name.trim();
  if (name === '') throw invalidField('body.name', 'name cannot be empty');
  const values = (input.values ?? []).map((v, i) => valueInput(v, `body.values[${i}]`));
  checkDuplicates(values, 'body.values');
  const now = deps.clock.now();
  try {
    return await deps.db.transaction().execute(async (trx) => {
      await touchDefinitions(trx, principal.orgId, now);
      const id = newId(now);
      await checkParents(
        trx,
        principal.orgId,
        id,
        values.flatMap((v) => (v.parentId ? [v.parentId] : [])),
        'body.values',
      );
      const row: VocabRow = {
        id,
        org_id: principal.orgId,
        name,
        name_key: name.toLowerCase(),
        search_field: await freeSearchField(trx, 'metadata_vocabularies', principal.orgId, name),
        searchable: input.searchable === false ? 0 : 1,
        system: 0,
        created_by: principal.userId,
        created_at: now,
        updated_at: now,
      };
      await trx.insertInto('metadata_vocabularies').values(row).execute();
      await insertValues(
        trx,
        values.map((v, position) => ({
          id: newId(now),
          org_id: principal.orgId,
          vocabulary_id: id,
          name: v.name,
          name_key: v.name.toLowerCase(),
          parent_id: v.parentId ?? null,
          position,
          created_at: now,
          updated_at: now,
        })),
      );
      await audit(trx, {
        orgId: principal.orgId,
        at: now,
        actorId: principal.userId,
        action: 'metadata.vocabulary.created',
        targetType: 'metadata_vocabulary',
        targetId: id,
        ip,
      });
      await publishEvent(trx, now, {
        orgId: principal.orgId,
        type: 'metadata.vocabulary.created',
        actor: principal.userId,
        data: { vocabulary: { id, name } },
      });
      return (await present(trx, principal.orgId, [row], 'metadataDocument'))[0]!;
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw duplicateName();
    throw error;
  }
}

export async function updateVocabulary(
  deps: Deps,
  principal: Principal,
  id: string,
  input: VocabularyUpdate,
  ip: string,
) {
  requirePrivileges(principal, 'metadata_management');
  const hasChange =
    input.name !== undefined ||
    input.searchable !== undefined ||
    (input.add?.length ?? 0) > 0 ||
    (input.update?.length ?? 0) > 0 ||
    (input.delete?.length ?? 0) > 0;
  if (!hasChange) throw invalidField('body', 'send at least one of name, searchable, add, update, delete');
  if (input.name !== undefined && input.name.trim() === '') throw invalidField('body.name', 'name cannot be empty');
  const adds = (input.add ?? []).map((v, i) => valueInput(v, `body.add[${i}]`));
  const now = deps.clock.now();
  try {
    return await deps.db.transaction().execute(async (trx) => {
      await touchDefinitions(trx, principal.orgId, now);
      const row = await findVocabulary(trx, principal.orgId, id);
      if (!row) throw vocabNotFound();
      const values = await trx
        .selectFrom('metadata_vocabulary_values')
        .selectAll()
        .where('org_id', '=', principal.orgId)
        .where('vocabulary_id', '=', id)
        .orderBy('position')
        .execute();
      const byId = new Map(values.map((v) => [v.id, v]));
      const deleted = new Set(input.delete ?? []);
      (input.delete ?? []).forEach((valueId, i) => {
        if (!byId.has(valueId)) throw invalidField(`body.delete[${i}]`, `${valueId} is not a value of this vocabulary`);
      });
      const updates = (input.update ?? []).map((u, i) => {
        const field = `body.update[${i}]`;
        const current = byId.get(u.valueId);
        if (!current) throw invalidField(`${field}.valueId`, `${u.valueId} is not a value of this vocabulary`);
        if (deleted.has(u.valueId)) throw invalidField(`${field}.valueId`, 'is also being deleted');
        const name = u.valueName === undefined ? current.name : u.valueName.trim();
        if (name === '') throw invalidField(`${field}.valueName`, 'value cannot be empty');
        if (name.length > MAX_VALUE)
          throw invalidField(`${field}.valueName`, `value is longer than ${MAX_VALUE} characters`);
        return { current, name, parentId: u.parentValueId === undefined ? current.parent_id : u.parentValueId };
      });
      // The resulting value set must have no duplicate names (per parent).
      const updated = new Map(updates.map((u) => [u.current.id, u]));
      const after = [
        ...values
          .filter((v) => !deleted.has(v.id))
          .map((v) => ({
            name: updated.get(v.id)?.name ?? v.name,
            parentId: updated.has(v.id) ? updated.get(v.id)!.parentId : v.parent_id,
          })),
        ...adds,
      ];
      checkDuplicates(after, input.add?.length ? 'body.add' : 'body.update');
      await checkParents(
        trx,
        principal.orgId,
        id,
        [...adds, ...updates].flatMap((v) => (v.parentId ? [v.parentId] : [])),
        input.add?.length ? 'body.add' : 'body.update',
      );

      // A value that other values sit under (a cascade's previous level) cannot go.
      if (deleted.size > 0) {
        const children = await trx
          .selectFrom('metadata_vocabulary_values')
          .innerJoin('metadata_vocabularies', 'metadata_vocabularies.id', 'metadata_vocabulary_values.vocabulary_id')
          .select([
            'metadata_vocabulary_values.parent_id',
            'metadata_vocabulary_values.name',
            'metadata_vocabularies.name as vocabulary',
          ])
          .where('metadata_vocabulary_values.org_id', '=', principal.orgId)
          .where('metadata_vocabulary_values.parent_id', 'in', [...deleted])
          .execute();
        if (children.length > 0) {
          const c = children[0]!;
          throw conflict(
            `Value ${JSON.stringify(byId.get(c.parent_id!)!.name)} has values under it in vocabulary ${JSON.stringify(c.vocabulary)} (e.g. ${JSON.stringify(c.name)}); delete or move those first`,
            'body.delete',
          );
        }
      }

      const patch: Partial<VocabRow> = { updated_at: now };
      if (input.name !== undefined)
        Object.assign(patch, { name: input.name.trim(), name_key: input.name.trim().toLowerCase() });
      if (input.searchable !== undefined) patch.searchable = input.searchable ? 1 : 0;
      await trx
        .updateTable('metadata_vocabularies')
        .set(patch)
        .where('org_id', '=', principal.orgId)
        .where('id', '=', id)
        .execute();

      const change = (kind: string, data: Record<string, unknown>) =>
        recordDefinitionChange(trx, now, {
          orgId: principal.orgId,
          kind,
          subjectType: 'vocabulary',
          subjectId: id,
          data,
          actorId: principal.userId,
        });
      if (deleted.size > 0) {
        await trx
          .deleteFrom('metadata_vocabulary_values')
          .where('org_id', '=', principal.orgId)
          .where('vocabulary_id', '=', id)
          .where('id', 'in', [...deleted])
          .execute();
        await change('vocabulary.values.deleted', {
          valueIds: [...deleted],
          names: [...deleted].map((d) => byId.get(d)!.name),
        });
      }
      for (const u of updates) {
        if (u.name === u.current.name && u.parentId === u.current.parent_id) continue;
        await trx
          .updateTable('metadata_vocabulary_values')
          .set({ name: u.name, name_key: u.name.toLowerCase(), parent_id: u.parentId ?? null, updated_at: now })
          .where('org_id', '=', principal.orgId)
          .where('id', '=', u.current.id)
          .execute();
        if (u.name !== u.current.name)
          await change('vocabulary.value.renamed', {
            valueId: u.current.id,
            previous: u.current.name,
            current: u.name,
          });
        if (u.parentId !== u.current.parent_id)
          await change('vocabulary.value.reparented', {
            valueId: u.current.id,
            previous: u.current.parent_id,
            current: u.parentId ?? null,
          });
      }
      const addedRows: ValueRow[] = [];
      if (adds.length > 0) {
        const start = values.reduce((m, v) => Math.max(m, v.position + 1), 0);
        addedRows.push(
          ...adds.map((v, i) => ({
            id: newId(now),
            org_id: principal.orgId,
            vocabulary_id: id,
            name: v.name,
            name_key: v.name.toLowerCase(),
            parent_id: v.parentId ?? null,
            position: start + i,
            created_at: now,
            updated_at: now,
          })),
        );
        await insertValues(trx, addedRows);
      }
      await audit(trx, {
        orgId: principal.orgId,
        at: now,
        actorId: principal.userId,
        action: 'metadata.vocabulary.updated',
        targetType: 'metadata_vocabulary',
        targetId: id,
        ip,
        data: { added: addedRows.length, updated: updates.length, deleted: deleted.size },
      });
      await publishEvent(trx, now, {
        orgId: principal.orgId,
        type: 'metadata.vocabulary.updated',
        actor: principal.userId,
        data: {
          vocabulary: {
            id,
            name: patch.name ?? row.name,
            values: {
              added: addedRows.map((v) => ({ id: v.id, name: v.name })),
              updated: updates.map((u) => ({ id: u.current.id, name: u.name })),
              deleted: [...deleted],
            },
          },
        },
      });
      return (await present(trx, principal.orgId, [{ ...row, ...patch }], 'metadataDocument'))[0]!;
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw duplicateName();
    throw error;
  }
}

export async function deleteVocabulary(
  deps: Deps,
  principal: Principal,
  id: string,
  ip: string,
  externalUsage: ExternalUsage,
) {
  requirePrivileges(principal, 'metadata_management');
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx: Trx) => {
    await touchDefinitions(trx, principal.orgId, now);
    const row = await findVocabulary(trx, principal.orgId, id);
    if (!row) throw vocabNotFound();
    const users = (await attributesUsingVocabularies(trx, principal.orgId, [id])).get(id);
    if (users?.length)
      throw conflict(`Controlled vocabulary is used by attributes: ${users.map((u) => u.name).join(', ')}`);
    const external = (await externalUsage(trx, principal.orgId, 'vocabulary', [id])).get(id);
    if (external?.length) throw conflict(`Controlled vocabulary is in use: ${external.join(', ')}`);
    const children = await trx
      .selectFrom('metadata_vocabulary_values as child')
      .innerJoin('metadata_vocabulary_values as parent', 'parent.id', 'child.parent_id')
      .innerJoin('metadata_vocabularies as v', 'v.id', 'child.vocabulary_id')
      .select(['v.name'])
      .where('parent.vocabulary_id', '=', id)
      .where('child.org_id', '=', principal.orgId)
      .limit(1)
      .execute();
    if (children.length > 0)
      throw conflict(
        `Values of vocabulary ${JSON.stringify(children[0]!.name)} sit under this vocabulary's values (a cascade); delete that vocabulary or its parent links first`,
      );
    await trx.deleteFrom('metadata_vocabularies').where('org_id', '=', principal.orgId).where('id', '=', id).execute();
    await audit(trx, {
      orgId: principal.orgId,
      at: now,
      actorId: principal.userId,
      action: 'metadata.vocabulary.deleted',
      targetType: 'metadata_vocabulary',
      targetId: id,
      ip,
      data: { name: row.name },
    });
    await publishEvent(trx, now, {
      orgId: principal.orgId,
      type: 'metadata.vocabulary.deleted',
      actor: principal.userId,
      data: { vocabulary: { id, name: row.name } },
    });
  });
  return { status: 'success' as const, message: 'Metadata Definition delete operation succeeded' };
}

export { notFound };
