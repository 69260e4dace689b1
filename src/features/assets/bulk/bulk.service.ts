import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { releaseHoldings } from '../../quotas/index.ts';
import type { Deps } from '../../../deps.ts';
import { assertMayApplyTemplates, holdsPermissionAnywhere } from '../../../core/authz/authorize.ts';
import { mayPerform, permitted, requireAction } from '../../../core/authz/permissions.ts';
import { isPrivilege, type Permission } from '../../../core/authz/catalog.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import { fromJson, toJson } from '../../../core/db/json.ts';
import { publishEvent } from '../../../core/events/index.ts';
import { AppError, invalidField } from '../../../core/http/errors.ts';
import { isUuid } from '../../../core/ids.ts';
import { enqueueJob, LeaseLost } from '../../../core/jobs/queue.ts';
import type { HandlersFor } from '../../../core/jobs/catalog.ts';
import { ActionCancelled, actionJobHandler, createAction, type ActionContext } from '../../actions/index.ts';
import { loadUserPrincipal } from '../../identity/index.ts';
import {
  loadTemplate,
  templateAccess,
  type ApplyHandler,
  type CompiledTemplate,
  type UsageProbe,
} from '../../metadata/index.ts';
import { assetVisibleTo, callerPermissions } from '../access.ts';
import { contentHeld, findAsset, securityOf } from '../assets.repo.ts';
import { applyChanges, checkTemplates } from '../assets.service.ts';
import {
  normalizeItem,
  preparePatch,
  project,
  templateForWrite,
  type LegacyItem,
} from '../metadata-seam/metadata-seam.ts';
import { RENDITIONS_JOB } from '../upload/uploads.service.ts';
import { renditionPrefix } from '../renditions/job/renditions.ts';
import { recordedError } from '../../../core/recorded-error.ts';
import type { DbOrTrx, Trx } from '../../../core/db/connect.ts';
import { publishRightsChange, rightsOf } from '../rights/rights.ts';

export const BULK_EDIT_ACTION = 'assets.bulk_edit';
export const PURGE_ACTION = 'assets.purge';
export const REGENERATE_ACTION = 'assets.regenerate_renditions';
const CHECKPOINT = 25;

export interface BulkEditInput {
  metadataTemplateId: string;
  objectIds: string[];
  metadataDocument?: {
    metadataDefinitionId: string;
    metadataDefinitionValue?: unknown;
    metadataDefinitionTableValue?: unknown[][];
    operation?: 'replace' | 'append' | 'remove';
  }[];
  securityTemplateIds?: string[];
  securityTemplateOp?: 'replace' | 'append' | 'remove';
}

/** PATCH /v1/asset: validates the edit once, then runs it over every asset as an Action. */
export async function startBulkEdit(
  deps: Deps,
  principal: Principal,
  input: BulkEditInput,
): Promise<{ jobId: string; collectionId: null }> {
  if (!input.objectIds || input.objectIds.length === 0)
    throw invalidField('body.objectIds', 'Invalid Request: Missing Bulk Edit Asset Details');
  if (input.objectIds.length > 100_000) throw invalidField('body.objectIds', 'at most 100000 assets per edit');
  const bad = input.objectIds.findIndex((id) => !isUuid(id));
  if (bad >= 0) throw invalidField(`body.objectIds.${bad}`, 'must be a UUID');
  if (!isUuid(input.metadataTemplateId ?? ''))
    throw invalidField('body.metadataTemplateId', 'Invalid metadataTemplateId');
  const t = await templateForWrite(deps.db, principal, input.metadataTemplateId);
  const ops = input.metadataDocument ?? [];
  const strip = (op: (typeof ops)[number]) => {
    const { operation: _op, ...item } = op;
    return item;
  };
  // Values are checked against the template up front, so every asset gets a valid document.
  preparePatch(principal, t, ops.map(strip), [], 'body.metadataDocument');
  const templates =
    input.securityTemplateIds !== undefined
      ? await checkTemplates(deps.db, principal.orgId, input.securityTemplateIds)
      : undefined;
  // Refused up front when the caller holds Apply Security Template nowhere; each asset is checked again as it is edited.
  if (templates !== undefined && !(await holdsPermissionAnywhere(deps.db, principal, 'apply_security_template'))) {
    throw new AppError('forbidden', 'Missing permission: Apply Security Template (changing securityTemplateIds)');
  }
  if (!input.metadataDocument && !templates && !input.metadataTemplateId)
    throw invalidField('body', 'Invalid Request: Missing Bulk Edit Asset Details');
  const now = deps.clock.now();
  const actionId = await deps.db.transaction().execute((trx) =>
    createAction(trx, now, {
      orgId: principal.orgId,
      type: BULK_EDIT_ACTION,
      createdBy: principal.userId,
      input: {
        ...input,
        objectIds: [...new Set(input.objectIds.map((id) => id.toLowerCase()))],
        securityTemplateIds: templates,
        total: input.objectIds.length,
      },
    }),
  );
  deps.jobs.wake();
  return { jobId: actionId, collectionId: null };
}

