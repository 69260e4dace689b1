import { sql } from 'kysely';
import type { DbOrTrx } from '../../core/db/connect.ts';

/**
 * Fixed-window counters in the database (quota_windows), right across processes: one row per
 * quota, subject and window; each counted request is one upsert that adds 1 only while the count
 * is below the limit, and returns the new count (no row: refused). Windows are aligned to the
 * clock (the hour, the minute), so within any one window the limit holds exactly; across a window
 * boundary a burst may see up to twice the limit in one window's length (docs/quotas.md).
 */
export interface WindowCount {
  quota: string;
  subject: string;
  orgId: string;
  windowMs: number;
  limit: number;
  now: number;
}

export type Counted = { ok: true; count: number; resetAt: number } | { ok: false; count: number; resetAt: number };

export const windowStart = (now: number, windowMs: number) => Math.floor(now / windowMs) * windowMs;

export async function countInWindow(db: DbOrTrx, w: WindowCount): Promise<Counted> {
  const start = windowStart(w.now, w.windowMs);
  const resetAt = start + w.windowMs;
  const row = await db
    .insertInto('quota_windows')
    .values({ quota: w.quota, subject: w.subject, window_start: start, org_id: w.orgId, count: 1 })
    .onConflict((oc) =>
      oc
        .columns(['quota', 'subject', 'window_start'])
        .doUpdateSet({ count: sql<number>`quota_windows.count + 1` })
        .where(sql<boolean>`quota_windows.count < ${w.limit}`),
    )
    .returning('count')
    .executeTakeFirst();
  if (row) {
    const count = Number(row.count);
    // The first count of a window clears the subject's older windows (at most one row each remains).
    if (count === 1)
      await db
        .deleteFrom('quota_windows')
        .where('quota', '=', w.quota)
        .where('subject', '=', w.subject)
        .where('window_start', '<', start)
        .execute();
    return { ok: true, count, resetAt };
  }
  const current = await db
    .selectFrom('quota_windows')
    .select('count')
    .where('quota', '=', w.quota)
    .where('subject', '=', w.subject)
    .where('window_start', '=', start)
    .executeTakeFirst();
  return { ok: false, count: Number(current?.count ?? w.limit), resetAt };
}

/** The counts of the current window of one quota in an organization, highest first. */
export async function currentWindow(
  db: DbOrTrx,
  orgId: string,
  quota: string,
  windowMs: number,
  now: number,
  limit = 50,
): Promise<{ start: number; subjects: { id: string; count: number }[] }> {
  const start = windowStart(now, windowMs);
  const rows = await db
    .selectFrom('quota_windows')
    .select(['subject', 'count'])
    .where('org_id', '=', orgId)
    .where('quota', '=', quota)
    .where('window_start', '=', start)
    .orderBy('count', 'desc')
    .orderBy('subject')
    .limit(limit)
    .execute();
  return { start, subjects: rows.map((r) => ({ id: r.subject, count: Number(r.count) })) };
}
