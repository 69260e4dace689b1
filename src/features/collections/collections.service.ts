import { permissionsOn } from '../../core/authz/authorize.ts';
import { permitted, requireAction } from '../../core/authz/permissions.ts';
import type { Principal } from '../../core/authz/principal.ts';
import type { DbOrTrx, Trx } from '../../core/db/connect.ts';
import { isUniqueViolation } from '../../core/db/connect.ts';
import { fromJson, toJson } from '../../core/db/json.ts';
import { publishEvent } from '../../core/events/index.ts';
import { conflict, forbidden, invalidField, notFound } from '../../core/http/errors.ts';
import { newId } from '../../core/ids.ts';
import type { Deps } from '../../deps.ts';
import { searchVisibility, syncSearchIndex, visibleCollectionMemberIds } from '../search/index.ts';
import { customerIdOf, securityTemplateNames } from '../identity/index.ts';
import {
  addMembers,
  reorderMembers,
  collectionTemplateIds,
  findCollection,
  memberFileIds,
  removeMembers,
  resolveVisibleAssets,
  setTemplates,
  visibleMemberFileIds,
  type CollectionRow,
} from './collections.repo.ts';
import { checkCollectionMetadata } from './metadata/collection-metadata.ts';
import {
  assertNoRestrictedItems,
  hiddenAttributesFor,
  itemsWithoutRestricted,
  keepRestrictedCells,
  NO_RESTRICTED,
  type RestrictedAttributes,
} from '../metadata/index.ts';
import type { Collection, CollectionCreate, CollectionLegacyUpdate, CollectionUpdate } from './collections.schemas.ts';

export type CollectionType = 'private' | 'secured';

/** A collection the caller may see, with what seeing it needed. */
export interface VisibleCollection {
  row: CollectionRow;
  templateIds: string[];
  viewable: string[];
  /** Metadata templates hidden from the caller: their assets are not visible members. */
  hidden: string[];
}

function parseType(value: string | undefined, field: string): CollectionType {
  const t = value?.trim().toLowerCase();
  if (t === 'private' || t === 'secured') return t;
  if (t === 'shared') return 'secured';
  throw invalidField(field, value === undefined ? 'is required (private or secured)' : 'must be private or secured');
}

function parseName(value: string | undefined, field: string): string {
  const name = value?.trim() ?? '';
  if (name === '') throw invalidField(field, 'is required');
  if (name.length > 200) throw invalidField(field, 'is at most 200 characters');
  return name;
}

function parseMetadata(body: CollectionCreate): unknown[] {
  const raw = body.metadataDocument ?? body.MetadataDocument;
  if (raw === undefined || raw === null) return [];
  if (Array.isArray(raw)) return raw;
  const field = body.metadataDocument !== undefined ? 'body.metadataDocument' : 'body.MetadataDocument';
  if (raw.trim() === '') return [];
  try {
    const parsed = JSON.parse(raw) as unknown;
    if (Array.isArray(parsed)) return parsed;
  } catch {
    // below
  }
  throw invalidField(field, 'must be a metadata document (an array, or that array as a JSON string)');
}

const eventType = (t: CollectionType) => (t === 'private' ? ('Private' as const) : ('Shared' as const));

/** Visible: private to its creator; secured to callers holding View through one of its templates. */
export async function loadVisibleCollection(db: DbOrTrx, principal: Principal, id: string): Promise<VisibleCollection> {
  const row = await findCollection(db, principal.orgId, id);
  if (!row) throw notFound('Collection');
  const templateIds = await collectionTemplateIds(db, row.id);
  const { viewableTemplateIds: viewable, hiddenMetadataTemplateIds: hidden } = await searchVisibility(db, principal);
  const visible =
    row.collection_type === 'private'
      ? row.owner_id === principal.userId
      : row.owner_id === principal.userId || templateIds.some((t) => viewable.includes(t));
  if (!visible) throw notFound('Collection');
  return { row, templateIds, viewable, hidden };
}

async function requireEditable(db: DbOrTrx, principal: Principal, c: VisibleCollection): Promise<void> {
  if (c.row.owner_id === principal.userId) return;
  const perms = await permissionsOn(db, principal, c.templateIds);
  if (!permitted(perms, 'collection.edit'))
    throw forbidden('Editing this collection needs the Edit Metadata permission through its security templates');
}

