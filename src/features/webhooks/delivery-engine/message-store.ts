import { PostgresAdapter, sql, type RawBuilder, type Selectable } from 'kysely';
import type { Db, Engine, Trx } from '../../../core/db/connect.ts';
import { fromJson } from '../../../core/db/json.ts';
import type { Insertable } from 'kysely';
import type { WebhookEndpointsTable, WebhookMessagesTable } from '../../../core/db/schema.ts';
import { derivedId } from '../../../core/ids.ts';
import { batchInsert } from '../../../core/db/batch-insert.ts';
import { matchesEventType } from '../event-types.ts';

export type EndpointRow = Selectable<WebhookEndpointsTable>;

/** A message this worker holds a lease on, with what it takes to send it. */
export interface HeldMessage {
  id: string;
  orgId: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  /** Attempts in the current round, before this one. */
  attempts: number;
  totalAttempts: number;
  body: string;
  /**
   * Set while the message has no row (decision 0035 C): its event's queue row is leased to this
   * worker, and the outcome commit inserts the message in its final state.
   */
  hold?: QueueHold;
}

/** An event's leased queue row and how many of its messages this worker still holds unrecorded. */
export interface QueueHold {
  createdAt: number;
  eventId: string;
  remaining: number;
}

const CHUNK = 200;

const MESSAGE_COLUMNS = [
  'id',
  'org_id',
  'endpoint_id',
  'event_id',
  'event_type',
  'status',
  'attempts',
  'total_attempts',
  'next_attempt_at',
  'locked_until',
  'locked_by',
  'last_status',
  'last_attempt_at',
  'created_at',
  'updated_at',
] as const;
const insertMessageBatch = batchInsert('webhook_messages', MESSAGE_COLUMNS);
const insertNewMessageBatch = batchInsert('webhook_messages', MESSAGE_COLUMNS, {
  ignoreConflictOn: ['event_id', 'endpoint_id'],
});

/**
 * Inserts message rows (every column given): on PostgreSQL the whole batch as one statement (one
 * JSON parameter); on SQLite 100-row VALUES lists (its parameter limit).
 */
/**
 * The id of the message of an event to an endpoint, its `webhook-id`: a UUIDv7 with the event's time
 * and the rest from SHA-256(event id ‖ endpoint id) (decision 0035). Whoever writes the message, and
 * whenever, writes this id: a delivery re-sent after a crash carries the same `webhook-id`.
 */
export const messageIdFor = (eventId: string, eventCreatedAt: number, endpointId: string): string =>
  derivedId(eventCreatedAt, eventId + endpointId);

export async function insertMessageRows(
  db: Db | Trx,
  rows: readonly Insertable<WebhookMessagesTable>[],
): Promise<void> {
  const per = db.getExecutor().adapter instanceof PostgresAdapter ? Math.max(rows.length, 1) : 100;
  for (let i = 0; i < rows.length; i += per) await insertMessageBatch(db, rows.slice(i, i + per));
}

/**
 * Inserts the rows of messages held without one (at their outcome, or given back unsent); a row
 * already there for the same event and endpoint (a re-fan-out after an expired lease that raced a
 * slow holder) is kept as it is.
 */
export async function insertNewMessageRows(
  db: Db | Trx,
  rows: readonly Insertable<WebhookMessagesTable>[],
): Promise<void> {
  const per = db.getExecutor().adapter instanceof PostgresAdapter ? Math.max(rows.length, 1) : 100;
  for (let i = 0; i < rows.length; i += per) await insertNewMessageBatch(db, rows.slice(i, i + per));
}

/**
 * What recording some held messages does to their events' holds: the queue rows (leased to this
 * worker) of the events none of whose messages would be held unrecorded any more are deleted in
 * the caller's transaction; `committed` counts the messages off their holds, to be called only once
 * that transaction has committed (if it fails, nothing moves: the messages' events keep their
 * queue rows, fanned out again when the lease runs out). Returns the holds that reached zero
 * without their row being deleted here (a concurrent settle of the same event committed first),
 * whose rows the caller deletes after.
 */
