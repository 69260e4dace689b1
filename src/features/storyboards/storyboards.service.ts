import type { Deps } from '../../deps.ts';
import { checkSecurityTemplateIds } from '../identity/index.ts';
import { audit } from '../../core/audit.ts';
import { requireAction } from '../../core/authz/permissions.ts';
import { permissionsByTemplate } from '../../core/authz/authorize.ts';
import type { Principal } from '../../core/authz/principal.ts';
import type { Trx } from '../../core/db/connect.ts';
import { toJson } from '../../core/db/json.ts';
import type { StoryboardsTable } from '../../core/db/schema.ts';
import { publishEvent } from '../../core/events/index.ts';
import { AppError, conflict, forbidden, invalidField, notFound } from '../../core/http/errors.ts';
import { decodeCursor, encodeCursor } from '../../core/http/pagination.ts';
import { newId } from '../../core/ids.ts';
import { accessTo, mayViewStoryboards, type Access, type BoardRow } from './access.ts';
import { normalizeBlock, normalizeBlocks } from './blocks.ts';
import { content } from './view/content.ts';
import { hiddenSources, keepHidden, redactBlocks } from './view/redact.ts';
import {
  deleteBoard,
  findVisibleBoard,
  insertBoard,
  listVisibleBoards,
  setTemplates,
  templatesOf,
  updateBoardIfVersion,
} from './storyboards.repo.ts';
import type {
  Block,
  BlockInput,
  CreateInput,
  ListQuery,
  Storyboard,
  StoryboardSummary,
  UpdateInput,
} from './storyboards.schemas.ts';
import { apiRenditionUrl, blocksOf, resolveView, type StoryboardView } from './view/view.ts';

type Flag = keyof Access['flags'];
const FLAG_NAMES: Record<Flag, string> = {
  canEdit: 'edit',
  canDelete: 'delete',
  canApplySecurityTemplates: 'apply security templates to',
  canShareInternal: 'share',
  canShareExternal: 'share links to',
  canPublish: 'publish',
};

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function toSummary(row: BoardRow, templateIds: string[], access: Access): StoryboardSummary {
  return {
    id: row.id,
    title: row.title,
    description: row.description,
    locale: row.locale,
    status: row.status,
    coverAssetId: row.cover_asset_id,
    securityTemplateIds: templateIds,
    blockCount: blocksOf(row).length,
    version: row.version,
    createdBy: row.created_by,
    createdDate: iso(row.created_at)!,
    lastUpdatedDate: iso(row.updated_at)!,
    createdEpoch: row.created_at,
    lastUpdatedEpoch: row.updated_at,
    publishedDate: iso(row.published_at),
    ...access.flags,
  };
}

export interface LoadedBoard {
  row: BoardRow;
  templateIds: string[];
  access: Access;
}

/** A board the caller may view, with what the caller may do to it; 404 when missing or hidden. */
export async function loadBoard(
  deps: Deps,
  principal: Principal,
  id: string,
  db: Deps['db'] | Trx = deps.db,
): Promise<LoadedBoard> {
  if (!mayViewStoryboards(principal)) throw forbidden('Missing privilege: viewStoryboards');
  const row = await findVisibleBoard(db, principal, id);
  if (!row) throw notFound('Story board');
  const templateIds = (await templatesOf(db, principal.orgId, [row.id])).get(row.id) ?? [];
  const access = accessTo(principal, row, templateIds, await permissionsByTemplate(db, principal, templateIds));
  return { row, templateIds, access };
}

export function requireFlag(loaded: LoadedBoard, flag: Flag): void {
  if (!loaded.access.flags[flag]) throw forbidden(`You may not ${FLAG_NAMES[flag]} this story board`);
}