/** Templates the caller assigns must be ones through which the caller holds View (never beyond what they hold). */
function checkViewableTemplates(ids: readonly string[], field: string, viewable: readonly string[]): string[] {
  const unique = [...new Set(ids)];
  for (const [i, id] of ids.entries()) {
    if (!viewable.includes(id))
      throw invalidField(`${field}.${i}`, 'no security template with this id through which you may view');
  }
  return unique;
}

async function checkMembers(
  deps: Deps,
  principal: Principal,
  ids: readonly string[],
  field: string,
  viewable: readonly string[],
  hidden: readonly string[],
): Promise<string[]> {
  if (ids.length === 0) return [];
  // Members are checked against the index: bring it up to date with the latest asset writes.
  await syncSearchIndex(deps);
  const db = deps.db;
  const resolved = await resolveVisibleAssets(db, principal.orgId, viewable, ids, hidden);
  const out: string[] = [];
  for (const [i, id] of ids.entries()) {
    const fileId = resolved.get(id);
    // A hidden asset is reported exactly like a missing one.
    if (!fileId) throw invalidField(`${field}.${i}`, 'no asset with this id');
    out.push(fileId);
  }
  return [...new Set(out)];
}

export function collectionView(
  row: CollectionRow,
  templateIds: string[],
  members: string[],
  customerId: string,
  hidden: RestrictedAttributes = NO_RESTRICTED,
): Collection {
  return {
    collectionId: row.id,
    name: row.name,
    collectionType: row.collection_type,
    collectionDocument: members,
    memberCount: members.length,
    shared: row.shared,
    shareDocument: fromJson<string[]>(row.share_document, []),
    recipients: [],
    shareMessage: '',
    sender: {},
    downloadId: 'NULL',
    expirationDate: 0,
    securityTemplateIds: row.collection_type === 'secured' ? templateIds : [],
    metadataTemplateId: row.metadata_template_id,
    // Restricted attributes (and table columns) exist only for holders of Sensitive Data (issue 23, defect 3).
    metadataDocument: itemsWithoutRestricted(fromJson<Record<string, unknown>[]>(row.metadata, []), hidden),
    userCognitoId: row.owner_id,
    customerId,
    createdEpoch: row.created_at,
    lastUpdatedEpoch: row.updated_at,
  };
}

async function inTransaction<T>(deps: Deps, work: (trx: Trx) => Promise<T>): Promise<T> {
  try {
    return await deps.db.transaction().execute(work);
  } catch (error) {
    if (isUniqueViolation(error))
      throw conflict('A collection with the same name already exists in this organization', 'body.name');
    throw error;
  }
}

export async function createCollection(deps: Deps, principal: Principal, body: CollectionCreate) {
  requireAction(principal, 'collection.create');
  const type = parseType(body.collectionType, 'body.collectionType');
  const name = parseName(body.name, 'body.name');
  const metadata = parseMetadata(body);
  if (metadata.length > 0)
    assertNoRestrictedItems(
      metadata,
      await hiddenAttributesFor(deps.db, principal),
      body.metadataDocument !== undefined ? 'body.metadataDocument' : 'body.MetadataDocument',
    );
  await checkCollectionMetadata(
    deps.db,
    principal,
    body.metadataTemplateId,
    metadata,
    body.metadataDocument !== undefined ? 'body.metadataDocument' : 'body.MetadataDocument',
  );
  const { viewableTemplateIds: viewable, hiddenMetadataTemplateIds: hidden } = await searchVisibility(
    deps.db,
    principal,
  );
  const templateIds = body.securityTemplateIds ?? [];
  if (type === 'secured' && templateIds.length === 0)
    throw invalidField('body.securityTemplateIds', 'a secured collection needs at least one security template');
  if (type === 'private' && templateIds.length > 0)
    throw invalidField(
      'body.securityTemplateIds',
      'a private collection has no security templates (use collectionType secured)',
    );
  const templates = checkViewableTemplates(templateIds, 'body.securityTemplateIds', viewable);
  const members = await checkMembers(
    deps,
    principal,
    body.collectionDocument ?? [],
    'body.collectionDocument',
    viewable,
    hidden,
  );
  const now = deps.clock.now();
  const id = newId(now);
  await inTransaction(deps, async (trx) => {
    await trx
      .insertInto('collections')
      .values({
        id,
        org_id: principal.orgId,
        name,
        name_key: name.toLowerCase(),
        collection_type: type,
        owner_id: principal.userId,
        metadata_template_id: body.metadataTemplateId ?? null,
        metadata: toJson(metadata),
        shared: type === 'secured' ? 'Y' : 'N',
        share_document: '[]',
        created_at: now,
        updated_at: now,
      })
      .execute();
    await setTemplates(trx, principal.orgId, id, templates);
    await addMembers(trx, principal.orgId, id, members, now);
    await publishEvent(trx, now, {
      orgId: principal.orgId,
      type: 'collection.created',
      actor: principal.userId,
      data: { collection: { id, name, type: eventType(type) } },
    });
  });
  return { statusCode: 'success' as const, message: 'Collection successfully created', collectionId: id };
}

