import { sql } from 'kysely';
import type { DbOrTrx } from '../../core/db/connect.ts';
import type { CollectionsTable } from '../../core/db/schema.ts';
import { forgetCollectionMembers } from '../search/index.ts';

export type CollectionRow = CollectionsTable;

export async function findCollection(db: DbOrTrx, orgId: string, id: string): Promise<CollectionRow | undefined> {
  return db.selectFrom('collections').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
}

export async function collectionTemplateIds(db: DbOrTrx, collectionId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('collection_templates')
    .select('template_id')
    .where('collection_id', '=', collectionId)
    .orderBy('template_id')
    .execute();
  return rows.map((r) => r.template_id);
}

/** Assets of these metadata templates are hidden from the caller (no access through the template's access templates). */
const notHidden = (hidden: readonly string[]) =>
  hidden.length === 0
    ? sql``
    : sql`and (d.metadata_template_id is null or d.metadata_template_id not in (${sql.join([...hidden])}))`;

/**
 * The members the caller may view, in collection order: each member's current index document
 * must carry one of the caller's viewable templates (and not be in the recycle bin), and its
 * metadata template must not be hidden from the caller.
 */
export async function visibleMemberFileIds(
  db: DbOrTrx,
  orgId: string,
  collectionId: string,
  viewable: readonly string[],
  hidden: readonly string[] = [],
): Promise<string[]> {
  if (viewable.length === 0) return [];
  const { rows } = await sql<{ file_id: string }>`
    select m.file_id from collection_members m
    where m.collection_id = ${collectionId}
      and exists (
        select 1 from search_docs d join search_doc_templates t on t.doc_no = d.doc_no
        where d.org_id = ${orgId} and d.file_id = m.file_id and d.deleted = 0 ${notHidden(hidden)}
          and t.template_id in (${sql.join([...viewable])}))
    order by m.position, m.file_id`.execute(db);
  return rows.map((r) => r.file_id);
}

/** For each id (fileId or objectId), the fileId of the asset if the caller may view it, else null. */
export async function resolveVisibleAssets(
  db: DbOrTrx,
  orgId: string,
  viewable: readonly string[],
  ids: readonly string[],
  hidden: readonly string[] = [],
): Promise<Map<string, string | null>> {
  const out = new Map<string, string | null>(ids.map((id) => [id, null]));
  if (viewable.length === 0 || ids.length === 0) return out;
  const unique = [...new Set(ids)];
  for (let i = 0; i < unique.length; i += 500) {
    const batch = unique.slice(i, i + 500);
    const { rows } = await sql<{ asset_id: string; file_id: string | null }>`
      select d.asset_id, d.file_id from search_docs d
      where d.org_id = ${orgId} and (d.file_id in (${sql.join(batch)}) or d.asset_id in (${sql.join(batch)})) ${notHidden(hidden)}
        and exists (select 1 from search_doc_templates t where t.doc_no = d.doc_no and t.template_id in (${sql.join([...viewable])}))`.execute(
      db,
    );
    for (const row of rows) {
      if (!row.file_id) continue;
      if (out.has(row.file_id)) out.set(row.file_id, row.file_id);
      if (out.has(row.asset_id)) out.set(row.asset_id, row.file_id);
    }
  }
  return out;
}

export async function memberFileIds(db: DbOrTrx, collectionId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('collection_members')
    .select('file_id')
    .where('collection_id', '=', collectionId)
    .orderBy('position')
    .orderBy('file_id')
    .execute();
  return rows.map((r) => r.file_id);
}

export async function addMembers(
  db: DbOrTrx,
  orgId: string,
  collectionId: string,
  fileIds: readonly string[],
  now: number,
): Promise<string[]> {
  if (fileIds.length === 0) return [];
  const existing = new Set(await memberFileIds(db, collectionId));
  const fresh = [...new Set(fileIds)].filter((f) => !existing.has(f));
  if (fresh.length > 0) forgetCollectionMembers(collectionId);
  const max = await db
    .selectFrom('collection_members')
    .select((eb) => eb.fn.max('position').as('p'))
    .where('collection_id', '=', collectionId)
    .executeTakeFirst();
  let position = Number(max?.p ?? -1) + 1;
  for (let i = 0; i < fresh.length; i += 500) {
    await db
      .insertInto('collection_members')
      .values(
        fresh.slice(i, i + 500).map((file_id) => ({
          org_id: orgId,
          collection_id: collectionId,
          file_id,
          position: position++,
          added_at: now,
        })),
      )
      .execute();
  }
  return fresh;
}

/**
 * Puts the named members in the order given, in the positions they occupy now, so members not
 * named (those hidden from the caller) keep their places. Returns whether any position changed.
 */
export async function reorderMembers(db: DbOrTrx, collectionId: string, fileIds: readonly string[]): Promise<boolean> {
  const unique = [...new Set(fileIds)];
  if (unique.length < 2) return false;
  const current = new Map<string, number>();
  for (let i = 0; i < unique.length; i += 500) {
    const rows = await db
      .selectFrom('collection_members')
      .select(['file_id', 'position'])
      .where('collection_id', '=', collectionId)
      .where('file_id', 'in', unique.slice(i, i + 500))
      .execute();
    for (const r of rows) current.set(r.file_id, Number(r.position));
  }
  const present = unique.filter((f) => current.has(f));
  const slots = present.map((f) => current.get(f)!).sort((a, b) => a - b);
  let changed = false;
  for (const [i, fileId] of present.entries()) {
    if (current.get(fileId) === slots[i]) continue;
    await db
      .updateTable('collection_members')
      .set({ position: slots[i]! })
      .where('collection_id', '=', collectionId)
      .where('file_id', '=', fileId)
      .execute();
    changed = true;
  }
  if (changed) forgetCollectionMembers(collectionId);
  return changed;
}

export async function removeMembers(db: DbOrTrx, collectionId: string, fileIds: readonly string[]): Promise<string[]> {
  if (fileIds.length === 0) return [];
  const present = new Set(await memberFileIds(db, collectionId));
  const gone = [...new Set(fileIds)].filter((f) => present.has(f));
  if (gone.length > 0) forgetCollectionMembers(collectionId);
  for (let i = 0; i < gone.length; i += 500) {
    await db
      .deleteFrom('collection_members')
      .where('collection_id', '=', collectionId)
      .where('file_id', 'in', gone.slice(i, i + 500))
      .execute();
  }
  return gone;
}

export async function setTemplates(
  db: DbOrTrx,
  orgId: string,
  collectionId: string,
  templateIds: readonly string[],
): Promise<void> {
  await db.deleteFrom('collection_templates').where('collection_id', '=', collectionId).execute();
  const unique = [...new Set(templateIds)];
  if (unique.length > 0)
    await db
      .insertInto('collection_templates')
      .values(unique.map((template_id) => ({ org_id: orgId, collection_id: collectionId, template_id })))
      .execute();
}