export async function listStoryboards(
  deps: Deps,
  principal: Principal,
  query: ListQuery,
): Promise<{ items: StoryboardSummary[]; nextCursor: string | null }> {
  // The reference answers 200 with nothing for callers without viewStoryboards.
  if (!mayViewStoryboards(principal)) return { items: [], nextCursor: null };
  const sortBy = query.sortBy ?? 'updatedAt';
  const sortOrder = query.sortOrder ?? 'desc';
  const limit = query.limit ?? 50;
  let after: { key: string | number; id: string } | undefined;
  if (query.cursor) {
    const [by, order, key, id] = decodeCursor(query.cursor, 'query.cursor', 4);
    if (by !== sortBy || order !== sortOrder)
      throw invalidField('query.cursor', 'was issued for another sortBy/sortOrder; start again without a cursor');
    if (typeof id !== 'string' || (sortBy === 'title' ? typeof key !== 'string' : typeof key !== 'number'))
      throw invalidField('query.cursor', 'is not a cursor this server issued');
    after = { key: key!, id };
  }
  const status =
    query.status === 'published'
      ? 'published'
      : query.status === 'draft' || query.status === 'unpublished'
        ? 'draft'
        : undefined;
  const rows = await listVisibleBoards(deps.db, principal, {
    limit,
    search: query.search?.trim() || undefined,
    sortBy,
    sortOrder,
    status,
    locale: query.locale,
    after,
  });
  const page = rows.slice(0, limit);
  const templates = await templatesOf(
    deps.db,
    principal.orgId,
    page.map((r) => r.id),
  );
  const grants = await permissionsByTemplate(deps.db, principal, [...templates.values()].flat());
  // A cover the caller may not view is left out, exactly as on the board itself (getStoryboard).
  const covers = [...new Set(page.flatMap((r) => (r.cover_asset_id ? [r.cover_asset_id] : [])))];
  const visibleCovers = new Set(
    covers.length > 0 ? (await content.visibleAssets(deps, principal, covers)).map((a) => a.id) : [],
  );
  const items = page.map((row) => {
    const templateIds = templates.get(row.id) ?? [];
    const summary = toSummary(row, templateIds, accessTo(principal, row, templateIds, grants));
    return summary.coverAssetId && !visibleCovers.has(summary.coverAssetId)
      ? { ...summary, coverAssetId: null }
      : summary;
  });
  const last = page.at(-1);
  const nextCursor =
    rows.length > limit && last
      ? encodeCursor([sortBy, sortOrder, sortBy === 'title' ? last.title_key : last.updated_at, last.id])
      : null;
  return { items, nextCursor };
}

/** The board with its block definitions; callers who cannot edit see only the blocks they can see. */
export async function getStoryboard(deps: Deps, principal: Principal, id: string): Promise<Storyboard> {
  const loaded = await loadBoard(deps, principal, id);
  return present(deps, principal, loaded);
}

async function present(deps: Deps, principal: Principal, loaded: LoadedBoard): Promise<Storyboard> {
  let blocks = blocksOf(loaded.row);
  if (!loaded.access.flags.canEdit) {
    const shown = new Set((await resolveView(deps, principal, loaded.row, apiRenditionUrl)).blocks.map((b) => b.id));
    blocks = blocks.filter((b) => shown.has(b.id));
  }
  // Nobody sees the ids or captions of sources they may not view, editors included.
  const hidden = await hiddenSources(deps, principal, blocks, loaded.row.cover_asset_id);
  const summary = toSummary(loaded.row, loaded.templateIds, loaded.access);
  return {
    ...summary,
    coverAssetId: summary.coverAssetId && hidden.assets.has(summary.coverAssetId) ? null : summary.coverAssetId,
    blocks: redactBlocks(blocks, hidden),
  };
}

export async function viewStoryboard(deps: Deps, principal: Principal, id: string): Promise<StoryboardView> {
  const loaded = await loadBoard(deps, principal, id);
  return resolveView(deps, principal, loaded.row, apiRenditionUrl);
}

