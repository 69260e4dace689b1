import { sql } from 'kysely';
import type { Db } from '../../../core/db/connect.ts';

/**
 * Rate-limited endpoints are delivered by one process at a time (issue 28, item 3): the holder of the
 * endpoint's row in `webhook_endpoint_owners`, a lease renewed while it holds messages of the endpoint.
 * The holder's in-memory token bucket is then the endpoint's whole `rateLimit`, however many
 * processes deliver. A holder that dies loses the endpoint when its lease runs out.
 */

/** Takes (or renews) the endpoints whose lease is free, expired or already ours; returns those we hold. */
export async function takeEndpoints(
  db: Db,
  workerId: string,
  endpointIds: readonly string[],
  now: number,
  leaseMs: number,
): Promise<Set<string>> {
  const held = new Set<string>();
  if (endpointIds.length === 0) return held;
  const rows = await sql<{ endpoint_id: string }>`
    insert into webhook_endpoint_owners (endpoint_id, worker_id, until)
    values ${sql.join(endpointIds.map((id) => sql`(${id}, ${workerId}, ${now + leaseMs})`))}
    on conflict (endpoint_id) do update set worker_id = excluded.worker_id, until = excluded.until
    where webhook_endpoint_owners.until < ${now} or webhook_endpoint_owners.worker_id = excluded.worker_id
    returning endpoint_id`.execute(db);
  for (const row of rows.rows) held.add(row.endpoint_id);
  return held;
}

/** Rate-limited endpoints another live process delivers (this one should not claim their messages). */
export async function endpointsHeldElsewhere(db: Db, workerId: string, now: number): Promise<Set<string>> {
  const rows = await db
    .selectFrom('webhook_endpoint_owners')
    .select('endpoint_id')
    .where('worker_id', '<>', workerId)
    .where('until', '>=', now)
    .execute();
  return new Set(rows.map((r) => r.endpoint_id));
}

/** Renews this process's endpoints (with its message leases); lets go of those it holds nothing of. */
export async function renewEndpoints(db: Db, workerId: string, keep: readonly string[], until: number): Promise<void> {
  if (keep.length > 0)
    await db
      .updateTable('webhook_endpoint_owners')
      .set({ until })
      .where('worker_id', '=', workerId)
      .where('endpoint_id', 'in', keep)
      .execute();
}

/** On stop (and after a manual run): every endpoint this process held is free at once. */
export async function releaseEndpoints(db: Db, workerId: string): Promise<void> {
  await db.deleteFrom('webhook_endpoint_owners').where('worker_id', '=', workerId).execute();
}
