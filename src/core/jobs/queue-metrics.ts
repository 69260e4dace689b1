import { sql } from 'kysely';
import type { Gauge } from 'prom-client';
import type { Db } from '../db/connect.ts';

/**
 * The job queue as a scrape sees it (GET /metrics): jobs by kind and state, and the age of the
 * oldest job of each kind that is due and not finished. One grouped query over the claim index;
 * finished jobs are not counted. Kinds that emptied since the last scrape read 0, not their old value.
 */
export async function collectJobQueue(
  db: Db,
  now: number,
  jobs: Gauge<'kind' | 'state'>,
  oldest: Gauge<'kind'>,
): Promise<void> {
  const rows = await sql<{ type: string; status: string; n: number | string; due_since: number | string | null }>`
    select type, status, count(*) as n,
      min(case when run_at <= ${now} then run_at end) as due_since
    from jobs where status in ('pending', 'running') group by type, status
  `.execute(db);
  jobs.reset();
  oldest.reset();
  const ages = new Map<string, number>();
  for (const row of rows.rows) {
    jobs.set({ kind: row.type, state: row.status }, Number(row.n));
    const age = row.due_since === null ? 0 : Math.max(0, (now - Number(row.due_since)) / 1000);
    ages.set(row.type, Math.max(ages.get(row.type) ?? 0, age));
  }
  for (const [kind, age] of ages) oldest.set({ kind }, age);
}