function appendItem(t: CompiledTemplate, old: LegacyItem | undefined, change: LegacyItem): LegacyItem {
  if (!old) return change;
  const def = t.byId.get(change.metadataDefinitionId);
  if (change.metadataDefinitionTableValue)
    return {
      ...old,
      metadataDefinitionTableValue: [
        ...(old.metadataDefinitionTableValue ?? []),
        ...change.metadataDefinitionTableValue,
      ],
    };
  const a = old.metadataDefinitionValue;
  const b = change.metadataDefinitionValue;
  if (def?.type === 'text' && typeof a === 'string' && typeof b === 'string')
    return { ...old, metadataDefinitionValue: a === '' ? b : `${a} ${b}` };
  if (Array.isArray(a) && Array.isArray(b)) {
    const seen = new Set(a.map((v) => JSON.stringify(v)));
    return { ...old, metadataDefinitionValue: [...a, ...b.filter((v) => !seen.has(JSON.stringify(v)))] } as LegacyItem;
  }
  return change;
}

/**
 * `remove`: the given values leave the attribute (a multi-value attribute keeps the others; a
 * single value equal to the given one is cleared; table rows equal to the given ones are dropped).
 * Values are compared as the template stores them, so a vocabulary value may be named or given by id.
 */
function removeItem(t: CompiledTemplate, old: LegacyItem | undefined, change: LegacyItem): LegacyItem {
  const keep = (value: unknown) =>
    ({ metadataDefinitionId: change.metadataDefinitionId, metadataDefinitionValue: value }) as LegacyItem;
  if (!old) return keep(null);
  const given = normalizeItem(t, change, 'metadataDocument');
  if (!given) return old;
  const key = (v: unknown) => JSON.stringify(v);
  if (given.metadataDefinitionTableValue) {
    const drop = new Set(given.metadataDefinitionTableValue.map(key));
    return {
      ...old,
      metadataDefinitionTableValue: (old.metadataDefinitionTableValue ?? []).filter((r) => !drop.has(key(r))),
    };
  }
  const a = old.metadataDefinitionValue;
  const b = given.metadataDefinitionValue;
  const drop = new Set((Array.isArray(b) ? b : [b]).map(key));
  if (Array.isArray(a)) return { ...old, metadataDefinitionValue: a.filter((v) => !drop.has(key(v))) } as LegacyItem;
  return drop.has(key(a)) ? keep(null) : old;
}