export async function getCollection(deps: Deps, principal: Principal, id: string): Promise<Collection> {
  requireAction(principal, 'collection.view');
  return getCollectionForViewer(deps, principal, id);
}

/** The collection as this viewer sees it (no privilege needed: story boards show it to viewers). */
export async function getCollectionForViewer(deps: Deps, principal: Principal, id: string): Promise<Collection> {
  await syncSearchIndex(deps);
  const c = await loadVisibleCollection(deps.db, principal, id);
  const [members, customerId] = await Promise.all([
    // SQLite: the members' doc_nos are cached in the search feature's in-memory index, which knows
    // nothing of hidden metadata templates: a caller with some takes the SQL read.
    // While the index loads (after a start), the SQL read answers.
    (deps.engine === 'sqlite' && c.hidden.length === 0
      ? visibleCollectionMemberIds(
          deps.db,
          principal.orgId,
          c.row.id,
          Number(c.row.updated_at),
          c.viewable,
          deps.clock.now(),
        )
      : Promise.resolve(null)
    ).then((ids) => ids ?? visibleMemberFileIds(deps.db, principal.orgId, c.row.id, c.viewable, c.hidden)),
    customerIdOf(deps.db, principal.orgId),
  ]);
  const hidden =
    c.row.metadata && c.row.metadata !== '[]' ? await hiddenAttributesFor(deps.db, principal) : NO_RESTRICTED;
  return collectionView(c.row, c.templateIds, members, customerId, hidden);
}

interface Changes {
  name?: string;
  type?: CollectionType;
  templates?: string[];
  /** Membership operations in order; `replace` replaces the members the caller may view. */
  ops?: { kind: 'add' | 'remove' | 'replace'; fileIds: string[] }[];
  metadata?: Record<string, unknown>[];
}

