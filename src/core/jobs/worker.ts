import { randomUUID } from 'node:crypto';
import { sql, type Selectable } from 'kysely';
import type { Clock } from '../clock.ts';
import type { Db, Engine } from '../db/connect.ts';
import type { JobsTable as JobsColumns } from '../db/schema.ts';

type JobsTable = Selectable<JobsColumns>;
import type { Log } from '../log.ts';
import type { Tracing } from '../tracing.ts';
import { FatalJobError, LeaseLost, RetryJob, type JobSignal } from './queue.ts';
import { payloadProblem, type JobHandlers } from './catalog.ts';
import { stripPaths } from '../recorded-error.ts';
import { outageOf } from '../outage.ts';

export interface ClaimedJob {
  id: string;
  orgId: string | null;
  type: string;
  payload: unknown;
  attempts: number;
  maxAttempts: number;
  /**
   * Aborted when the worker stops or this run lost its lease (reason LeaseLost: another worker may
   * run the job now): a handler that runs a child process kills it then, and one that works in
   * steps stops at its next step. Handlers that commit steps fence them too (see features/actions ›
   * ActionContext.commit).
   */
  signal: AbortSignal;
  /** Whether this run still holds the job (no other worker took it over): check before recording a failure. */
  stillHeld(): Promise<boolean>;
}

export type JobHandler = (job: ClaimedJob) => Promise<void>;

export interface WorkerOptions {
  db: Db;
  engine: Engine;
  clock: Clock;
  log: Log;
  signal: JobSignal;
  /** By job type: the catalog's typed handlers (src/workers.ts), or ad-hoc ones (this worker's own tests). */
  handlers: JobHandlers | Readonly<Record<string, JobHandler>>;
  concurrency?: number;
  pollMs?: number;
  leaseMs?: number;
  /** How often a running job's lease is renewed (default: a third of the lease). */
  heartbeatMs?: number;
  /** OpenTelemetry (core/tracing.ts): each run is a span of the trace of the request that enqueued it. */
  tracing?: Tracing;
  /**
   * How often an idle worker looks for due jobs that other processes enqueued (a one-row read of
   * the claim index), so it claims them within this many ms rather than at its next poll (pollMs,
   * the full claim). Without it, only this process's enqueuers wake it and the poll finds the rest.
   * (No LISTEN/NOTIFY: a notifying commit serializes every commit of the database, decision 0022.)
   */
  probeMs?: number;
}

export interface Worker {
  /** Stops claiming; running jobs get `graceMs` to finish, then are aborted and their leases released. */
  stop(graceMs?: number): Promise<void>;
  /** Runs until no due job is left (tests use it to drive work deterministically). */
  drain(): Promise<number>;
}

/** The probe interval (WorkerOptions.probeMs) of the workers of `serve` and `worker` on PostgreSQL. */
export const JOB_PROBE_MS = 250;

/** How far back "when was this organization last served" looks (older history changes no order). */
const SERVED_WINDOW_MS = 10 * 60_000;

/**
 * Backoff while a dependency is down (the database or the blob store): 1 s, 2 s, 4 s … capped at
 * 1 min, ±20 %. Such a failure spends no attempt, so a job outlasts an outage of any length and
 * runs within a minute of its end.
 */
export function outageBackoffMs(consecutive: number): number {
  const base = Math.min(60_000, 1000 * 2 ** Math.max(0, consecutive - 1));
  return Math.round(base * (0.8 + Math.random() * 0.4));
}

/** Default backoff: 1 s, 2 s, 4 s … capped at 10 min, with ±20 % jitter. */
export function backoffMs(attempt: number): number {
  const base = Math.min(600_000, 1000 * 2 ** Math.max(0, attempt - 1));
  return Math.round(base * (0.8 + Math.random() * 0.4));
}

/**
 * Claims due jobs with a lease, runs their handlers, and retries or buries them. A job whose
 * worker died is picked up again when its lease runs out, so every job runs at least once.
 */