/** Ids of sources the blocks name that were not named before: the editor must be able to see them. */
async function checkNewSources(
  deps: Deps,
  principal: Principal,
  blocks: Block[],
  before: Block[],
  field: string | ((i: number) => string),
  coverAssetId?: string | null,
  previousCover?: string | null,
): Promise<void> {
  const at = typeof field === 'string' ? (i: number) => `${field}.${i}` : field;
  const old = new Set(
    before.flatMap((b) => [b.assetId, ...(b.assetIds ?? []), b.collectionId, b.savedSearchId]).filter(Boolean),
  );
  const assetRefs: { id: string; path: string }[] = [];
  const checks: Promise<void>[] = [];
  blocks.forEach((b, i) => {
    if (b.assetId && !old.has(b.assetId)) assetRefs.push({ id: b.assetId, path: `${at(i)}.assetId` });
    (b.assetIds ?? []).forEach((a, j) => {
      if (!old.has(a)) assetRefs.push({ id: a, path: `${at(i)}.assetIds.${j}` });
    });
    if (b.collectionId && !old.has(b.collectionId)) {
      checks.push(
        content.collectionAssets(deps, principal, b.collectionId, 1).then((r) => {
          if (!r) throw invalidField(`${at(i)}.collectionId`, 'collection not found');
        }),
      );
    }
    if (b.savedSearchId && !old.has(b.savedSearchId)) {
      checks.push(
        content.savedSearchAssets(deps, principal, b.savedSearchId, 1).then((r) => {
          if (!r) throw invalidField(`${at(i)}.savedSearchId`, 'saved search not found');
        }),
      );
    }
  });
  if (coverAssetId && coverAssetId !== previousCover) assetRefs.push({ id: coverAssetId, path: 'body.coverAssetId' });
  const assetsCheck = async () => {
    if (assetRefs.length === 0) return;
    const visible = new Set(
      (await content.visibleAssets(deps, principal, [...new Set(assetRefs.map((r) => r.id))])).map((a) => a.id),
    );
    const missing = assetRefs.find((r) => !visible.has(r.id));
    if (missing) throw invalidField(missing.path, 'asset not found');
  };
  // Every check is awaited before any failure is thrown: a check left running would reject with
  // no one listening, and an unhandled rejection ends the process. The first failure in order wins.
  const failed = (await Promise.allSettled([assetsCheck(), ...checks])).find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
}

/** Each id must name a security template of the organization. */
async function checkTemplates(deps: Deps, principal: Principal, ids: readonly string[]): Promise<string[]> {
  const checked = await checkSecurityTemplateIds(deps.db, principal.orgId, ids, {
    field: 'body.securityTemplateIds',
    report: { each: 'security template not found' },
  });
  return checked.ids;
}

const eventBoard = (row: { id: string; title: string; status: string }) => ({
  id: row.id,
  title: row.title,
  published: row.status === 'published',
});

export async function createStoryboard(
  deps: Deps,
  principal: Principal,
  input: CreateInput,
  ip: string,
): Promise<Storyboard> {
  requireAction(principal, 'storyboard.create');
  const now = deps.clock.now();
  const templateIds = await checkTemplates(deps, principal, input.securityTemplateIds ?? []);
  const blocks = normalizeBlocks(input.blocks?.map(({ id: _ignored, ...b }) => b) ?? [], 'body.blocks', now);
  await checkNewSources(deps, principal, blocks, [], 'body.blocks', input.coverAssetId ?? null, null);
  const title = input.title.trim();
  if (title === '') throw invalidField('body.title', 'must not be empty');
  const description = input.description?.trim() ?? '';
  const status = input.status ?? 'draft';
  const row: StoryboardsTable = {
    id: newId(now),
    org_id: principal.orgId,
    title,
    title_key: title.toLowerCase(),
    description,
    description_key: description.toLowerCase(),
    locale: input.locale ?? 'en-US',
    cover_asset_id: input.coverAssetId ?? null,
    status,
    secured: templateIds.length > 0 ? 1 : 0,
    blocks: toJson(blocks),
    version: 1,
    created_by: principal.userId,
    created_at: now,
    updated_at: now,
    published_at: status === 'published' ? now : null,
  };
  await deps.db.transaction().execute(async (trx) => {
    await insertBoard(trx, row);
    await setTemplates(trx, principal.orgId, row.id, templateIds);
    await audit(trx, {
      orgId: principal.orgId,
      at: now,
      actorId: principal.userId,
      action: 'storyboard.created',
      targetType: 'storyboard',
      targetId: row.id,
      ip,
      data: { title },
    });
    await publishEvent(trx, now, {
      orgId: principal.orgId,
      type: 'storyboard.created',
      actor: principal.userId,
      data: { storyboard: eventBoard(row) },
    });
  });
  return getStoryboard(deps, principal, row.id);
}

interface Mutation {
  changes: Partial<StoryboardsTable>;
  templateIds?: string[];
  action: string;
  /** False for changes that are not reported as storyboard.updated (none today). */
  event?: boolean;
}

/**
 * Applies one change to a board atomically: read, check rights, compute, then write only if the
 * board is still at the version read (retrying when no version was demanded). The checks that read
 * other features (asset and collection visibility) run outside the write transaction, so a
 * SQLite connection is never held while waiting on them.
 */