async function applyChanges(deps: Deps, principal: Principal, c: VisibleCollection, changes: Changes): Promise<void> {
  const now = deps.clock.now();
  const row = c.row;
  const newType = changes.type ?? row.collection_type;
  if (newType !== row.collection_type && row.owner_id !== principal.userId)
    throw forbidden('Only the creator changes the type of a collection');
  let templates = changes.templates ?? c.templateIds;
  if (newType === 'private') templates = [];
  if (newType === 'secured' && templates.length === 0)
    throw invalidField('body.securityTemplateIds', 'a secured collection needs at least one security template');
  await inTransaction(deps, async (trx) => {
    const update: Partial<CollectionRow> = { updated_at: now };
    if (changes.name !== undefined && changes.name !== row.name)
      Object.assign(update, { name: changes.name, name_key: changes.name.toLowerCase() });
    if (newType !== row.collection_type)
      Object.assign(update, { collection_type: newType, shared: newType === 'secured' ? 'Y' : 'N' });
    if (changes.metadata) update.metadata = toJson(changes.metadata);
    // The update locks the row for the rest of the transaction (PostgreSQL): a delete that committed
    // first leaves nothing to update, and the caller gets the 404 it would get a moment later.
    const updated = await trx.updateTable('collections').set(update).where('id', '=', row.id).executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) throw notFound('Collection');
    const securityChanged =
      templates.join() !== c.templateIds.join() && !(templates.length === 0 && c.templateIds.length === 0);
    if (securityChanged) await setTemplates(trx, row.org_id, row.id, templates);
    let added: string[] = [];
    let removed: string[] = [];
    for (const op of changes.ops ?? []) {
      if (op.kind === 'add') {
        added.push(...(await addMembers(trx, row.org_id, row.id, op.fileIds, now)));
        continue;
      }
      // Only members this caller can see are removed or replaced; hidden members stay untouched.
      const visibleNow = await visibleMemberFileIds(trx, row.org_id, row.id, c.viewable, c.hidden);
      const keep = new Set(op.kind === 'replace' ? op.fileIds : []);
      const drop =
        op.kind === 'replace'
          ? visibleNow.filter((f) => !keep.has(f))
          : op.fileIds.filter((f) => visibleNow.includes(f));
      removed.push(...(await removeMembers(trx, row.id, drop)));
      if (op.kind === 'replace') {
        added.push(...(await addMembers(trx, row.org_id, row.id, op.fileIds, now)));
        // The order given is the collection's order (hidden members keep their places).
        await reorderMembers(trx, row.id, op.fileIds);
      }
    }
    const net = (a: string[], b: string[]) => [...new Set(a)].filter((x) => !b.includes(x));
    [added, removed] = [net(added, removed), net(removed, added)];
    const name = changes.name ?? row.name;
    const base = { id: row.id, name, type: eventType(newType) };
    const actor = principal.userId;
    const orgId = row.org_id;
    if (update.name !== undefined || update.collection_type !== undefined) {
      await publishEvent(trx, now, { orgId, type: 'collection.updated', actor, data: { collection: { ...base } } });
    }
    if (changes.metadata) {
      await publishEvent(trx, now, {
        orgId,
        type: 'collection.metadata.updated',
        actor,
        data: {
          collection: {
            ...base,
            metadata: changes.metadata
              .map((m) => ({
                attributeId: String(m.metadataDefinitionId ?? m.id ?? m.name ?? ''),
                value: m.value ?? m.metadataDefinitionValue ?? null,
              }))
              .filter((m) => /^[0-9a-f-]{36}$/i.test(m.attributeId)),
          },
        },
      });
    }
    if (securityChanged) {
      const names = await securityTemplateNames(trx, orgId, [...templates, ...c.templateIds]);
      const ref = (ids: string[]) => ids.map((id) => ({ id, name: names.get(id) ?? '' }));
      await publishEvent(trx, now, {
        orgId,
        type: 'collection.security.updated',
        actor,
        data: { collection: { ...base, security: { current: ref(templates), previous: ref(c.templateIds) } } },
      });
    }
    if (added.length > 0 || removed.length > 0) {
      await publishEvent(trx, now, {
        orgId,
        type: 'collection.assets.updated',
        actor,
        data: { collection: { ...base, assets: { added, removed } } },
      });
    }
  });
}

export async function updateCollectionLegacy(
  deps: Deps,
  principal: Principal,
  id: string,
  body: CollectionLegacyUpdate,
) {
  requireAction(principal, 'collection.edit');
  const c = await loadVisibleCollection(deps.db, principal, id);
  await requireEditable(deps.db, principal, c);
  const changes: Changes = {};
  if (body.name !== undefined) changes.name = parseName(body.name, 'body.name');
  if (body.collectionType !== undefined) changes.type = parseType(body.collectionType, 'body.collectionType');
  if (body.securityTemplateIds !== undefined)
    changes.templates = checkViewableTemplates(body.securityTemplateIds, 'body.securityTemplateIds', c.viewable);
  if (body.collectionDocument !== undefined)
    changes.ops = [
      {
        kind: 'replace',
        fileIds: await checkMembers(
          deps,
          principal,
          body.collectionDocument,
          'body.collectionDocument',
          c.viewable,
          c.hidden,
        ),
      },
    ];
  await applyChanges(deps, principal, c, changes);
  return { message: 'Collection update was successful' };
}

