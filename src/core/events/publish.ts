import type { Trx } from '../db/connect.ts';
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
 * change it reports, so it exists exactly when the change commits. Delivery happens later.
 * Returns the event id (`<type-slug>-<uuid>`, as in the envelope).
 */
export async function publishEvent<T extends EventType>(trx: Trx, now: number, input: EventInput<T>): Promise<string> {
  const uuid = newId(now);
  const id = `${input.type.replace(/[._]/g, '-')}-${uuid}`;
  let user: EventActor | null = null;
  if (typeof input.actor === 'string') {
    const row = await trx.selectFrom('users').select(['id', 'first_name', 'last_name']).where('id', '=', input.actor).where('org_id', '=', input.orgId).executeTakeFirst();
    user = row ? { id: row.id, firstName: row.first_name, lastName: row.last_name } : null;
  } else if (input.actor) {
    user = { id: input.actor.id, firstName: input.actor.firstName, lastName: input.actor.lastName };
  }
  // Caused while an administrator impersonates `user`: say so (present only then).
  const acting = actingPrincipal();
  const impersonatorId = acting?.impersonatorId && acting.orgId === input.orgId ? acting.impersonatorId : undefined;
  const event = { id, time: new Date(now).toISOString(), user, ...(impersonatorId ? { impersonatorId } : {}) };
  const body = { eventType: input.type, event, ...(input.data as object) };
  await trx.insertInto('events').values({ id, org_id: input.orgId, type: input.type, body: toJson(body), fanned_out: 0, created_at: now }).execute();
  // Early wake-up; the row is visible only after commit, and the loop re-polls shortly after anyway.
  setTimeout(() => eventsPublished.wake(), 1).unref?.();
  return id;
}
