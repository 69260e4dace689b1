import type { Deps } from '../../../deps.ts';
import { audit } from '../../../core/audit.ts';
import { requirePrivileges } from '../../../core/authz/authorize.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import { fromJson } from '../../../core/db/json.ts';
import { publishEvent } from '../../../core/events/publish.ts';
import type { TypedJobHandler } from '../../../core/jobs/catalog.ts';
import { actionJobHandler, createAction } from '../../actions/index.ts';
import type { DefinitionChange, MetadataJobHooks } from '../hooks.ts';

export const APPLY_ACTION = 'metadata.apply';

async function pendingChanges(deps: Deps, orgId: string, limit = 100_000): Promise<DefinitionChange[]> {
  const rows = await deps.db
    .selectFrom('metadata_changes')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('applied_at', 'is', null)
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    id: r.id,
    kind: r.kind,
    subjectType: r.subject_type,
    subjectId: r.subject_id,
    data: fromJson<Record<string, unknown>>(r.data, {}),
    createdAt: r.created_at,
  }));
}

/** POST /v1/metadata/apply: starts the apply-definition-changes Action. */
export async function applyChanges(deps: Deps, principal: Principal, ip: string) {
  requirePrivileges(principal, 'metadata_management');
  const now = deps.clock.now();
  const result = await deps.db.transaction().execute(async (trx) => {
    const pending = await trx
      .selectFrom('metadata_changes')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('org_id', '=', principal.orgId)
      .where('applied_at', 'is', null)
      .executeTakeFirstOrThrow();
    const actionId = await createAction(trx, now, {
      orgId: principal.orgId,
      type: APPLY_ACTION,
      createdBy: principal.userId,
      viewPrivilege: 'metadata_management',
      input: { pendingChanges: Number(pending.n) },
    });
    await audit(trx, {
      orgId: principal.orgId,
      at: now,
      actorId: principal.userId,
      action: 'metadata.changes.apply',
      targetType: 'action',
      targetId: actionId,
      ip,
    });
    return { actionId, pendingChanges: Number(pending.n) };
  });
  deps.jobs.wake();
  return {
    message: 'Applying metadata definition changes; follow the action at GET /v1/action/{actionId}',
    actionId: result.actionId,
    status: 'queued',
    pendingChanges: result.pendingChanges,
  };
}

export async function listPendingChanges(deps: Deps, principal: Principal) {
  requirePrivileges(principal, 'metadata_management');
  const changes = await pendingChanges(deps, principal.orgId, 1000);
  const total = await deps.db
    .selectFrom('metadata_changes')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('org_id', '=', principal.orgId)
    .where('applied_at', 'is', null)
    .executeTakeFirstOrThrow();
  const creators = await deps.db
    .selectFrom('metadata_changes')
    .select(['id', 'created_by'])
    .where('org_id', '=', principal.orgId)
    .where('applied_at', 'is', null)
    .orderBy('id')
    .limit(1000)
    .execute();
  const by = new Map(creators.map((c) => [c.id, c.created_by]));
  return {
    hitCount: Number(total.n),
    results: changes.map((c) => ({
      id: c.id,
      kind: c.kind,
      subjectType: c.subjectType,
      subjectId: c.subjectId,
      data: c.data,
      createdBy: by.get(c.id) ?? null,
      createdEpoch: c.createdAt,
    })),
  };
}

/**
 * The job behind the Action: hands every pending change to each ApplyHandler it is given (the
 * assets one, by src/workers.ts), which rewrite their stored documents, then marks the changes
 * applied. Handlers are idempotent, so a retried or concurrent apply does no harm.
 */
export function applyChangesJob(deps: Deps, hooks: MetadataJobHooks): TypedJobHandler<typeof APPLY_ACTION> {
  const handlers = Object.entries(hooks.applyHandlers);
  return actionJobHandler(deps, async (ctx) => {
    const changes = await pendingChanges(deps, ctx.orgId);
    const perHandler: Record<string, number> = {};
    const errors: { item: string; message: string }[] = [];
    let updated = 0;
    // Progress in thousandths of a handler's share, so a handler may report fractions.
    const total = Math.max(1, handlers.length) * 1000;
    await ctx.progress(0, total);
    for (const [i, [name, handler]] of handlers.entries()) {
      const out = await handler(deps.db, {
        orgId: ctx.orgId,
        actionId: ctx.actionId,
        changes,
        now: deps.clock.now(),
        actor: ctx.createdBy,
        progress: (fraction) => ctx.progress(Math.round((i + Math.max(0, Math.min(1, fraction))) * 1000), total),
      });
      perHandler[name] = out.updated;
      updated += out.updated;
      errors.push(...(out.errors ?? []));
      await ctx.progress((i + 1) * 1000, total);
    }
    const now = deps.clock.now();
    await deps.db.transaction().execute(async (trx) => {
      if (changes.length > 0) {
        for (let i = 0; i < changes.length; i += 500) {
          await trx
            .updateTable('metadata_changes')
            .set({ applied_at: now, action_id: ctx.actionId })
            .where('org_id', '=', ctx.orgId)
            .where(
              'id',
              'in',
              changes.slice(i, i + 500).map((c) => c.id),
            )
            .where('applied_at', 'is', null)
            .execute();
        }
      }
      await publishEvent(trx, now, {
        orgId: ctx.orgId,
        type: 'metadata.changes.applied',
        actor: ctx.createdBy,
        data: { action: { id: ctx.actionId, changesApplied: changes.length, itemsUpdated: updated } },
      });
    });
    return {
      result: {
        message: 'Changes applied successfully',
        changesApplied: changes.length,
        itemsUpdated: updated,
        handlers: perHandler,
      },
      errors,
    };
  });
}
