// What bench/webhooks.bench.ts and bench/webhooks-profile.ts share: the event each delivery carries, and the
// probe that tells when the engine has nothing left to send.
import { sql } from 'kysely';
import type { Deps } from '../src/deps.ts';
import { newId } from '../src/core/ids.ts';

/** The `data` of each benchmark event: one asset, as asset.created carries it. */
export const assetData = () => ({
  asset: {
    id: newId(),
    filename: 'campaign-hero.jpg',
    metadataTemplate: { id: newId(), name: 'Marketing' },
    securityTemplates: [{ id: newId(), name: 'Everyone' }],
  },
});

/**
 * True once every event is fanned out and no message is waiting or in flight. Polled every 20 ms
 * while the engine runs, so it is two index probes: counting the succeeded rows instead grew with
 * the run (20,000 rows read 50 times a second by the end) and took its CPU from the run measured.
 */
export async function settled(deps: Deps): Promise<boolean> {
  const open =
    (await deps.db.selectFrom('event_fanout_queue').select('event_id').limit(1).executeTakeFirst()) ??
    // Written as the partial due index's predicate (constants, not parameters), so SQLite uses it.
    (
      await sql<{
        id: string;
      }>`select id from webhook_messages where status in ('pending', 'delivering') limit 1`.execute(deps.db)
    ).rows[0];
  return open === undefined;
}