export function settleHolds(recorded: readonly HeldMessage[]) {
  const counts = new Map<QueueHold, number>();
  for (const m of recorded) if (m.hold) counts.set(m.hold, (counts.get(m.hold) ?? 0) + 1);
  const done = [...counts].filter(([hold, n]) => hold.remaining - n === 0).map(([hold]) => hold);
  return {
    deleteDone: (trx: Trx, workerId: string) => deleteQueueRows(trx, workerId, done),
    committed(): QueueHold[] {
      const late: QueueHold[] = [];
      for (const m of recorded) m.hold = undefined;
      for (const [hold, n] of counts) {
        hold.remaining -= n;
        if (hold.remaining === 0 && !done.includes(hold)) late.push(hold);
      }
      return late;
    },
  };
}

/** Deletes the queue rows of holds that reached zero outside the transaction that recorded them. */
export async function deleteSettledQueueRows(db: Db, workerId: string, holds: readonly QueueHold[]): Promise<void> {
  if (holds.length > 0) await db.transaction().execute((trx) => deleteQueueRows(trx, workerId, holds));
}

/**
 * Deletes queue rows by key. On PostgreSQL each key is looked up in the primary key (a lateral
 * subquery with `limit 1` is not flattened into a join) and the rows deleted by `ctid`: given the
 * keys as a list beside `locked_by = …`, the planner estimated one leased row (the column's
 * statistics are mostly NULL), scanned the whole queue and compared each leased row with every key
 * (250 keys × 500 leased rows in 50 ms on this machine, against about 1 ms by lookup).
 */
async function deleteQueueRows(trx: Trx, workerId: string, holds: readonly QueueHold[]): Promise<void> {
  const postgres = trx.getExecutor().adapter instanceof PostgresAdapter;
  for (const part of chunks(holds, 400)) {
    const keys = sql.join(part.map((h) => sql`(cast(${h.createdAt} as bigint), ${h.eventId})`));
    if (postgres)
      await sql`delete from event_fanout_queue where ctid = any(array(
        select l.ctid from (values ${keys}) k (created_at, event_id) cross join lateral (
          select q.ctid from event_fanout_queue q
          where q.created_at = k.created_at and q.event_id = k.event_id and q.locked_by = ${workerId} limit 1) l))`.execute(
        trx,
      );
    else
      await sql`delete from event_fanout_queue where (created_at, event_id) in (values ${keys}) and locked_by = ${workerId}`.execute(
        trx,
      );
  }
}

/** The row of a message held without one, in the state given. */
export function newMessageRow(
  m: HeldMessage,
  state: Pick<
    Insertable<WebhookMessagesTable>,
    'status' | 'attempts' | 'total_attempts' | 'next_attempt_at' | 'last_status' | 'last_attempt_at'
  >,
  now: number,
): Insertable<WebhookMessagesTable> {
  return {
    id: m.id,
    org_id: m.orgId,
    endpoint_id: m.endpointId,
    event_id: m.eventId,
    event_type: m.eventType,
    status: state.status,
    attempts: state.attempts,
    total_attempts: state.total_attempts,
    next_attempt_at: state.next_attempt_at,
    locked_until: null,
    locked_by: null,
    last_status: state.last_status,
    last_attempt_at: state.last_attempt_at,
    created_at: m.hold!.createdAt,
    updated_at: now,
  };
}