async function bulkEditWork(deps: Deps, ctx: ActionContext) {
  const input = ctx.input as BulkEditInput & { total: number };
  const principal = ctx.createdBy ? await loadUserPrincipal(deps.db, ctx.createdBy) : null;
  if (!principal) throw new AppError('forbidden', 'The user who started this edit no longer exists');
  const t = await loadTemplate(deps.db, ctx.orgId, input.metadataTemplateId);
  if (!t) throw new AppError('validation_failed', 'The metadata template no longer exists');
  const ids = input.objectIds;
  // Exactly once per item, across crashes and lease take-overs: each item's change commits in one
  // transaction with the cursor moving past it (ctx.commit), and the running counts move with the
  // cursor. A resumed run starts at the cursor with the counts saved there; a run that finds the
  // cursor moved by another run stops (LeaseLost) with its own item rolled back.
  const saved = (ctx.partial ?? {}) as Partial<BulkProgress>;
  const errors = Array.isArray(saved.errors) ? [...saved.errors] : [];
  let updated = typeof saved.updated === 'number' ? saved.updated : 0;
  let cursor = ctx.processed;
  const state = (extra = 0): BulkProgress => ({
    updated: updated + extra,
    failed: errors.length,
    total: ids.length,
    errors,
  });
  // Sets the total (and fences: a run behind another stops here).
  await ctx.commit(deps.db, cursor, cursor, state(), { errors, total: ids.length });
  for (let i = cursor; i < ids.length; i++) {
    // Lets timers and requests in between items: SQLite's calls never wait for I/O, so without it a
    // long edit would hold the event loop (the lease heartbeat, the API of this process) to its end.
    await yieldToEventLoop();
    if (ctx.signal.aborted) throw ctx.signal.reason;
    if (i % CHECKPOINT === 0 && (await ctx.cancelRequested())) throw new ActionCancelled(state());
    const id = ids[i]!;
    try {
      const asset = await findAsset(deps.db, principal.orgId, id);
      const security = asset ? (await securityOf(deps.db, principal.orgId, [asset.id])).get(asset.id)! : undefined;
      const permissions = security ? callerPermissions(principal, security) : new Set<Permission>();
      // The one visibility rule (View and an open metadata template): a hidden asset fails as a missing one.
      if (
        !asset ||
        !security ||
        !assetVisibleTo(principal, security, await templateAccess(deps.db, principal.orgId, asset.metadata_template_id))
      )
        throw new Error('Asset not found');
      if (!permitted(permissions, 'asset.edit_metadata'))
        throw new Error('Missing permission on this asset: Edit Metadata');
      if (asset.deleted_at !== null) throw new Error('The asset is in the recycle bin');
      if (asset.object_type === 'Action')
        throw new Error('This is an Action object: it follows its action-type metadata template');
      const current = project(t, fromJson<LegacyItem[]>(asset.metadata, [])).doc;
      const byId = new Map(current.map((item) => [item.metadataDefinitionId, item]));
      const patch = (input.metadataDocument ?? []).map(({ operation, ...item }) =>
        operation === 'append'
          ? appendItem(t, byId.get(item.metadataDefinitionId), item as LegacyItem)
          : operation === 'remove'
            ? removeItem(t, byId.get(item.metadataDefinitionId), item as LegacyItem)
            : (item as LegacyItem),
      );
      const prepared = preparePatch(principal, t, patch, current, 'metadataDocument');
      let templates: string[] | undefined;
      if (input.securityTemplateIds)
        templates =
          input.securityTemplateOp === 'append'
            ? [...new Set([...security!.templateIds, ...input.securityTemplateIds])]
            : input.securityTemplateOp === 'remove'
              ? security!.templateIds.filter((id) => !input.securityTemplateIds!.includes(id))
              : input.securityTemplateIds;
      if (templates && templates.length === 0)
        throw new Error('An asset keeps at least one security template: removing these would leave none');
      if (templates) await assertMayApplyTemplates(deps.db, principal, permissions, security!.templateIds, templates);
      const from = cursor;
      await applyChanges(
        deps,
        principal.userId,
        asset,
        security!.templateIds,
        { doc: prepared.doc, denormalized: prepared.denormalized, templates, templateId: input.metadataTemplateId },
        (trx) => ctx.commit(trx, from, i + 1, state(1), { errors, total: ids.length }),
      );
      updated++;
      cursor = i + 1;
    } catch (error) {
      if (error instanceof LeaseLost) throw error;
      errors.push({ item: id, message: recordedError(error) });
      // A failed item changed nothing: it is counted done with the next commit (or re-tried after a crash).
      if (i === ids.length - 1 || i % CHECKPOINT === 0) {
        await ctx.commit(deps.db, cursor, i + 1, state(), { errors, total: ids.length });
        cursor = i + 1;
      }
    }
  }
  if (cursor < ids.length) await ctx.commit(deps.db, cursor, ids.length, state(), { errors, total: ids.length });
  return { result: { updated, failed: errors.length, total: ids.length }, errors };
}

