import { auditMany, eventAuditEntry, isAuditedEvent, type AuditSeal } from '../audit.ts';
import type { Trx } from '../db/connect.ts';
import { insertRows } from '../db/insert-rows.ts';
import { toJson } from '../db/json.ts';
import { actingPrincipal } from '../authz/acting.ts';
import { newId } from '../ids.ts';
import { JobSignal } from '../jobs/queue.ts';
import type { EventData, EventType } from './catalog.ts';

export interface EventActor {
  id: string;
  firstName: string;
  lastName: string;
}

export type EventInput<T extends EventType> = {
  orgId: string;
  type: T;
  /** Who caused it: a user id (looked up in the same transaction), the user itself, or null for the system. */
  actor?: string | EventActor | null;
  data: EventData<T>;
};

/** Wakes this process's webhook delivery loop; across processes it polls. */
export const eventsPublished = new JobSignal();

/**
 * Publishes an event through the outbox: the row is written with `trx`, the transaction of the
 * change it reports, so it exists exactly when the change commits. Delivery happens later (a
 * trigger queues the event for the webhook fan-out in the same transaction, migration 0018).
 * Returns the event id (`<type-slug>-<uuid>`, as in the envelope).
 */
export async function publishEvent<T extends EventType>(trx: Trx, now: number, input: EventInput<T>): Promise<string> {
  const user = await resolveActor(trx, input.orgId, input.actor);
  const row = eventRow(now, input, user);
  await trx.insertInto('events').values(row).execute();
  // Changes reported by an event are audited by it, in the same transaction (core/audit.ts).
  if (isAuditedEvent(input.type)) await auditMany(trx, [auditEntryOf(now, input, user, row.id)]);
  // Early wake-up; the row is visible only after commit, and the loop re-polls shortly after anyway.
  setTimeout(() => eventsPublished.wake(), 1).unref?.();
  return row.id;
}

/**
 * Publishes many events in the caller's transaction, each exactly as `publishEvent` would write it,
 * with multi-row inserts (bulk operations); an actor is looked up once. Returns the ids in order.
 * With `sealAudit` their audit rows are sealed as they are inserted (core/audit.ts `AuditSeal`):
 * the chain head's lock is then held to the commit, so call it as the transaction's last write.
 */
export async function publishEvents<T extends EventType>(
  trx: Trx,
  now: number,
  inputs: readonly EventInput<T>[],
  sealAudit?: AuditSeal,
): Promise<string[]> {
  if (inputs.length === 0) return [];
  const actors = new Map<string, EventActor | null>();
  const rows: EventRow[] = [];
  const users: (EventActor | null)[] = [];
  for (const input of inputs) {
    let user: EventActor | null;
    if (typeof input.actor === 'string') {
      const key = `${input.orgId}/${input.actor}`;
      if (!actors.has(key)) actors.set(key, await resolveActor(trx, input.orgId, input.actor));
      user = actors.get(key)!;
    } else {
      user = await resolveActor(trx, input.orgId, input.actor);
    }
    rows.push(eventRow(now, input, user));
    users.push(user);
  }
  await insertRows(trx, 'events', rows);
  await auditMany(
    trx,
    inputs.flatMap((input, i) =>
      isAuditedEvent(input.type) ? [auditEntryOf(now, input, users[i]!, rows[i]!.id)] : [],
    ),
    sealAudit,
  );
  setTimeout(() => eventsPublished.wake(), 1).unref?.();
  return rows.map((r) => r.id);
}

async function resolveActor(
  trx: Trx,
  orgId: string,
  actor: EventInput<EventType>['actor'],
): Promise<EventActor | null> {
  if (typeof actor === 'string') {
    const row = await trx
      .selectFrom('users')
      .select(['id', 'first_name', 'last_name'])
      .where('id', '=', actor)
      .where('org_id', '=', orgId)
      .executeTakeFirst();
    return row ? { id: row.id, firstName: row.first_name, lastName: row.last_name } : null;
  }
  return actor ? { id: actor.id, firstName: actor.firstName, lastName: actor.lastName } : null;
}

function auditEntryOf<T extends EventType>(
  now: number,
  input: EventInput<T>,
  user: EventActor | null,
  eventId: string,
) {
  return eventAuditEntry(
    input.type,
    input.orgId,
    now,
    user?.id ?? null,
    eventId,
    input.data as Record<string, unknown>,
  );
}

interface EventRow {
  id: string;
  org_id: string;
  type: string;
  body: string;
  created_at: number;
}

/** The outbox row of one event (`<type-slug>-<uuid>` id, envelope body). */
function eventRow<T extends EventType>(now: number, input: EventInput<T>, user: EventActor | null): EventRow {
  const uuid = newId(now);
  const id = `${input.type.replace(/[._]/g, '-')}-${uuid}`;
  // Caused while an administrator impersonates `user`: say so (present only then).
  const acting = actingPrincipal();
  const impersonatorId = acting?.impersonatorId && acting.orgId === input.orgId ? acting.impersonatorId : undefined;
  const event = { id, time: new Date(now).toISOString(), user, ...(impersonatorId ? { impersonatorId } : {}) };
  const body = { eventType: input.type, event, ...(input.data as object) };
  return { id, org_id: input.orgId, type: input.type, body: toJson(body), created_at: now };
}