async function mutate(
  deps: Deps,
  principal: Principal,
  id: string,
  expectedVersion: number | undefined,
  flag: Flag,
  ip: string,
  change: (loaded: LoadedBoard, now: number) => Promise<Mutation> | Mutation,
): Promise<Storyboard> {
  for (let attempt = 0; attempt < 25; attempt++) {
    // Lost the race: back off a little (randomised, growing) before reading again.
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, Math.random() * (2 + attempt * 4)));
    const loaded = await loadBoard(deps, principal, id);
    requireFlag(loaded, flag);
    if (expectedVersion !== undefined && loaded.row.version !== expectedVersion) {
      throw conflict(
        `The story board changed (version ${loaded.row.version}, not ${expectedVersion}); reload and try again`,
        'body.version',
      );
    }
    const now = Math.max(deps.clock.now(), loaded.row.updated_at);
    const m = await change(loaded, now);
    const written = await deps.db.transaction().execute(async (trx) => {
      const ok = await updateBoardIfVersion(trx, principal.orgId, id, loaded.row.version, {
        ...m.changes,
        updated_at: now,
      });
      if (!ok) return false;
      if (m.templateIds) await setTemplates(trx, principal.orgId, id, m.templateIds);
      const after = { ...loaded.row, ...m.changes };
      await audit(trx, {
        orgId: principal.orgId,
        at: now,
        actorId: principal.userId,
        action: m.action,
        targetType: 'storyboard',
        targetId: id,
        ip,
      });
      if (m.event !== false)
        await publishEvent(trx, now, {
          orgId: principal.orgId,
          type: 'storyboard.updated',
          actor: principal.userId,
          data: { storyboard: eventBoard(after) },
        });
      return true;
    });
    if (written) return getStoryboard(deps, principal, id);
    if (expectedVersion !== undefined)
      throw conflict('The story board changed meanwhile; reload and try again', 'body.version');
  }
  throw new AppError('conflict', 'The story board is being changed by others; try again');
}

export async function updateStoryboard(
  deps: Deps,
  principal: Principal,
  id: string,
  input: UpdateInput,
  ip: string,
): Promise<Storyboard> {
  return mutate(deps, principal, id, input.version, 'canEdit', ip, async (loaded, now) => {
    const changes: Partial<StoryboardsTable> = {};
    let templateIds: string[] | undefined;
    if (input.title !== undefined) {
      const title = input.title.trim();
      if (title === '') throw invalidField('body.title', 'must not be empty');
      changes.title = title;
      changes.title_key = title.toLowerCase();
    }
    if (input.description !== undefined) {
      changes.description = input.description.trim();
      changes.description_key = changes.description.toLowerCase();
    }
    if (input.locale !== undefined) changes.locale = input.locale;
    if (input.securityTemplateIds !== undefined) {
      requireFlag(loaded, 'canApplySecurityTemplates');
      templateIds = await checkTemplates(deps, principal, input.securityTemplateIds);
      changes.secured = templateIds.length > 0 ? 1 : 0;
    }
    const before = blocksOf(loaded.row);
    let blocks = before;
    if (input.blocks !== undefined) {
      blocks = normalizeBlocks(
        keepHidden(input.blocks, before, await hiddenSources(deps, principal, before)),
        'body.blocks',
        now,
        before,
      );
      changes.blocks = toJson(blocks);
    }
    if (input.coverAssetId !== undefined) changes.cover_asset_id = input.coverAssetId;
    await checkNewSources(
      deps,
      principal,
      blocks,
      before,
      'body.blocks',
      input.coverAssetId,
      loaded.row.cover_asset_id,
    );
    return { changes, templateIds, action: 'storyboard.updated' };
  });
}

export async function replaceBlocks(
  deps: Deps,
  principal: Principal,
  id: string,
  input: { blocks: BlockInput[]; version?: number },
  ip: string,
): Promise<Storyboard> {
  return mutate(deps, principal, id, input.version, 'canEdit', ip, async (loaded, now) => {
    const before = blocksOf(loaded.row);
    const blocks = normalizeBlocks(
      keepHidden(input.blocks, before, await hiddenSources(deps, principal, before)),
      'body.blocks',
      now,
      before,
    );
    await checkNewSources(deps, principal, blocks, before, 'body.blocks');
    return { changes: { blocks: toJson(blocks) }, action: 'storyboard.blocks.replaced' };
  });
}