export function startWorker(options: WorkerOptions): Worker {
  const { db, engine, clock, log, signal, tracing } = options;
  // The one widening of the typed handlers: runOne checks each payload against the catalog before calling one.
  const handlers = options.handlers as Readonly<Record<string, JobHandler | undefined>>;
  const concurrency = options.concurrency ?? 4;
  // In-process enqueuers wake the worker at once (deps.jobs.wake()); polling only covers jobs that
  // other processes enqueue or that come due later, so it need not hammer an idle database.
  const pollMs = options.pollMs ?? 1000;
  const leaseMs = options.leaseMs ?? 60_000;
  const heartbeatMs = Math.max(10, options.heartbeatMs ?? Math.floor(leaseMs / 3));
  const workerId = randomUUID();
  const types = Object.keys(handlers);
  let running = true;
  let active = 0;
  /** A tick (claims and the runs they started) is under way. */
  let ticking = false;
  let timer: NodeJS.Timeout | undefined;
  let loop: Promise<void> = Promise.resolve();
  let pending = false;
  const aborts = new Set<AbortController>();
  /** Consecutive outage failures of a job in this process (its backoff); forgotten on any other outcome. */
  const outages = new Map<string, number>();

  /**
   * Claims due jobs fairly across organizations. Each organization's due jobs are numbered oldest
   * first (its turn), plus one for every job it already has running; the lowest numbers go first,
   * and among equals the organization served longest ago (its latest claimed or finished job),
   * then the oldest job. So one organization's backlog (a burst of share mails, a row of slow
   * renditions) never holds back another's: that job is claimed at the next free slot, and the
   * backlog continues round-robin with it. The due condition is repeated on the locked row so
   * PostgreSQL re-checks it on a row another worker claimed meanwhile.
   */
  const claim = async (limit: number): Promise<JobsTable[]> => {
    if (types.length === 0 || limit <= 0) return [];
    const now = clock.now();
    const lock = engine === 'postgres' ? sql`for update of j skip locked` : sql``;
    const due = (t: string) => sql`${sql.ref(`${t}.type`)} in (${sql.join(types)})
      and ((${sql.ref(`${t}.status`)} = 'pending' and ${sql.ref(`${t}.run_at`)} <= ${now}) or (${sql.ref(`${t}.status`)} = 'running' and ${sql.ref(`${t}.locked_until`)} < ${now}))`;
    const result = await sql<JobsTable>`
      update jobs set status = 'running', locked_until = ${now + leaseMs}, locked_by = ${workerId},
        attempts = attempts + 1, updated_at = ${now}
      where id in (
        select j.id from jobs j
        join (select d.id, row_number() over (partition by d.org_id order by d.run_at, d.id) as turn from jobs d where ${due('d')}) q on q.id = j.id
        left join (
          select r.org_id as org, sum(case when r.status = 'running' and r.locked_until >= ${now} then 1 else 0 end) as busy, max(r.updated_at) as served
          from jobs r
          where r.status <> 'pending' and (r.status = 'running' or r.updated_at >= ${now - SERVED_WINDOW_MS})
            and r.org_id in (select d2.org_id from jobs d2 where ${due('d2')})
          group by r.org_id
        ) o on o.org = j.org_id
        where ${due('j')}
        order by q.turn + coalesce(o.busy, 0), coalesce(o.served, 0), j.run_at, j.id
        limit ${limit} ${lock}
      )
      returning *`.execute(db);
    return result.rows;
  };

  /** Only the run that holds the job's lease (this worker, this attempt) may record its outcome. */
  const finish = async (row: JobsTable, error: unknown): Promise<void> => {
    const now = clock.now();
    const mine = db
      .updateTable('jobs')
      .where('id', '=', row.id)
      .where('locked_by', '=', workerId)
      .where('attempts', '=', row.attempts)
      .where('status', '=', 'running');
    if (error === undefined) {
      outages.delete(row.id);
      await mine.set({ status: 'done', locked_until: null, last_error: null, updated_at: now }).execute();
      return;
    }
    if (error instanceof LeaseLost) {
      // Another run got ahead: this one spent no attempt; the job is claimable again at once, and
      // its next run resumes from what was committed.
      await mine
        .set((eb) => ({
          status: 'pending',
          run_at: now,
          attempts: eb('attempts', '-', 1),
          locked_until: null,
          locked_by: null,
          updated_at: now,
        }))
        .execute();
      log.info(
        { jobId: row.id, type: row.type, requestId: row.request_id ?? undefined },
        'job run stopped: another run of it is ahead',
      );
      return;
    }
    const outage = error === undefined ? undefined : outageOf(error);
    if (outage) {
      // The database or the blob store is down: not the job's fault. No attempt is spent, so the
      // job is still there, pending, when the outage ends (renditions never stay "pending" for good).
      const consecutive = (outages.get(row.id) ?? 0) + 1;
      outages.set(row.id, consecutive);
      await mine
        .set((eb) => ({
          status: 'pending',
          run_at: now + outageBackoffMs(consecutive),
          attempts: eb('attempts', '-', 1),
          locked_until: null,
          locked_by: null,
          last_error: stripPaths(outage.message).slice(0, 2000),
          updated_at: now,
        }))
        .execute();
      log.warn(
        { jobId: row.id, type: row.type, requestId: row.request_id ?? undefined, dependency: outage.dependency },
        'job waits for a dependency outage',
      );
      return;
    }
    outages.delete(row.id);
    const message = error instanceof Error ? error.message : String(error);
    const dead = error instanceof FatalJobError || (row.attempts >= row.max_attempts && !(error instanceof RetryJob));
    const delay = error instanceof RetryJob ? error.delayMs : backoffMs(row.attempts);
    await mine
      .set({
        status: dead ? 'dead' : 'pending',
        run_at: dead ? row.run_at : now + delay,
        locked_until: null,
        locked_by: null,
        last_error: stripPaths(message).slice(0, 2000),
        updated_at: now,
      })
      .execute();
    if (dead)
      log.warn(
        { jobId: row.id, type: row.type, requestId: row.request_id ?? undefined, error: message },
        'job failed for good',
      );
    else
      log.info(
        {
          jobId: row.id,
          type: row.type,
          requestId: row.request_id ?? undefined,
          attempt: row.attempts,
          error: message,
        },
        'job failed, will retry',
      );
  };

  /**
   * Renews the lease of a running job every heartbeatMs, so a job longer than the lease is not
   * taken over while its worker lives. When the renewal finds the job no longer ours (the lease ran
   * out during a stall and another worker claimed it), the run is told to stop.
   */
  const heartbeat = (row: JobsTable, controller: AbortController): (() => void) => {
    let busy = false;
    const timer = setInterval(() => {
      if (busy || controller.signal.aborted) return;
      busy = true;
      const now = clock.now();
      db.updateTable('jobs')
        .set({ locked_until: now + leaseMs })
        .where('id', '=', row.id)
        .where('locked_by', '=', workerId)
        .where('attempts', '=', row.attempts)
        .where('status', '=', 'running')
        .executeTakeFirst()
        .then((result) => {
          if (Number(result.numUpdatedRows) === 0) controller.abort(new LeaseLost());
        })
        .catch((error: unknown) => log.warn({ err: error, jobId: row.id }, 'could not renew job lease'))
        .finally(() => {
          busy = false;
        });
    }, heartbeatMs);
    timer.unref();
    return () => clearInterval(timer);
  };

  const runOne = async (row: JobsTable): Promise<void> => {
    const handler = handlers[row.type];
    let failure: unknown;
    // A long job (a video transcode, a bulk edit) keeps its lease while it runs (heartbeat). If the
    // renewal finds the job taken over, or the worker stops, the handler's signal aborts.
    const controller = new AbortController();
    aborts.add(controller);
    const stopHeartbeat = heartbeat(row, controller);
    try {
      if (!handler) throw new FatalJobError(`No handler for job type ${row.type}`);
      const payload: unknown = JSON.parse(row.payload);
      // The handlers are typed by the job catalog; a payload that does not fit can never succeed.
      const problem = await payloadProblem(row.type, payload);
      if (problem !== null)
        throw new FatalJobError(`Payload of job type ${row.type} does not match the job catalog: ${problem}`);
      const job: ClaimedJob = {
        id: row.id,
        orgId: row.org_id,
        type: row.type,
        payload,
        attempts: row.attempts,
        maxAttempts: row.max_attempts,
        signal: controller.signal,
        stillHeld: async () =>
          (await db
            .selectFrom('jobs')
            .select('id')
            .where('id', '=', row.id)
            .where('locked_by', '=', workerId)
            .where('attempts', '=', row.attempts)
            .where('status', '=', 'running')
            .executeTakeFirst()) !== undefined,
      };
      if (tracing)
        await tracing.runJob(
          {
            id: row.id,
            type: row.type,
            attempt: row.attempts,
            requestId: row.request_id ?? null,
            traceparent: row.trace_parent ?? null,
          },
          () => handler(job),
        );
      else await handler(job);
    } catch (error) {
      failure = error ?? new Error('job failed');
    } finally {
      stopHeartbeat();
      aborts.delete(controller);
    }
    // A run told to stop (its lease lost, or the worker stopping) releases the job whatever its
    // handler threw on the way out: that is not a failure of the job.
    if (failure !== undefined && controller.signal.reason instanceof LeaseLost) failure = controller.signal.reason;
    try {
      await finish(row, failure);
    } catch (error) {
      log.error({ err: error, jobId: row.id }, 'could not record job outcome');
    }
  };

  const tick = async (): Promise<number> => {
    ticking = true;
    try {
      return await claimAndRun();
    } finally {
      ticking = false;
    }
  };

  const claimAndRun = async (): Promise<number> => {
    let started = 0;
    for (;;) {
      if (!running) return started;
      const rows = await claim(concurrency - active);
      if (rows.length === 0) return started;
      started += rows.length;
      active += rows.length;
      await Promise.all(
        rows.map((row) =>
          runOne(row).finally(() => {
            active -= 1;
          }),
        ),
      );
    }
  };

  const schedule = (delay: number) => {
    if (!running) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      loop = loop.then(async () => {
        try {
          await tick();
        } catch (error) {
          log.error({ err: error }, 'job worker tick failed');
        }
        schedule(pollMs);
      });
    }, delay);
  };

  const wake = () => {
    if (!pending) {
      pending = true;
      queueMicrotask(() => {
        pending = false;
        schedule(0);
      });
    }
  };
  const unsubscribe = signal.subscribe(wake);

  // The probe: while idle, is any job of ours due? Then a tick claims it now.
  let probing = false;
  const probe = async () => {
    if (!running || ticking || probing || types.length === 0) return;
    probing = true;
    try {
      const due = await db
        .selectFrom('jobs')
        .select('id')
        .where('status', '=', 'pending')
        .where('run_at', '<=', clock.now())
        .where('type', 'in', types)
        .limit(1)
        .executeTakeFirst();
      if (due && running && !ticking) wake();
    } catch (error) {
      // The next poll tells; an outage is logged by the tick that meets it.
      log.debug({ err: error }, 'job probe failed');
    } finally {
      probing = false;
    }
  };
  const probeTimer = options.probeMs === undefined ? undefined : setInterval(() => void probe(), options.probeMs);
  probeTimer?.unref();
  schedule(0);

  return {
    async stop(graceMs = 0) {
      running = false;
      clearTimeout(timer);
      clearInterval(probeTimer);
      unsubscribe();
      // Jobs running now may finish within the grace period; then they are told to stop, and
      // their leases are released (the job is claimable again at once, no attempt spent).
      let grace: NodeJS.Timeout | undefined;
      await Promise.race([
        loop,
        new Promise<void>((resolve) => {
          grace = setTimeout(resolve, graceMs);
        }),
      ]);
      clearTimeout(grace);
      for (const a of aborts) a.abort(new LeaseLost('the worker is stopping'));
      await loop;
    },
    async drain() {
      let total = 0;
      await (loop = loop.then(async () => {
        for (;;) {
          const n = await tick();
          total += n;
          if (n === 0) break;
        }
      }));
      return total;
    },
  };
}