function chunks<T>(items: readonly T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Whether a read-only query finds a row: the peek before a write that would otherwise find nothing. */
async function anyRow(db: Db, query: RawBuilder<unknown>): Promise<boolean> {
  return (await query.execute(db)).rows.length > 0;
}

const lockClause = (engine: Engine) => (engine === 'postgres' ? sql`for update skip locked` : sql``);

export async function loadEndpoints(db: Db | Trx, ids: readonly string[]): Promise<Map<string, EndpointRow>> {
  const out = new Map<string, EndpointRow>();
  for (const part of chunks([...new Set(ids)])) {
    for (const row of await db.selectFrom('webhook_endpoints').selectAll().where('id', 'in', part).execute())
      out.set(row.id, row);
  }
  return out;
}

type QueuedEvent = { id: string; org_id: string; type: string; body: string; created_at: number; relet: unknown };

/**
 * Leases up to `limit` events of the fan-out queue (oldest first, skipping rows another worker's
 * lease still covers) with their rows, in the caller's transaction. `relet` is set for a row whose
 * earlier lease ran out (its holder died before recording every message).
 */
async function leaseQueuedEvents(
  trx: Trx,
  engine: Engine,
  limit: number,
  now: number,
  workerId: string,
  until: number,
): Promise<QueuedEvent[]> {
  if (engine === 'postgres') {
    // The leased rows are updated by `ctid = any(array(…))`, a TID scan: joined to the picked rows by
    // ctid, the planner hashed the whole queue (a sequential scan of every queued event, the backlog
    // too) on each fan-out.
    return (
      await sql<QueuedEvent>`
      with picked as (
        select ctid, event_id, locked_until from event_fanout_queue where locked_until is null or locked_until < ${now}
        order by created_at, event_id limit ${limit} for update skip locked),
      taken as (
        update event_fanout_queue q set locked_by = ${workerId}, locked_until = ${until}
        where q.ctid = any(array(select ctid from picked))
        returning q.event_id)
      select e.id, e.org_id, e.type, e.body, e.created_at, picked.locked_until is not null as relet
      from taken join picked on picked.event_id = taken.event_id join events e on e.id = taken.event_id
      order by e.created_at, e.id`.execute(trx)
    ).rows;
  }
  const rows = (
    await sql<QueuedEvent & { queue_row: number }>`
    select q.rowid as queue_row, q.locked_until is not null as relet, e.id, e.org_id, e.type, e.body, e.created_at
    from event_fanout_queue q join events e on e.id = q.event_id
    where q.locked_until is null or q.locked_until < ${now}
    order by q.created_at, q.event_id limit ${limit}`.execute(trx)
  ).rows;
  for (const part of chunks(
    rows.map((r) => r.queue_row),
    500,
  ))
    await sql`update event_fanout_queue set locked_by = ${workerId}, locked_until = ${until} where rowid in (${sql.join(part)})`.execute(
      trx,
    );
  return rows;
}

/**
 * Turns committed, not yet fanned-out events (those in `event_fanout_queue`) into one message per
 * matching enabled endpoint of the same organization, in one transaction (so a crash never loses
 * or doubles the fan-out). Messages of endpoints with spare capacity (`canTake`) are inserted
 * already leased to this worker and returned, which saves a claim round trip on the hot path.
 */
export async function fanOut(
  db: Db,
  engine: Engine,
  now: number,
  options: { workerId: string; leaseMs: number; limit: number; canTake: (endpoint: EndpointRow) => boolean },
) {
  const nothing = () => ({ events: 0, held: [] as HeldMessage[], endpoints: new Map<string, EndpointRow>() });
  if (options.limit <= 0) return nothing();
  // Idle, the loop asks every poll interval: a read of the queue's first key answers it without a
  // write transaction (on SQLite `begin immediate` takes the write lock and, with write turns,
  // waits for the background thread's write; decision 0035).
  if (
    !(await anyRow(
      db,
      sql`select 1 as one from event_fanout_queue where locked_until is null or locked_until < ${now} limit 1`,
    ))
  )
    return nothing();
  return db.transaction().execute(async (trx) => {
    const events = await leaseQueuedEvents(trx, engine, options.limit, now, options.workerId, now + options.leaseMs);
    if (events.length === 0) return nothing();
    // Fanned out again after a lease ran out: the messages its holder recorded keep their rows.
    const relet = events.filter((e) => Boolean(Number(e.relet)) || e.relet === true).map((e) => e.id);
    const recorded = new Set<string>();
    for (const part of chunks(relet))
      for (const m of await trx
        .selectFrom('webhook_messages')
        .select(['event_id', 'endpoint_id'])
        .where('event_id', 'in', part)
        .execute())
        recorded.add(`${m.event_id}\u0000${m.endpoint_id}`);
    const orgIds = [...new Set(events.map((e) => e.org_id))];
    // Locked against deletion until the messages are in (on PostgreSQL they have no foreign key).
    const query = trx
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('org_id', 'in', orgIds)
      .where('disabled', '=', 0);
    const endpoints = await (engine === 'postgres' ? query.forKeyShare() : query).execute();
    const byOrg = new Map<string, { row: EndpointRow; types: string[] }[]>();
    for (const row of endpoints) {
      const list = byOrg.get(row.org_id) ?? [];
      list.push({ row, types: fromJson<string[]>(row.event_types, []) });
      byOrg.set(row.org_id, list);
    }
    const rows: Insertable<WebhookMessagesTable>[] = [];
    const held: HeldMessage[] = [];
    const touched = new Map<string, EndpointRow>();
    const done: QueueHold[] = [];
    for (const event of events) {
      const hold: QueueHold = { createdAt: Number(event.created_at), eventId: event.id, remaining: 0 };
      for (const { row, types } of byOrg.get(event.org_id) ?? []) {
        // An endpoint hears of what happened after it subscribed, not of an older backlog that
        // happened to be fanned out late.
        if (row.created_at > event.created_at || !matchesEventType(types, event.type)) continue;
        if (recorded.has(`${event.id}\u0000${row.id}`)) continue;
        const id = messageIdFor(event.id, event.created_at, row.id);
        const take = options.canTake(row);
        // Held: no row until its outcome (decision 0035 C); the event's queue row stands for it.
        if (take) {
          hold.remaining += 1;
          held.push({
            id,
            orgId: event.org_id,
            endpointId: row.id,
            eventId: event.id,
            eventType: event.type,
            attempts: 0,
            totalAttempts: 0,
            body: event.body,
            hold,
          });
          touched.set(row.id, row);
          continue;
        }
        rows.push({
          id,
          org_id: event.org_id,
          endpoint_id: row.id,
          event_id: event.id,
          event_type: event.type,
          status: 'pending',
          attempts: 0,
          total_attempts: 0,
          next_attempt_at: now,
          locked_until: null,
          locked_by: null,
          last_status: null,
          last_attempt_at: null,
          created_at: event.created_at,
          updated_at: now,
        });
      }
      if (hold.remaining === 0) done.push(hold);
    }
    await insertMessageRows(trx, rows);
    await deleteQueueRows(trx, options.workerId, done);
    return { events: events.length, held, endpoints: touched };
  });
}

/**
 * The predicate of the partial index `webhook_messages_due_idx` (migration 0018), repeated in the
 * queries that read it: SQLite uses a partial index only for a query whose WHERE contains its
 * predicate term for term (PostgreSQL would infer it from `status = 'pending'`).
 */
const DUE_INDEX = sql`status in ('pending', 'delivering')`;

/**
 * Leases due messages, skipping saturated endpoints; with `expired`, also those whose holder's
 * lease ran out. The two are separate statements: each then walks `webhook_messages_due_idx` in
 * order and stops at the limit, where one OR-ed query had to collect and sort every due row on
 * each claim (quadratic under a backlog).
 */
export async function claimDue(
  db: Db,
  engine: Engine,
  now: number,
  options: { workerId: string; leaseMs: number; limit: number; skipEndpoints: readonly string[]; expired?: boolean },
): Promise<HeldMessage[]> {
  if (options.limit <= 0) return [];
  const skip =
    options.skipEndpoints.length > 0 ? sql`and endpoint_id not in (${sql.join([...options.skipEndpoints])})` : sql``;
  // Each claimed message comes back with its event's body: no second round trip for the bodies.
  // Each lease is an UPDATE, a write (on SQLite it takes the write lock, and with write turns waits
  // for the background thread's write) even when it finds nothing: a read of the same index range
  // first, so an idle poll writes nothing (decision 0035).
  const lease = async (due: ReturnType<typeof sql>, limit: number) => {
    if (!(await anyRow(db, sql`select 1 as one from webhook_messages where ${DUE_INDEX} and ${due} ${skip} limit 1`)))
      return [];
    return (
      await sql<{
        id: string;
        org_id: string;
        endpoint_id: string;
        event_id: string;
        event_type: string;
        attempts: number;
        total_attempts: number;
        body: string;
      }>`
    update webhook_messages set status = 'delivering', locked_until = ${now + options.leaseMs}, locked_by = ${options.workerId}, updated_at = ${now}
    where id in (
      select id from webhook_messages where ${DUE_INDEX} and ${due} ${skip}
      order by next_attempt_at limit ${limit} ${lockClause(engine)}
    )
    returning id, org_id, endpoint_id, event_id, event_type, attempts, total_attempts,
      coalesce((select e.body from events e where e.id = webhook_messages.event_id), '{}') as body`.execute(db)
    ).rows;
  };
  const claimed = options.expired
    ? await lease(sql`status = 'delivering' and locked_until < ${now}`, options.limit)
    : [];
  if (claimed.length < options.limit)
    claimed.push(
      ...(await lease(sql`status = 'pending' and next_attempt_at <= ${now}`, options.limit - claimed.length)),
    );
  return claimed.map((m) => ({
    id: m.id,
    orgId: m.org_id,
    endpointId: m.endpoint_id,
    eventId: m.event_id,
    eventType: m.event_type,
    attempts: Number(m.attempts),
    totalAttempts: Number(m.total_attempts),
    body: m.body,
  }));
}

/**
 * Keeps this worker's leases alive while messages wait in its queues or are in flight; not the
 * queue rows of `stuck` holds (an outcome commit failed: they are left to run out and be fanned
 * out again).
 */
export async function extendLeases(
  db: Db,
  engine: Engine,
  workerId: string,
  until: number,
  stuck: readonly QueueHold[] = [],
): Promise<void> {
  // Rows a concurrent outcome write holds are skipped (their lease ends there anyway): no lock-order deadlock.
  await sql`update webhook_messages set locked_until = ${until}
    where id in (select id from webhook_messages where ${DUE_INDEX} and status = 'delivering' and locked_by = ${workerId} ${lockClause(engine)})`.execute(
    db,
  );
  const except =
    stuck.length > 0
      ? sql`and (created_at, event_id) not in (values ${sql.join(
          stuck.map((h) => sql`(cast(${h.createdAt} as bigint), ${h.eventId})`),
        )})`
      : sql``;
  await sql`update event_fanout_queue set locked_until = ${until} where locked_by = ${workerId} ${except}`.execute(db);
}

/**
 * Gives messages back unsent (rate-limited, shutting down), due again at `at`: those with a row are
 * moved back to pending; those held without one are inserted pending, and their events' queue rows
 * deleted once none of their messages is held.
 */
export async function releaseHeld(db: Db, workerId: string, messages: readonly HeldMessage[], at: number, now: number) {
  const fresh = messages.filter((m) => m.hold);
  const settle = settleHolds(fresh);
  if (fresh.length > 0) {
    await db.transaction().execute(async (trx) => {
      await insertNewMessageRows(
        trx,
        fresh.map((m) =>
          newMessageRow(
            m,
            {
              status: 'pending',
              attempts: 0,
              total_attempts: 0,
              next_attempt_at: at,
              last_status: null,
              last_attempt_at: null,
            },
            now,
          ),
        ),
      );
      await settle.deleteDone(trx, workerId);
    });
    await deleteSettledQueueRows(db, workerId, settle.committed());
  }
  await releaseMessages(
    db,
    workerId,
    messages.filter((m) => !fresh.includes(m)).map((m) => m.id),
    at,
  );
}

/** Gives messages back unsent (rate-limited, shutting down), due again at `at`. */
export async function releaseMessages(db: Db, workerId: string, ids: readonly string[], at: number): Promise<void> {
  for (const part of chunks(ids, 500)) {
    await db
      .updateTable('webhook_messages')
      .set({ status: 'pending', next_attempt_at: at, locked_until: null, locked_by: null })
      .where('id', 'in', part)
      .where('locked_by', '=', workerId)
      .where('status', '=', 'delivering')
      .execute();
  }
}

/** How long the delivery log (events, finished messages, attempts) is kept. */
export const RETENTION_MS = 90 * 24 * 60 * 60 * 1000;

/** Deletes what is older than the retention period and no longer needed for delivery. */
export async function pruneDeliveryLog(
  db: Db,
  now: number,
  retentionMs = RETENTION_MS,
): Promise<{ attempts: number; messages: number; events: number }> {
  const cutoff = now - retentionMs;
  const attempts = await db.deleteFrom('webhook_attempts').where('at', '<', cutoff).executeTakeFirst();
  const messages = await db
    .deleteFrom('webhook_messages')
    .where('created_at', '<', cutoff)
    .where('status', 'in', ['succeeded', 'failed'])
    .executeTakeFirst();
  // Not one still waiting for its fan-out (looked up by the queue's key), nor one with messages left.
  const events = await db
    .deleteFrom('events')
    .where('created_at', '<', cutoff)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('event_fanout_queue')
            .select('event_fanout_queue.event_id')
            .whereRef('event_fanout_queue.created_at', '=', 'events.created_at')
            .whereRef('event_fanout_queue.event_id', '=', 'events.id'),
        ),
      ),
    )
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('webhook_messages')
            .select('webhook_messages.id')
            .whereRef('webhook_messages.event_id', '=', 'events.id'),
        ),
      ),
    )
    .executeTakeFirst();
  return {
    attempts: Number(attempts.numDeletedRows),
    messages: Number(messages.numDeletedRows),
    events: Number(events.numDeletedRows),
  };
}