function mergeMetadata(
  current: Record<string, unknown>[],
  updates: Record<string, unknown>[],
): Record<string, unknown>[] {
  const keyOf = (m: Record<string, unknown>) => String(m.metadataDefinitionId ?? m.name ?? '').toLowerCase();
  const out = [...current];
  for (const [i, u] of updates.entries()) {
    const key = keyOf(u);
    if (key === '') throw invalidField(`body.metadata.${i}`, 'needs name (or metadataDefinitionId)');
    const at = out.findIndex((m) => keyOf(m) === key);
    if (at >= 0) out[at] = u;
    else out.push(u);
  }
  return out;
}

export async function updateCollection(deps: Deps, principal: Principal, id: string, body: CollectionUpdate) {
  requireAction(principal, 'collection.edit');
  const c = await loadVisibleCollection(deps.db, principal, id);
  await requireEditable(deps.db, principal, c);
  const changes: Changes = {};
  if (body.collectionName !== undefined) changes.name = parseName(body.collectionName, 'body.collectionName');
  if (body.securityTemplateIds !== undefined) {
    changes.templates = checkViewableTemplates(body.securityTemplateIds, 'body.securityTemplateIds', c.viewable);
    if (c.row.collection_type === 'private' && changes.templates.length > 0) changes.type = 'secured';
  }
  if (body.collectionUpdates !== undefined) {
    const ops = Array.isArray(body.collectionUpdates) ? body.collectionUpdates : [body.collectionUpdates];
    for (const [i, op] of ops.entries()) {
      const field = Array.isArray(body.collectionUpdates) ? `body.collectionUpdates.${i}` : 'body.collectionUpdates';
      const kind = op.operation.trim().toLowerCase();
      if (kind !== 'add' && kind !== 'remove' && kind !== 'replace')
        throw invalidField(`${field}.operation`, 'must be add, remove or replace');
      if (kind === 'remove') {
        // Removing needs View too; an id that resolves to nothing visible is simply not a member.
        const resolved = await resolveVisibleAssets(deps.db, principal.orgId, c.viewable, op.fileIds, c.hidden);
        (changes.ops ??= []).push({ kind, fileIds: op.fileIds.map((f) => resolved.get(f) ?? f) });
      } else {
        (changes.ops ??= []).push({
          kind,
          fileIds: await checkMembers(deps, principal, op.fileIds, `${field}.fileIds`, c.viewable, c.hidden),
        });
      }
    }
  }
  if (body.metadata !== undefined)
    await checkCollectionMetadata(
      deps.db,
      principal,
      c.row.metadata_template_id,
      body.metadata as unknown[],
      'body.metadata',
    );
  if (body.metadata !== undefined) {
    const current = fromJson<Record<string, unknown>[]>(c.row.metadata, []);
    // Without Sensitive Data: a restricted attribute or column named is a 403; hidden table cells are kept.
    const updates = keepRestrictedCells(
      body.metadata as Record<string, unknown>[],
      current,
      await hiddenAttributesFor(deps.db, principal),
      'body.metadata',
    );
    changes.metadata = mergeMetadata(current, updates);
  }
  await applyChanges(deps, principal, c, changes);
  return {
    status: 'success',
    message: 'Collection update was successful',
    data: await getCollectionForViewer(deps, principal, id),
  };
}

export async function deleteCollection(deps: Deps, principal: Principal, id: string) {
  requireAction(principal, 'collection.view');
  const c = await loadVisibleCollection(deps.db, principal, id);
  requireAction(principal, c.row.collection_type === 'secured' ? 'collection.delete_secured' : 'collection.delete');
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    // Members are only dissociated: the assets themselves are never touched.
    // Two deletes at once both found it: only the one that removed it answers success and tells subscribers.
    const deleted = await trx.deleteFrom('collections').where('id', '=', c.row.id).executeTakeFirst();
    if (Number(deleted.numDeletedRows) === 0) throw notFound('Collection');
    await publishEvent(trx, now, {
      orgId: principal.orgId,
      type: 'collection.deleted',
      actor: principal.userId,
      data: { collection: { id: c.row.id, name: c.row.name, type: eventType(c.row.collection_type) } },
    });
  });
  return [{ status: 'success', message: 'Collection delete operation succeeded' }];
}

export { memberFileIds };
