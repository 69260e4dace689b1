import type { Selectable } from 'kysely';
import type { Deps } from '../../deps.ts';
import { hasPrivilege } from '../../core/authz/authorize.ts';
import { isPrivilege, type Privilege } from '../../core/authz/catalog.ts';
import type { Principal } from '../../core/authz/principal.ts';
import type { DbOrTrx } from '../../core/db/connect.ts';
import { fromJson, toJson } from '../../core/db/json.ts';
import type { ActionsTable } from '../../core/db/schema.ts';
import { AppError } from '../../core/http/errors.ts';
import { newId } from '../../core/ids.ts';
import { enqueueJob, LeaseLost } from '../../core/jobs/queue.ts';
import type { ActionJobType, TypedJobHandler } from '../../core/jobs/catalog.ts';
import { recordedError } from '../../core/recorded-error.ts';

type ActionRow = Selectable<ActionsTable>;
export type ActionStatus = ActionsTable['status'];

export interface NewAction {
  orgId: string;
  /** e.g. `metadata.apply`; also the job type that runs it (an Action entry of core/jobs/catalog.ts). */
  type: ActionJobType;
  createdBy: string | null;
  /** Besides its creator, holders of this privilege may read the action. */
  viewPrivilege?: Privilege;
  input?: unknown;
  maxAttempts?: number;
}

/**
 * Starts an Action: the row users read (GET /v1/action/{id}) and the durable job that does the
 * work, written in the caller's transaction so both exist exactly when the change does.
 */
export async function createAction(db: DbOrTrx, now: number, spec: NewAction): Promise<string> {
  const id = newId(now);
  const jobId = newId(now);
  await db
    .insertInto('actions')
    .values({
      id,
      org_id: spec.orgId,
      type: spec.type,
      status: 'queued',
      progress: 0,
      total: null,
      processed: 0,
      created_by: spec.createdBy,
      view_privilege: spec.viewPrivilege ?? null,
      job_id: jobId,
      input: toJson(spec.input ?? {}),
      result: null,
      errors: toJson([]),
      cancel_requested: 0,
      created_at: now,
      updated_at: now,
      started_at: null,
      finished_at: null,
    })
    .execute();
  await enqueueJob(db, now, {
    id: jobId,
    type: spec.type,
    orgId: spec.orgId,
    payload: { actionId: id },
    maxAttempts: spec.maxAttempts ?? 3,
  });
  return id;
}

export function actionOut(row: ActionRow) {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    id: row.id,
    objectId: row.id,
    objectType: 'Action' as const,
    type: row.type,
    status: row.status,
    progress: row.progress,
    processed: row.processed,
    total: row.total,
    createdBy: row.created_by,
    createdEpoch: row.created_at,
    createdDate: iso(row.created_at)!,
    lastUpdatedEpoch: row.updated_at,
    lastUpdatedDate: iso(row.updated_at)!,
    startedDate: iso(row.started_at),
    finishedDate: iso(row.finished_at),
    input: fromJson<unknown>(row.input, {}),
    result: fromJson<unknown>(row.result, null),
    errors: fromJson<{ item: string; message: string }[]>(row.errors, []),
  };
}

/** An action the caller may see (its creator, or a holder of its view privilege); 404 otherwise. */
/** Who started an action of the organization (undefined when there is none). */
export async function actionCreator(db: DbOrTrx, orgId: string, id: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('actions')
    .select('created_by')
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row?.created_by ?? undefined;
}

export async function getAction(deps: Deps, principal: Principal, id: string) {
  const row = await deps.db
    .selectFrom('actions')
    .selectAll()
    .where('org_id', '=', principal.orgId)
    .where('id', '=', id)
    .executeTakeFirst();
  const visible =
    row &&
    (row.created_by === principal.userId ||
      (row.view_privilege !== null && isPrivilege(row.view_privilege) && hasPrivilege(principal, row.view_privilege)));
  if (!row || !visible) throw new AppError('not_found', 'Action not found');
  return actionOut(row);
}

/**
 * Actions of the other kind: DAM objects stored like assets with objectType Action (an
 * action-type metadata template made into an object). The assets feature, which stores them,
 * provides the reader (wired by src/app.ts); it answers undefined when no such object is visible to the caller.
 */
export type ActionObjectReader = (
  deps: Deps,
  principal: Principal,
  id: string,
) => Promise<Record<string, unknown> | undefined>;

/** GET /v1/action/{id}: an invoked Action (a job), else an Action object by objectId or fileId; 404 when neither is visible. */
export async function readAction(
  deps: Deps,
  principal: Principal,
  id: string,
  objectReader?: ActionObjectReader,
): Promise<Record<string, unknown>> {
  try {
    return await getAction(deps, principal, id);
  } catch (error) {
    if (!(error instanceof AppError) || error.code !== 'not_found' || !objectReader) throw error;
    const object = await objectReader(deps, principal, id);
    if (!object) throw error;
    return object;
  }
}