interface BulkProgress {
  updated: number;
  failed: number;
  total: number;
  errors: { item: string; message: string }[];
}

/** POST /v1/asset/purge: permanently removes recycle-bin assets (Purge privilege), as an Action. */
export async function startPurge(deps: Deps, principal: Principal, input: { objectIds?: string[]; all?: boolean }) {
  requireAction(principal, 'asset.purge');
  if (!input.all && (!input.objectIds || input.objectIds.length === 0))
    throw invalidField('body.objectIds', 'name the recycle-bin assets to purge, or send all: true');
  const now = deps.clock.now();
  const actionId = await deps.db.transaction().execute((trx) =>
    createAction(trx, now, {
      orgId: principal.orgId,
      type: PURGE_ACTION,
      createdBy: principal.userId,
      viewPrivilege: 'purge',
      input: { ...input, purger: { privileges: [...principal.privileges], groupIds: [...principal.groupIds] } },
    }),
  );
  deps.jobs.wake();
  return { actionId, status: 'queued' };
}

async function purgeWork(deps: Deps, ctx: ActionContext) {
  const input = ctx.input as {
    objectIds?: string[];
    all?: boolean;
    purger?: { privileges: string[]; groupIds: string[] };
  };
  let query = deps.db
    .selectFrom('assets')
    .select(['original_file_id'])
    .distinct()
    .where('org_id', '=', ctx.orgId)
    .where('deleted_at', 'is not', null);
  if (!input.all)
    query = query.where((eb) =>
      eb.or([
        eb('id', 'in', input.objectIds!),
        eb('file_id', 'in', input.objectIds!),
        eb('original_file_id', 'in', input.objectIds!),
      ]),
    );
  const chains = (await query.orderBy('original_file_id').execute()).map((r) => r.original_file_id);
  // Only what the purger may purge (permission table: View and Delete on every version of the chain);
  // the rest is left alone, as if it did not exist.
  // What the purger held when they asked (an API key: its capped privileges and its creator's groups).
  const purger: Principal | null = input.purger
    ? {
        kind: 'user',
        via: 'password',
        orgId: ctx.orgId,
        userId: ctx.createdBy ?? '',
        username: '',
        roleId: '',
        privileges: new Set(input.purger.privileges.filter(isPrivilege)),
        groupIds: input.purger.groupIds,
      }
    : null;
  if (!purger)
    throw new AppError('forbidden', "This purge was queued without the purger's permissions; start it again");
  // A resumed purge (POST /v1/action/{id}/resume) keeps counting from where it was cancelled.
  let purged =
    typeof (ctx.partial as { purged?: unknown } | undefined)?.purged === 'number'
      ? (ctx.partial as { purged: number }).purged
      : 0;
  await ctx.progress(0, chains.length);
  for (const [i, chainId] of chains.entries()) {
    if (i % CHECKPOINT === 0 && (await ctx.cancelRequested())) throw new ActionCancelled({ purged });
    const versions = await deps.db
      .selectFrom('assets')
      .select([
        'id',
        'filename',
        'sha256',
        'blob_key',
        'size',
        'content_state',
        'federated',
        'is_current',
        'object_type',
      ])
      .where('org_id', '=', ctx.orgId)
      .where('original_file_id', '=', chainId)
      .where('deleted_at', 'is not', null)
      .execute();
    const security = await securityOf(
      deps.db,
      ctx.orgId,
      versions.map((v) => v.id),
    );
    if (
      !mayPerform(purger, 'asset.purge') ||
      !versions.every((v) => permitted(callerPermissions(purger, security.get(v.id)!), 'asset.purge'))
    ) {
      await ctx.progress(i + 1, chains.length);
      continue;
    }
    const now = deps.clock.now();
    // Only versions still in the recycle bin go: one restored since they were read stays, whole.
    const gone = await deps.db.transaction().execute(async (trx) => {
      const removed: typeof versions = [];
      let reservedBytes = 0;
      for (const v of versions) {
        const deleted = await trx
          .deleteFrom('assets')
          .where('id', '=', v.id)
          .where('deleted_at', 'is not', null)
          .executeTakeFirst();
        if (Number(deleted.numDeletedRows) === 0) continue;
        // An open upload's declared bytes were counted when it started (features/quotas): they go too.
        for (const open of await trx
          .selectFrom('asset_uploads')
          .select('options')
          .where('asset_id', '=', v.id)
          .where('status', '=', 'open')
          .where('target', '=', 'original')
          .execute())
          reservedBytes += fromJson<{ reservedBytes?: number }>(open.options, {}).reservedBytes ?? 0;
        await trx.deleteFrom('asset_uploads').where('asset_id', '=', v.id).execute();
        await trx.deleteFrom('asset_visual_hashes').where('asset_id', '=', v.id).execute();
        await publishEvent(trx, now, {
          orgId: ctx.orgId,
          type: 'asset.purged',
          actor: ctx.createdBy,
          data: { asset: { id: v.id, filename: v.filename } },
        });
        removed.push(v);
      }
      // What the organization holds goes down with them (features/quotas), in the same transaction.
      await releaseHoldings(trx, ctx.orgId, now, {
        bytes: removed.reduce(
          (sum, v) => sum + (v.content_state === 'available' && v.federated === 0 ? Number(v.size ?? 0) : 0),
          reservedBytes,
        ),
        assets: removed.filter((v) => v.is_current === 1 && v.object_type === 'Asset').length,
      });
      return removed;
    });
    // Bytes go only when no other asset of the organization holds the same content.
    for (const v of gone) {
      if (!v.sha256 || !v.blob_key) continue;
      if (await contentHeld(deps.db, ctx.orgId, v.sha256)) continue;
      await deps.blobs.delete(v.blob_key);
      await deps.blobs.deletePrefix(renditionPrefix(ctx.orgId, v.sha256));
    }
    purged += gone.length;
    await ctx.progress(i + 1, chains.length);
  }
  return { result: { purged } };
}

