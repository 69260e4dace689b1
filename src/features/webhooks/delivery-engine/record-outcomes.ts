import { PostgresAdapter, sql } from 'kysely';
import { isUniqueViolation, type Db, type Trx } from '../../../core/db/connect.ts';
import type { WebhookAttemptsTable } from '../../../core/db/schema.ts';
import { OPERATIONAL_EVENT_TYPES, publishEvent } from '../../../core/events/index.ts';
import { newId } from '../../../core/ids.ts';
import { nextDelayMs, shouldDisable } from '../delivery/pacing/schedule.ts';
import { batchInsert } from '../../../core/db/batch-insert.ts';
import {
  deleteSettledQueueRows,
  insertMessageRows,
  insertNewMessageRows,
  newMessageRow,
  settleHolds,
  type HeldMessage,
} from './message-store.ts';
import type { Insertable } from 'kysely';
import type { WebhookMessagesTable } from '../../../core/db/schema.ts';

/** Kept of a receiver's response in the attempt log. */
export const RESPONSE_LOG_CHARS = 1024;

export const ATTEMPT_COLUMNS = [
  'id',
  'org_id',
  'endpoint_id',
  'message_id',
  'attempt',
  'at',
  'ok',
  'status_code',
  'latency_ms',
  'response_body',
  'error_class',
] as const;
const insertAttemptBatch = batchInsert('webhook_attempts', ATTEMPT_COLUMNS);

/**
 * Inserts attempt rows: on PostgreSQL the whole batch as one statement (one JSON parameter); on
 * SQLite 100-row VALUES lists.
 */
export async function insertAttemptRows(db: Db | Trx, rows: readonly WebhookAttemptsTable[]): Promise<void> {
  const per = db.getExecutor().adapter instanceof PostgresAdapter ? Math.max(rows.length, 1) : 100;
  for (let i = 0; i < rows.length; i += per) await insertAttemptBatch(db, rows.slice(i, i + per));
}

/**
 * What the log keeps of a receiver's answer: its first characters, with NUL characters replaced
 * (PostgreSQL text cannot hold them: one such answer would fail its whole batch, again and again).
 */
const loggable = (body: string): string => body.slice(0, RESPONSE_LOG_CHARS).replaceAll('\u0000', '\uFFFD');

/** Moves messages this worker holds to `succeeded` after an attempt answered `status` at `at`. */
export async function markSucceeded(
  trx: Trx,
  workerId: string,
  ids: readonly string[],
  outcome: { status: number; at: number; now: number },
): Promise<void> {
  for (let i = 0; i < ids.length; i += 500) {
    await trx
      .updateTable('webhook_messages')
      .set({
        status: 'succeeded',
        attempts: sql<number>`attempts + 1`,
        total_attempts: sql<number>`total_attempts + 1`,
        last_status: outcome.status,
        last_attempt_at: outcome.at,
        locked_until: null,
        locked_by: null,
        updated_at: outcome.now,
      })
      .where('id', 'in', ids.slice(i, i + 500))
      .where('locked_by', '=', workerId)
      .execute();
  }
}

export interface AttemptOutcome {
  message: HeldMessage;
  /** Epoch ms (deps.clock) when the attempt started. */
  at: number;
  ok: boolean;
  status?: number;
  latencyMs: number;
  responseBody: string;
  errorClass?: string;
  retryAfterSeconds?: number;
  /** The receiver answered `webhook-delivery: abort-message`: no more retries. */
  abort?: boolean;
}

export interface RecordSummary {
  succeeded: number;
  retrying: number;
  exhausted: number;
  disabledEndpoints: string[];
}

/**
 * Writes a batch of attempt outcomes in one transaction (group commit): the attempt log, each
 * message's next state on the retry schedule, endpoint health (auto-disable after 5 days of
 * unbroken failure) and the operational events. A message whose lease this worker lost is
 * logged but not moved: its new holder decides.
 */