export async function addBlock(
  deps: Deps,
  principal: Principal,
  id: string,
  input: { block: BlockInput; position?: number; version?: number },
  ip: string,
): Promise<Storyboard> {
  return mutate(deps, principal, id, input.version, 'canEdit', ip, async (loaded, now) => {
    const before = blocksOf(loaded.row);
    if (before.length >= 200) throw invalidField('body.block', 'a story board holds at most 200 blocks');
    const { id: _ignored, ...fresh } = input.block;
    const block = normalizeBlock(fresh, 'body.block', now);
    const position = input.position ?? before.length;
    if (position > before.length) throw invalidField('body.position', `must be between 0 and ${before.length}`);
    const blocks = [...before.slice(0, position), block, ...before.slice(position)];
    await checkNewSources(deps, principal, [block], before, () => 'body.block');
    return { changes: { blocks: toJson(blocks) }, action: 'storyboard.block.added' };
  });
}

export async function editBlock(
  deps: Deps,
  principal: Principal,
  id: string,
  blockId: string,
  input: { block: BlockInput; version?: number },
  ip: string,
): Promise<Storyboard> {
  return mutate(deps, principal, id, input.version, 'canEdit', ip, async (loaded, now) => {
    const before = blocksOf(loaded.row);
    const index = before.findIndex((b) => b.id === blockId);
    if (index < 0) throw notFound('Block');
    const [kept] = keepHidden(
      [{ ...input.block, id: blockId }],
      before,
      await hiddenSources(deps, principal, [before[index]!]),
    );
    const block = normalizeBlock(kept!, 'body.block', now);
    const blocks = before.map((b, i) => (i === index ? block : b));
    await checkNewSources(deps, principal, [block], before, () => 'body.block');
    return { changes: { blocks: toJson(blocks) }, action: 'storyboard.block.edited' };
  });
}

export async function removeBlock(
  deps: Deps,
  principal: Principal,
  id: string,
  blockId: string,
  version: number | undefined,
  ip: string,
): Promise<Storyboard> {
  return mutate(deps, principal, id, version, 'canEdit', ip, (loaded) => {
    const before = blocksOf(loaded.row);
    if (!before.some((b) => b.id === blockId)) throw notFound('Block');
    return { changes: { blocks: toJson(before.filter((b) => b.id !== blockId)) }, action: 'storyboard.block.removed' };
  });
}

export async function reorderBlocks(
  deps: Deps,
  principal: Principal,
  id: string,
  input: { blockIds: string[]; version?: number },
  ip: string,
): Promise<Storyboard> {
  return mutate(deps, principal, id, input.version, 'canEdit', ip, (loaded) => {
    const before = blocksOf(loaded.row);
    const byId = new Map(before.map((b) => [b.id, b]));
    const seen = new Set<string>();
    input.blockIds.forEach((blockId, i) => {
      if (!byId.has(blockId)) throw invalidField(`body.blockIds.${i}`, 'is not a block of this story board');
      if (seen.has(blockId)) throw invalidField(`body.blockIds.${i}`, 'appears twice');
      seen.add(blockId);
    });
    if (seen.size !== before.length)
      throw invalidField(
        'body.blockIds',
        `must list every block exactly once (${before.length} blocks, ${seen.size} listed)`,
      );
    return {
      changes: { blocks: toJson(input.blockIds.map((b) => byId.get(b)!)) },
      action: 'storyboard.blocks.reordered',
    };
  });
}

export async function setPublished(
  deps: Deps,
  principal: Principal,
  id: string,
  published: boolean,
  version: number | undefined,
  ip: string,
): Promise<Storyboard> {
  return mutate(deps, principal, id, version, 'canPublish', ip, (_loaded, now) => ({
    changes: published ? { status: 'published', published_at: now } : { status: 'draft', published_at: null },
    action: published ? 'storyboard.published' : 'storyboard.unpublished',
  }));
}

export async function deleteStoryboard(deps: Deps, principal: Principal, id: string, ip: string): Promise<void> {
  const loaded = await loadBoard(deps, principal, id);
  requireFlag(loaded, 'canDelete');
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    // Two deletes at once both found it: only the one that removed it answers success and tells subscribers.
    if (!(await deleteBoard(trx, principal.orgId, id))) throw notFound('Story board');
    await audit(trx, {
      orgId: principal.orgId,
      at: now,
      actorId: principal.userId,
      action: 'storyboard.deleted',
      targetType: 'storyboard',
      targetId: id,
      ip,
      data: { title: loaded.row.title },
    });
    await publishEvent(trx, now, {
      orgId: principal.orgId,
      type: 'storyboard.deleted',
      actor: principal.userId,
      data: { storyboard: eventBoard(loaded.row) },
    });
  });
}