/** A message a worker holds without a row yet (decision 0035 C), as the API shows it. */
export interface UnrecordedMessage {
  id: string;
  eventId: string;
  eventType: string;
  createdAt: number;
}

/**
 * The messages of an endpoint that are being delivered for the first time and have no row yet: the
 * events of the endpoint's organization whose fan-out queue row is leased (by a live worker, or by
 * one that died and whose lease has not been taken over yet), that the endpoint hears (its event
 * types, subscribed before the event) and that have no message row for it. Newest first. Reads
 * the queue's leased rows (bounded by what the workers hold, at most `maxHeld` each) and the events
 * they name.
 */
export async function unrecordedMessages(
  db: Db | Trx,
  endpoint: Pick<EndpointRow, 'id' | 'org_id' | 'created_at' | 'event_types' | 'disabled'>,
): Promise<UnrecordedMessage[]> {
  if (endpoint.disabled === 1) return [];
  const types = fromJson<string[]>(endpoint.event_types, []);
  const rows = (
    await sql<{ id: string; type: string; created_at: number | string }>`
    select e.id, e.type, e.created_at from event_fanout_queue q join events e on e.id = q.event_id
    where q.locked_by is not null and e.org_id = ${endpoint.org_id} and e.created_at >= ${endpoint.created_at}
      and not exists (select 1 from webhook_messages m where m.event_id = e.id and m.endpoint_id = ${endpoint.id})`.execute(
      db,
    )
  ).rows;
  return rows
    .filter((r) => matchesEventType(types, r.type))
    .map((r) => ({
      id: messageIdFor(r.id, Number(r.created_at), endpoint.id),
      eventId: r.id,
      eventType: r.type,
      createdAt: Number(r.created_at),
    }))
    .sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
}
