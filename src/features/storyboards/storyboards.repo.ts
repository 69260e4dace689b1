import { sql } from 'kysely';
import type { Principal } from '../../core/authz/principal.ts';
import type { DbOrTrx, Trx } from '../../core/db/connect.ts';
import type { StoryboardsTable } from '../../core/db/schema.ts';
import { visibleBoards, type BoardRow } from './access.ts';

export async function findBoard(db: DbOrTrx, orgId: string, id: string): Promise<BoardRow | undefined> {
  return db.selectFrom('storyboards').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
}

export async function findVisibleBoard(db: DbOrTrx, principal: Principal, id: string): Promise<BoardRow | undefined> {
  return db
    .selectFrom('storyboards')
    .selectAll()
    .where(visibleBoards(db, principal))
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function templatesOf(
  db: DbOrTrx,
  orgId: string,
  boardIds: readonly string[],
): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (boardIds.length === 0) return out;
  const rows = await db
    .selectFrom('storyboard_security_templates')
    .select(['storyboard_id', 'template_id'])
    .where('org_id', '=', orgId)
    .where('storyboard_id', 'in', [...boardIds])
    .orderBy('storyboard_id')
    .orderBy('position')
    .execute();
  for (const row of rows) out.set(row.storyboard_id, [...(out.get(row.storyboard_id) ?? []), row.template_id]);
  return out;
}

export async function setTemplates(
  trx: Trx,
  orgId: string,
  boardId: string,
  templateIds: readonly string[],
): Promise<void> {
  await trx.deleteFrom('storyboard_security_templates').where('storyboard_id', '=', boardId).execute();
  if (templateIds.length > 0) {
    await trx
      .insertInto('storyboard_security_templates')
      .values(
        templateIds.map((template_id, position) => ({ storyboard_id: boardId, template_id, org_id: orgId, position })),
      )
      .execute();
  }
}

export interface ListOptions {
  limit: number;
  search?: string;
  sortBy: 'updatedAt' | 'title';
  sortOrder: 'asc' | 'desc';
  status?: 'published' | 'draft';
  locale?: string;
  after?: { key: string | number; id: string };
}

const likePattern = (text: string) => `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export async function listVisibleBoards(db: DbOrTrx, principal: Principal, options: ListOptions): Promise<BoardRow[]> {
  const column = options.sortBy === 'title' ? 'title_key' : 'updated_at';
  const op = options.sortOrder === 'asc' ? '>' : '<';
  let query = db.selectFrom('storyboards').selectAll().where(visibleBoards(db, principal));
  if (options.status) query = query.where('status', '=', options.status);
  if (options.locale) query = query.where(sql<boolean>`lower(locale) = ${options.locale.toLowerCase()}`);
  if (options.search) {
    const pattern = likePattern(options.search);
    query = query.where(
      sql<boolean>`(title_key like ${pattern} escape '\\' or description_key like ${pattern} escape '\\')`,
    );
  }
  if (options.after) {
    const { key, id } = options.after;
    query = query.where((eb) =>
      eb.or([eb(column, op, key as never), eb.and([eb(column, '=', key as never), eb('id', op, id)])]),
    );
  }
  return query
    .orderBy(column, options.sortOrder)
    .orderBy('id', options.sortOrder)
    .limit(options.limit + 1)
    .execute();
}

export async function insertBoard(trx: Trx, row: StoryboardsTable): Promise<void> {
  await trx.insertInto('storyboards').values(row).execute();
}

/**
 * Writes a change only if the board is still at `version` (compare-and-swap): concurrent edits
 * of the blocks never interleave, and a stale client gets a conflict instead of a lost update.
 */
export async function updateBoardIfVersion(
  trx: Trx,
  orgId: string,
  id: string,
  version: number,
  changes: Partial<StoryboardsTable>,
): Promise<boolean> {
  const result = await trx
    .updateTable('storyboards')
    .set({ ...changes, version: version + 1 })
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .where('version', '=', version)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Whether this call removed the board (false: a concurrent delete did first). */
export async function deleteBoard(trx: Trx, orgId: string, id: string): Promise<boolean> {
  const result = await trx
    .deleteFrom('storyboards')
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
