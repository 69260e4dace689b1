import type { Selectable } from 'kysely';
import type { Deps } from '../../deps.ts';
import { audit } from '../../core/audit.ts';
import { requirePrivileges } from '../../core/authz/authorize.ts';
import type { Principal } from '../../core/authz/principal.ts';
import type { WebhookAttemptsTable, WebhookMessagesTable } from '../../core/db/schema.ts';
import { eventsPublished } from '../../core/events/index.ts';
import { conflict, invalidField, notFound } from '../../core/http/errors.ts';
import { isUuid } from '../../core/ids.ts';
import { findEndpoint } from './endpoints/endpoints.repo.ts';
import { unrecordedMessages, type UnrecordedMessage } from './delivery-engine/message-store.ts';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function toMessage(row: Selectable<WebhookMessagesTable>) {
  const open = row.status === 'pending' || row.status === 'delivering';
  return {
    id: row.id,
    eventId: row.event_id,
    eventType: row.event_type,
    status: row.status,
    attempts: row.total_attempts,
    nextAttemptDate: open ? iso(row.next_attempt_at) : null,
    lastStatusCode: row.last_status,
    lastAttemptDate: iso(row.last_attempt_at),
    createdDate: new Date(row.created_at).toISOString(),
  };
}

/**
 * A message a worker is delivering for the first time, before its first outcome writes its row
 * (decision 0035 C): `delivering`, no attempt recorded yet.
 */
function toUnrecordedMessage(m: UnrecordedMessage) {
  return {
    id: m.id,
    eventId: m.eventId,
    eventType: m.eventType,
    status: 'delivering' as const,
    attempts: 0,
    nextAttemptDate: iso(m.createdAt),
    lastStatusCode: null,
    lastAttemptDate: null,
    createdDate: new Date(m.createdAt).toISOString(),
  };
}

function toAttempt(row: Selectable<WebhookAttemptsTable>) {
  return {
    id: row.id,
    messageId: row.message_id,
    attempt: row.attempt,
    date: new Date(row.at).toISOString(),
    success: row.ok === 1,
    statusCode: row.status_code,
    latencyMs: row.latency_ms,
    responseBody: row.response_body,
    errorClass: row.error_class,
  };
}

async function ownEndpoint(deps: Deps, principal: Principal, id: string) {
  requirePrivileges(principal, 'webhooks_administration');
  const row = await findEndpoint(deps.db, principal.orgId, id);
  if (!row) throw notFound('Webhook endpoint');
  return row;
}

function cursor(value: string | undefined, field: string): string | undefined {
  if (value !== undefined && !isUuid(value)) throw invalidField(field, 'is not a cursor this server issued');
  return value;
}

/** Newest first; `after` continues from a previous page's nextCursor. */
export async function listMessages(
  deps: Deps,
  principal: Principal,
  endpointId: string,
  query: { after?: string; limit?: number; status?: WebhookMessagesTable['status']; eventType?: string },
) {
  const endpoint = await ownEndpoint(deps, principal, endpointId);
  const limit = query.limit ?? 50;
  const after = cursor(query.after, 'query.after');
  // Messages in flight for the first time have no row yet: read before the rows, so that one
  // recorded in between is found by the second read (and then listed once, from its row).
  const unrecorded =
    query.status === undefined || query.status === 'delivering'
      ? (await unrecordedMessages(deps.db, endpoint)).filter(
          (m) =>
            (after === undefined || m.id < after) && (query.eventType === undefined || m.eventType === query.eventType),
        )
      : [];
  let q = deps.db
    .selectFrom('webhook_messages')
    .selectAll()
    .where('org_id', '=', principal.orgId)
    .where('endpoint_id', '=', endpointId);
  if (after) q = q.where('id', '<', after);
  if (query.status) q = q.where('status', '=', query.status);
  if (query.eventType) q = q.where('event_type', '=', query.eventType);
  const rows = await q.orderBy('id', 'desc').limit(limit).execute();
  const recorded = new Set(rows.map((r) => r.id));
  const messages = [...rows.map(toMessage), ...unrecorded.filter((m) => !recorded.has(m.id)).map(toUnrecordedMessage)]
    .sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
    .slice(0, limit);
  return { messages, pagination: { nextCursor: messages.length === limit ? messages.at(-1)!.id : null } };
}

