import { currentRequest, requestOrigin } from '../http/request-context.ts';
import { activeTraceparent } from '../tracing.ts';
import { sql } from 'kysely';
import type { DbOrTrx, Engine } from '../db/connect.ts';
import { toJson } from '../db/json.ts';
import { newId } from '../ids.ts';
import type { JobPayload, JobType } from './catalog.ts';

/** A job of the catalog (core/jobs/catalog.ts): its payload is typed by its type. */
export type JobSpec<T extends JobType = JobType> = { [K in T]: JobSpecOf<K> }[T];

interface JobSpecOf<T extends JobType> extends RawJobSpec {
  type: T;
  payload: JobPayload<T>;
}

/** Any type and payload: only for the worker's own tests (features enqueue catalog jobs with enqueueJob). */
export interface RawJobSpec {
  type: string;
  payload: unknown;
  orgId?: string | null;
  /** Epoch ms; defaults to now. */
  runAt?: number;
  maxAttempts?: number;
  id?: string;
}

/**
 * Adds a job. Call it with the transaction of the change the job belongs to, so the job exists
 * exactly when the change does (a rolled-back change leaves no job behind).
 */
export function enqueueJob<T extends JobType>(db: DbOrTrx, now: number, spec: JobSpec<T>): Promise<string> {
  return enqueueRawJob(db, now, spec);
}

/** enqueueJob without the catalog's types: the worker's own tests, with ad-hoc job types. */
export async function enqueueRawJob(db: DbOrTrx, now: number, spec: RawJobSpec): Promise<string> {
  const id = spec.id ?? newId(now);
  await db
    .insertInto('jobs')
    .values({
      id,
      org_id: spec.orgId ?? null,
      type: spec.type,
      payload: toJson(spec.payload ?? null),
      status: 'pending',
      max_attempts: spec.maxAttempts ?? 5,
      run_at: spec.runAt ?? now,
      locked_until: null,
      locked_by: null,
      last_error: null,
      // Enqueued while a request is handled: its id follows the job into the worker's logs.
      request_id: requestOrigin()?.requestId ?? null,
      // …and, with traces on, its span: the job's run joins the request's trace (core/tracing.ts).
      trace_parent: activeTraceparent(currentRequest()),
      created_at: now,
      updated_at: now,
    })
    .execute();
  return id;
}

/** Thrown by a handler to be retried after a chosen delay rather than the default backoff. */
export class RetryJob extends Error {
  readonly delayMs: number;
  constructor(message: string, delayMs: number) {
    super(message);
    this.delayMs = delayMs;
  }
}

/** Thrown by a handler whose job can never succeed: the job goes dead at once. */
export class FatalJobError extends Error {}

/**
 * Thrown by a handler that found another run of its job ahead of it (its lease expired and another
 * worker took the job over, or a step it meant to commit was already committed by that run). Its
 * uncommitted step is rolled back; the job is not failed for it and no attempt is spent.
 */
export class LeaseLost extends Error {
  constructor(message = 'another worker took this job over') {
    super(message);
  }
}

/** Wakes idle workers of this process; across processes they poll. */
export class JobSignal {
  private listeners = new Set<() => void>();
  wake(): void {
    for (const listener of this.listeners) listener();
  }
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/**
 * Of `values`, those that a live job (pending or running) of `type` names in its payload's `key`:
 * sweeps use it to find work whose job was lost (buried, deleted) and enqueue it again.
 */
export async function liveJobsNaming(
  db: DbOrTrx,
  engine: Engine,
  type: string,
  key: string,
  values: readonly string[],
): Promise<Set<string>> {
  if (values.length === 0) return new Set();
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) throw new Error(`not a payload key: ${key}`);
  const field =
    engine === 'postgres'
      ? sql<string>`(payload::jsonb ->> ${key})`
      : sql<string>`json_extract(payload, ${`$.${key}`})`;
  const rows = await db
    .selectFrom('jobs')
    .select(field.as('value'))
    .where('type', '=', type)
    .where('status', 'in', ['pending', 'running'])
    .where(field, 'in', [...values])
    .execute();
  return new Set(rows.map((r) => r.value));
}
