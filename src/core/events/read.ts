import type { DbOrTrx } from '../db/connect.ts';
import type { EventData, EventType } from './catalog.ts';

/**
 * The data of every `type` event published at or after `since` (epoch ms), in no particular order:
 * for consumers that follow one kind of event (the search indexer drops purged assets).
 */
export async function eventDataSince<T extends EventType>(
  db: DbOrTrx,
  type: T,
  since: number,
): Promise<Partial<EventData<T>>[]> {
  const rows = await db
    .selectFrom('events')
    .select('body')
    .where('type', '=', type)
    .where('created_at', '>=', since)
    .execute();
  return rows.map((r) => JSON.parse(r.body) as Partial<EventData<T>>);
}