export async function listAttempts(
  deps: Deps,
  principal: Principal,
  endpointId: string,
  query: { after?: string; limit?: number; messageId?: string },
) {
  await ownEndpoint(deps, principal, endpointId);
  const limit = query.limit ?? 50;
  let q = deps.db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where('org_id', '=', principal.orgId)
    .where('endpoint_id', '=', endpointId);
  const after = cursor(query.after, 'query.after');
  if (after) q = q.where('id', '<', after);
  if (query.messageId) q = q.where('message_id', '=', query.messageId);
  const rows = await q.orderBy('id', 'desc').limit(limit).execute();
  return { attempts: rows.map(toAttempt), pagination: { nextCursor: rows.length === limit ? rows.at(-1)!.id : null } };
}

/** Sends one message again now, with a fresh retry schedule and the same webhook-id. */
export async function resendMessage(
  deps: Deps,
  principal: Principal,
  endpointId: string,
  messageId: string,
  ip: string,
) {
  const endpoint = await ownEndpoint(deps, principal, endpointId);
  if (endpoint.disabled === 1) throw conflict('The endpoint is disabled; enable it first', 'path.id');
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    const row = await trx
      .selectFrom('webhook_messages')
      .select(['id', 'status'])
      .where('org_id', '=', principal.orgId)
      .where('endpoint_id', '=', endpointId)
      .where('id', '=', messageId)
      .executeTakeFirst();
    if (!row) {
      // In flight for the first time, before its first outcome writes its row (decision 0035 C).
      if ((await unrecordedMessages(trx, endpoint)).some((m) => m.id === messageId))
        throw conflict(
          'The message is being delivered for the first time; its outcome is not recorded yet',
          'path.messageId',
        );
      throw notFound('Message');
    }
    if (row.status === 'delivering' || row.status === 'pending')
      throw conflict('The message is already queued for delivery');
    await trx
      .updateTable('webhook_messages')
      .set({
        status: 'pending',
        attempts: 0,
        next_attempt_at: now,
        locked_until: null,
        locked_by: null,
        updated_at: now,
      })
      .where('id', '=', messageId)
      .execute();
    await audit(trx, {
      orgId: principal.orgId,
      at: now,
      actorId: principal.userId,
      action: 'webhook_message.resent',
      targetType: 'webhook_message',
      targetId: messageId,
      ip,
    });
  });
  eventsPublished.wake();
  return { id: messageId, status: 'pending' as const };
}

function toMs(value: string | number, field: string): number {
  const ms = typeof value === 'number' ? value : Date.parse(value);
  if (!Number.isFinite(ms)) throw invalidField(field, 'is not a date-time');
  return ms;
}

/** Requeues every failed message of the endpoint created in [since, until). */
export async function recoverMessages(
  deps: Deps,
  principal: Principal,
  endpointId: string,
  input: { since: string | number; until?: string | number; dryRun?: boolean },
  ip: string,
) {
  const endpoint = await ownEndpoint(deps, principal, endpointId);
  const since = toMs(input.since, 'body.since');
  const until = input.until === undefined ? Number.MAX_SAFE_INTEGER : toMs(input.until, 'body.until');
  if (until <= since) throw invalidField('body.until', 'must be after since');
  const failed = () =>
    deps.db
      .selectFrom('webhook_messages')
      .where('org_id', '=', principal.orgId)
      .where('endpoint_id', '=', endpointId)
      .where('status', '=', 'failed')
      .where('created_at', '>=', since)
      .where('created_at', '<', until);
  if (input.dryRun) {
    const { n } = await failed()
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return { recovered: Number(n) };
  }
  if (endpoint.disabled === 1) throw conflict('The endpoint is disabled; enable it first', 'path.id');
  const now = deps.clock.now();
  const recovered = await deps.db.transaction().execute(async (trx) => {
    const result = await trx
      .updateTable('webhook_messages')
      .set({
        status: 'pending',
        attempts: 0,
        next_attempt_at: now,
        locked_until: null,
        locked_by: null,
        updated_at: now,
      })
      .where('org_id', '=', principal.orgId)
      .where('endpoint_id', '=', endpointId)
      .where('status', '=', 'failed')
      .where('created_at', '>=', since)
      .where('created_at', '<', until)
      .executeTakeFirst();
    const n = Number(result.numUpdatedRows);
    await audit(trx, {
      orgId: principal.orgId,
      at: now,
      actorId: principal.userId,
      action: 'webhook_message.recovered',
      targetType: 'webhook_endpoint',
      targetId: endpointId,
      ip,
      data: { since, until: input.until === undefined ? null : until, count: n },
    });
    return n;
  });
  eventsPublished.wake();
  return { recovered };
}