export async function recordOutcomes(
  db: Db,
  workerId: string,
  now: number,
  outcomes: readonly AttemptOutcome[],
  dropped: readonly HeldMessage[] = [],
): Promise<RecordSummary> {
  if (outcomes.length === 0 && dropped.length === 0)
    return { succeeded: 0, retrying: 0, exhausted: 0, disabledEndpoints: [] };
  // Held messages (no row yet, decision 0035 C) recorded here, their endpoint gone or not: their
  // holds move only once this transaction has committed.
  const settle = settleHolds([
    ...outcomes.filter((o) => o.message.hold).map((o) => o.message),
    ...dropped.filter((m) => m.hold),
  ]);
  // Held messages are inserted with a plain INSERT: on PostgreSQL `on conflict do nothing` costs
  // 6-11 µs more per row (a speculative insertion), as much again as the attempt's whole insert. A
  // conflict needs a re-fan-out after an expired lease racing its slow holder; then the batch is
  // written again, keeping the row already there.
  let summary: RecordSummary;
  try {
    summary = await writeOutcomes(db, workerId, now, outcomes, dropped, settle, false);
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    summary = await writeOutcomes(db, workerId, now, outcomes, dropped, settle, true);
  }
  await deleteSettledQueueRows(db, workerId, settle.committed());
  return summary;
}