export interface ActionContext {
  actionId: string;
  orgId: string;
  input: unknown;
  createdBy: string | null;
  /** Records progress; `total` may be learned late. */
  progress(processed: number, total?: number): Promise<void>;
  /** Items done before a restart (resume from here). */
  processed: number;
  /** What the last commit() saved with `processed` (the running counts of a resumed run), or undefined. */
  partial: unknown;
  /** Aborted when this run lost its job's lease: stop at the next item (throw `signal.reason`). */
  signal: AbortSignal;
  /**
   * Moves the action's cursor from `from` to `to` items, saving `partial` (and the item errors so
   * far) with it, in `db` — call it inside the transaction of the items' change, so an item's
   * change and its being counted done commit together or not at all. The move happens only if the
   * cursor still stands at `from`: when another run of the action (its job's lease expired and
   * another worker took it over) got there first, it throws LeaseLost and the transaction rolls
   * back, so no item is ever applied twice.
   */
  commit(
    db: DbOrTrx,
    from: number,
    to: number,
    partial: unknown,
    more?: { errors?: { item: string; message: string }[]; total?: number },
  ): Promise<void>;
  /** True once someone asked to cancel; the work should stop and throw ActionCancelled. */
  cancelRequested(): Promise<boolean>;
}

/** Thrown by action work that stopped because it was cancelled. */
export class ActionCancelled extends Error {
  readonly partial: unknown;
  constructor(partial?: unknown) {
    super('cancelled');
    this.partial = partial;
  }
}

export interface ActionOutcome {
  result: unknown;
  errors?: { item: string; message: string }[];
}

/**
 * A job handler for an action type: marks the action running, runs `work`, records its result
 * (succeeded, or failed with the error after the job's last attempt; between attempts it is
 * queued again).
 */
export function actionJobHandler(
  deps: Deps,
  work: (ctx: ActionContext) => Promise<ActionOutcome>,
): TypedJobHandler<ActionJobType> {
  return async (job) => {
    const actionId = job.payload.actionId;
    const row = await deps.db.selectFrom('actions').selectAll().where('id', '=', actionId).executeTakeFirst();
    if (!row || row.status === 'succeeded' || row.status === 'cancelled') return;
    // A resumed action runs under a new job (resumeAction): a job left over from before (cancelled
    // while still queued) is not the action's any more and does nothing.
    if (row.job_id !== null && row.job_id !== job.id) return;
    if (row.cancel_requested === 1) {
      await deps.db
        .updateTable('actions')
        .set({ status: 'cancelled', finished_at: deps.clock.now(), updated_at: deps.clock.now() })
        .where('id', '=', actionId)
        .execute();
      return;
    }
    const started = deps.clock.now();
    await deps.db
      .updateTable('actions')
      .set({ status: 'running', started_at: row.started_at ?? started, updated_at: started })
      .where('id', '=', actionId)
      .execute();
    // A resumed run continues from the counts its predecessor committed (kept in `result` while running).
    const partial =
      row.status === 'running' || row.status === 'queued'
        ? (fromJson<unknown>(row.result ?? 'null', null) ?? undefined)
        : undefined;
    const ctx: ActionContext = {
      actionId,
      orgId: row.org_id,
      input: fromJson<unknown>(row.input, {}),
      createdBy: row.created_by,
      processed: row.processed,
      partial,
      signal: job.signal,
      async commit(db, from, to, saved, more = {}) {
        const total =
          more.total ??
          (await db.selectFrom('actions').select('total').where('id', '=', actionId).executeTakeFirst())?.total ??
          null;
        const pct = total && total > 0 ? Math.min(99, Math.floor((to / total) * 100)) : 0;
        const moved = await db
          .updateTable('actions')
          .set({
            processed: to,
            total,
            progress: pct,
            result: toJson(saved ?? null),
            ...(more.errors ? { errors: toJson(more.errors) } : {}),
            updated_at: deps.clock.now(),
          })
          .where('id', '=', actionId)
          .where('processed', '=', from)
          .where('status', '=', 'running')
          .executeTakeFirst();
        if (Number(moved.numUpdatedRows) === 0)
          throw new LeaseLost(`another run of action ${actionId} is ahead of item ${from}`);
      },
      async cancelRequested() {
        const r = await deps.db
          .selectFrom('actions')
          .select('cancel_requested')
          .where('id', '=', actionId)
          .executeTakeFirst();
        return r?.cancel_requested === 1;
      },
      async progress(done, total) {
        const processed = Math.max(0, Math.round(done));
        const t =
          total ??
          (await deps.db.selectFrom('actions').select('total').where('id', '=', actionId).executeTakeFirst())?.total ??
          null;
        const pct = t && t > 0 ? Math.min(99, Math.floor((processed / t) * 100)) : 0;
        await deps.db
          .updateTable('actions')
          .set({ processed, total: t, progress: pct, updated_at: deps.clock.now() })
          .where('id', '=', actionId)
          .execute();
      },
    };
    try {
      const outcome = await work(ctx);
      const now = deps.clock.now();
      await deps.db
        .updateTable('actions')
        .set({
          status: 'succeeded',
          progress: 100,
          result: toJson(outcome.result ?? null),
          errors: toJson(outcome.errors ?? []),
          finished_at: now,
          updated_at: now,
        })
        .where('id', '=', actionId)
        .execute();
    } catch (error) {
      // Another run of this action is ahead (or took the job over): it owns the action's state now.
      if (error instanceof LeaseLost) throw error;
      if (!(await job.stillHeld().catch(() => true))) throw new LeaseLost();
      const now = deps.clock.now();
      if (error instanceof ActionCancelled) {
        await deps.db
          .updateTable('actions')
          .set({ status: 'cancelled', result: toJson(error.partial ?? null), finished_at: now, updated_at: now })
          .where('id', '=', actionId)
          .execute();
        return;
      }
      const last = job.attempts >= job.maxAttempts;
      await deps.db
        .updateTable('actions')
        .set({
          status: last ? 'failed' : 'queued',
          errors: toJson([{ item: row.type, message: recordedError(error) }]),
          finished_at: last ? now : null,
          updated_at: now,
        })
        .where('id', '=', actionId)
        .execute();
      throw error;
    }
  };
}