/** Re-renders renditions of the named assets (Content Management), as an Action. */
export async function startRegenerate(deps: Deps, principal: Principal, objectIds: string[]) {
  requireAction(principal, 'asset.regenerate');
  if (objectIds.length === 0) throw invalidField('body.objectIds', 'name at least one asset');
  const now = deps.clock.now();
  const actionId = await deps.db.transaction().execute((trx) =>
    createAction(trx, now, {
      orgId: principal.orgId,
      type: REGENERATE_ACTION,
      createdBy: principal.userId,
      viewPrivilege: 'content_management',
      input: { objectIds },
    }),
  );
  deps.jobs.wake();
  return { actionId, status: 'queued' };
}

async function regenerateWork(deps: Deps, ctx: ActionContext) {
  const { objectIds } = ctx.input as { objectIds: string[] };
  const errors: { item: string; message: string }[] = [];
  let queued = 0;
  for (const id of objectIds) {
    const asset = await findAsset(deps.db, ctx.orgId, id);
    if (!asset || asset.content_state !== 'available') {
      errors.push({ item: id, message: 'Asset not found or without content' });
      continue;
    }
    await enqueueJob(deps.db, deps.clock.now(), {
      type: RENDITIONS_JOB,
      orgId: ctx.orgId,
      payload: { assetId: asset.id, force: true },
    });
    queued++;
  }
  deps.jobs.wake();
  return { result: { queued }, errors };
}