async function writeOutcomes(
  db: Db,
  workerId: string,
  now: number,
  outcomes: readonly AttemptOutcome[],
  dropped: readonly HeldMessage[],
  settle: ReturnType<typeof settleHolds>,
  keepExisting: boolean,
): Promise<RecordSummary> {
  const summary: RecordSummary = { succeeded: 0, retrying: 0, exhausted: 0, disabledEndpoints: [] };
  const insertNew = keepExisting ? insertNewMessageRows : insertMessageRows;
  await db.transaction().execute(async (trx) => {
    // An endpoint deleted while its messages were in flight took its messages and log with it. On
    // PostgreSQL the endpoints stay locked against deletion until this batch commits (the log has no
    // foreign key, migration 0020): a delete waits, then removes what this batch wrote too.
    const endpointIds = [
      ...new Set([...outcomes.map((o) => o.message.endpointId), ...dropped.map((m) => m.endpointId)]),
    ];
    const existing = new Set<string>();
    const postgres = trx.getExecutor().adapter instanceof PostgresAdapter;
    for (let i = 0; i < endpointIds.length; i += 500) {
      const query = trx
        .selectFrom('webhook_endpoints')
        .select('id')
        .where('id', 'in', endpointIds.slice(i, i + 500));
      for (const row of await (postgres ? query.forKeyShare() : query).execute()) existing.add(row.id);
    }
    // Messages held without a row (decision 0035 C) are inserted in their final state below; their
    // events' queue rows go once none of their messages is held (an endpoint gone counts as recorded).
    const fresh = new Set(outcomes.filter((o) => o.message.hold).map((o) => o.message));
    const newRows: Insertable<WebhookMessagesTable>[] = [];
    outcomes = outcomes.filter((o) => existing.has(o.message.endpointId));
    const attempts: WebhookAttemptsTable[] = outcomes.map((o) => ({
      id: newId(o.at),
      org_id: o.message.orgId,
      endpoint_id: o.message.endpointId,
      message_id: o.message.id,
      attempt: o.message.totalAttempts + 1,
      at: o.at,
      ok: o.ok ? 1 : 0,
      status_code: o.status ?? null,
      latency_ms: Math.round(o.latencyMs),
      response_body: o.responseBody === '' ? null : loggable(o.responseBody),
      error_class: o.ok ? null : (o.errorClass ?? 'other'),
    }));
    await insertAttemptRows(trx, attempts);

    const successesByStatus = new Map<number, string[]>();
    const health = new Map<string, { ok: boolean; gone: boolean; firstFailure: number; orgId: string }>();
    for (const o of outcomes) {
      const h = health.get(o.message.endpointId) ?? {
        ok: false,
        gone: false,
        firstFailure: Number.MAX_SAFE_INTEGER,
        orgId: o.message.orgId,
      };
      const isFresh = fresh.has(o.message);
      if (o.ok) {
        h.ok = true;
        if (isFresh)
          newRows.push(
            newMessageRow(
              o.message,
              {
                status: 'succeeded',
                attempts: 1,
                total_attempts: 1,
                next_attempt_at: o.at,
                last_status: o.status ?? 200,
                last_attempt_at: o.at,
              },
              now,
            ),
          );
        else {
          const list = successesByStatus.get(o.status ?? 200) ?? [];
          list.push(o.message.id);
          successesByStatus.set(o.status ?? 200, list);
        }
        summary.succeeded += 1;
      } else {
        h.firstFailure = Math.min(h.firstFailure, o.at);
        // 410 Gone: the receiver says the endpoint no longer exists (Standard Webhooks: disable it).
        if (o.status === 410) h.gone = true;
        const delay = o.abort
          ? null
          : nextDelayMs(
              o.message.attempts + 1,
              o.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: o.retryAfterSeconds },
            );
        const base = {
          attempts: o.message.attempts + 1,
          total_attempts: o.message.totalAttempts + 1,
          last_status: o.status ?? null,
          last_attempt_at: o.at,
          locked_until: null,
          locked_by: null,
          updated_at: now,
        };
        const update =
          delay === null
            ? { ...base, status: 'failed' as const }
            : { ...base, status: 'pending' as const, next_attempt_at: now + delay };
        let moved = true;
        if (isFresh)
          newRows.push(
            newMessageRow(
              o.message,
              {
                status: update.status,
                attempts: update.attempts,
                total_attempts: update.total_attempts,
                next_attempt_at: delay === null ? o.at : now + delay,
                last_status: update.last_status,
                last_attempt_at: update.last_attempt_at,
              },
              now,
            ),
          );
        else {
          const result = await trx
            .updateTable('webhook_messages')
            .set(update)
            .where('id', '=', o.message.id)
            .where('locked_by', '=', workerId)
            .executeTakeFirst();
          moved = Number(result.numUpdatedRows) > 0;
        }
        if (delay === null && !o.abort && moved) {
          summary.exhausted += 1;
          // An exhaustion notice about an exhaustion notice would chain forever: stop at one level.
          if (!OPERATIONAL_EVENT_TYPES.has(o.message.eventType)) {
            await publishEvent(trx, now, {
              orgId: o.message.orgId,
              type: 'message.attempt.exhausted',
              actor: null,
              data: {
                message: {
                  id: o.message.id,
                  endpointId: o.message.endpointId,
                  eventId: o.message.eventId,
                  eventType: o.message.eventType,
                  attempts: o.message.totalAttempts + 1,
                  lastStatus: o.status ?? null,
                },
              },
            });
          }
        } else if (delay !== null) {
          summary.retrying += 1;
        }
      }
      health.set(o.message.endpointId, h);
    }
    await insertNew(trx, newRows);
    for (const [status, ids] of successesByStatus) {
      const at = Math.max(...outcomes.filter((o) => o.ok).map((o) => o.at));
      await markSucceeded(trx, workerId, ids, { status, at, now });
    }
    for (const [endpointId, h] of health) {
      if (h.ok) {
        await trx
          .updateTable('webhook_endpoints')
          .set({ failing_since: null })
          .where('id', '=', endpointId)
          .where('failing_since', 'is not', null)
          .execute();
        continue;
      }
      const row = await trx
        .selectFrom('webhook_endpoints')
        .select(['failing_since', 'disabled', 'url'])
        .where('id', '=', endpointId)
        .executeTakeFirst();
      if (!row || row.disabled === 1) continue;
      const since = row.failing_since ?? h.firstFailure;
      if (h.gone || shouldDisable(since, now)) {
        const reason = h.gone ? 'the receiver answered 410 Gone' : 'every delivery failed for 5 days';
        await trx
          .updateTable('webhook_endpoints')
          .set({ disabled: 1, disabled_reason: reason, failing_since: since, updated_at: now })
          .where('id', '=', endpointId)
          .execute();
        await publishEvent(trx, now, {
          orgId: h.orgId,
          type: 'endpoint.disabled',
          actor: null,
          data: { endpoint: { id: endpointId, url: row.url, failingSince: new Date(since).toISOString(), reason } },
        });
        summary.disabledEndpoints.push(endpointId);
      } else if (row.failing_since === null) {
        await trx.updateTable('webhook_endpoints').set({ failing_since: since }).where('id', '=', endpointId).execute();
      }
    }
    // Messages whose endpoint was disabled or removed meanwhile: not attempted, marked failed (recoverable).
    const droppedFresh = dropped.filter((m) => m.hold && existing.has(m.endpointId));
    await insertNew(
      trx,
      droppedFresh.map((m) =>
        newMessageRow(
          m,
          {
            status: 'failed',
            attempts: 0,
            total_attempts: 0,
            next_attempt_at: now,
            last_status: null,
            last_attempt_at: null,
          },
          now,
        ),
      ),
    );
    dropped = dropped.filter((m) => !m.hold);
    await settle.deleteDone(trx, workerId);
    for (let i = 0; i < dropped.length; i += 500) {
      await trx
        .updateTable('webhook_messages')
        .set({ status: 'failed', locked_until: null, locked_by: null, updated_at: now })
        .where(
          'id',
          'in',
          dropped.slice(i, i + 500).map((m) => m.id),
        )
        .where('locked_by', '=', workerId)
        .execute();
    }
  });
  return summary;
}