/**
 * The caller's own actions, newest first; with `scope: 'visible'`, also the organization's actions
 * whose view privilege the caller holds (a purger sees every purge, for instance).
 */
export async function listActions(
  deps: Deps,
  principal: Principal,
  query: { status?: ActionStatus; limit?: number; before?: string; scope?: 'mine' | 'visible' },
) {
  const held = query.scope === 'visible' ? [...principal.privileges] : [];
  let q = deps.db
    .selectFrom('actions')
    .selectAll()
    .where('org_id', '=', principal.orgId)
    .where((eb) =>
      held.length > 0
        ? eb.or([eb('created_by', '=', principal.userId), eb('view_privilege', 'in', held)])
        : eb('created_by', '=', principal.userId),
    );
  if (query.status) q = q.where('status', '=', query.status);
  if (query.before) q = q.where('id', '<', query.before);
  const limit = Math.min(100, Math.max(1, query.limit ?? 50));
  const rows = await q
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
  return { actions: rows.slice(0, limit).map(actionOut), next: rows.length > limit ? rows[limit - 1]!.id : null };
}

/**
 * Asks an action to stop: a queued one is cancelled at once, a running one at its next
 * checkpoint. Finished actions answer 409.
 */
export async function cancelAction(deps: Deps, principal: Principal, id: string) {
  const action = await getAction(deps, principal, id);
  if (action.status === 'succeeded' || action.status === 'failed' || action.status === 'cancelled') {
    throw new AppError(
      'conflict',
      `The action has already ${action.status === 'cancelled' ? 'been cancelled' : action.status}`,
    );
  }
  const now = deps.clock.now();
  await deps.db
    .updateTable('actions')
    .set({ cancel_requested: 1, updated_at: now })
    .where('id', '=', id)
    .where('org_id', '=', principal.orgId)
    .execute();
  await deps.db
    .updateTable('actions')
    .set({ status: 'cancelled', finished_at: now })
    .where('id', '=', id)
    .where('status', '=', 'queued')
    .execute();
  return getAction(deps, principal, id);
}

/**
 * Starts a cancelled or failed action again where it stopped: the items it finished stay done
 * (its cursor and running counts are kept), the rest run under a new job. Only an action the
 * caller may see; one still queued, running or finished successfully answers 409.
 */
export async function resumeAction(deps: Deps, principal: Principal, id: string) {
  const action = await getAction(deps, principal, id);
  if (action.status !== 'cancelled' && action.status !== 'failed')
    throw new AppError(
      'conflict',
      action.status === 'succeeded'
        ? 'The action has already succeeded'
        : `The action is ${action.status}: only a cancelled or failed action can be resumed`,
    );
  const now = deps.clock.now();
  const jobId = newId(now);
  await deps.db.transaction().execute(async (trx) => {
    const moved = await trx
      .updateTable('actions')
      .set({ status: 'queued', cancel_requested: 0, finished_at: null, job_id: jobId, updated_at: now })
      .where('id', '=', id)
      .where('org_id', '=', principal.orgId)
      .where('status', 'in', ['cancelled', 'failed'])
      .executeTakeFirst();
    if (Number(moved.numUpdatedRows) === 0) throw new AppError('conflict', 'The action was resumed already');
    await enqueueJob(trx, now, {
      id: jobId,
      type: action.type as ActionJobType,
      orgId: principal.orgId,
      payload: { actionId: id },
      maxAttempts: 3,
    });
  });
  deps.jobs.wake();
  return getAction(deps, principal, id);
}