export function bulkJobHandlers(
  deps: Deps,
): HandlersFor<typeof BULK_EDIT_ACTION | typeof PURGE_ACTION | typeof REGENERATE_ACTION> {
  return {
    [BULK_EDIT_ACTION]: actionJobHandler(deps, (ctx) => bulkEditWork(deps, ctx)),
    [PURGE_ACTION]: actionJobHandler(deps, (ctx) => purgeWork(deps, ctx)),
    [REGENERATE_ACTION]: actionJobHandler(deps, (ctx) => regenerateWork(deps, ctx)),
  };
}

/** For the metadata feature (wired by src/app.ts): templates in use by assets. */
export const assetTemplateUsage: UsageProbe = async (db, orgId, kind, ids) => {
  const out = new Map<string, string>();
  if (kind !== 'template' || ids.length === 0) return out;
  const rows = await db
    .selectFrom('assets')
    .select(['metadata_template_id'])
    .select((eb) => eb.fn.countAll<number>().as('n'))
    // An action-type template's own Action object is not a use of it (deleting the template retires the object).
    .where('org_id', '=', orgId)
    .where('metadata_template_id', 'in', [...ids])
    .where('object_type', '!=', 'Action')
    .groupBy('metadata_template_id')
    .execute();
  for (const r of rows) if (r.metadata_template_id) out.set(r.metadata_template_id, `${Number(r.n)} assets`);
  return out;
};

/** `fn` in a transaction of its own, or in the caller's when `db` already is one. */
function inTransaction(db: DbOrTrx, fn: (trx: Trx) => Promise<void>): Promise<void> {
  return db.isTransaction ? fn(db as Trx) : db.transaction().execute(fn);
}

/** For the metadata feature (wired by src/workers.ts): brings assets' stored metadata in line after definition changes. */
export const applyMetadataToAssets: ApplyHandler = async (db, ctx) => {
  const templates = new Map<string, CompiledTemplate | undefined>();
  const total = Number(
    (
      await db
        .selectFrom('assets')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('org_id', '=', ctx.orgId)
        .executeTakeFirstOrThrow()
    ).n,
  );
  let after = '';
  let seen = 0;
  let updated = 0;
  for (;;) {
    const rows = await db
      .selectFrom('assets')
      .select(['id', 'org_id', 'filename', 'metadata', 'metadata_denormalized', 'metadata_template_id', 'updated_at'])
      .where('org_id', '=', ctx.orgId)
      .where('id', '>', after)
      .orderBy('id')
      .limit(500)
      .execute();
    if (rows.length === 0) break;
    for (const row of rows) {
      const tid = row.metadata_template_id;
      if (!tid) continue;
      if (!templates.has(tid)) templates.set(tid, await loadTemplate(db, ctx.orgId, tid));
      const t = templates.get(tid);
      if (!t) continue;
      const next = project(t, fromJson<LegacyItem[]>(row.metadata, []));
      const doc = toJson(next.doc);
      const denormalized = toJson(next.denormalized);
      if (doc !== row.metadata || denormalized !== row.metadata_denormalized) {
        // A new updated_at is what the search indexer follows: the index comes in line with the asset.
        const write = (trx: DbOrTrx) =>
          trx
            .updateTable('assets')
            .set({
              metadata: doc,
              metadata_denormalized: denormalized,
              updated_at: Math.max(ctx.now, row.updated_at + 1),
            })
            .where('id', '=', row.id)
            .execute();
        // A definition change can change an asset's rights (a renamed license, a removed rights
        // attribute): the rm.agreement.* event goes with the write, in its transaction.
        const before = rightsOf(row.metadata_denormalized);
        const after = rightsOf(denormalized);
        if (JSON.stringify(before) === JSON.stringify(after)) await write(db);
        else
          await inTransaction(db, async (trx) => {
            await write(trx);
            await publishRightsChange(trx, ctx.now, row, ctx.actor, before, after);
          });
        updated++;
      }
    }
    seen += rows.length;
    after = rows[rows.length - 1]!.id;
    await ctx.progress(total > 0 ? seen / total : 1);
  }
  return { updated };
};
