import { createHash } from 'node:crypto';
import type { Deps } from '../../../deps.ts';
import { isUniqueViolation } from '../../../core/db/connect.ts';
import { enqueueJob } from '../../../core/jobs/queue.ts';

/**
 * Housekeeping for auth tables: ended sessions (with their refresh tokens, by cascade), old
 * authorization codes and stale failure counters. Scheduled at most once per hour: the first
 * login of each hour enqueues a job whose id is derived from the hour, so every instance
 * enqueues the same job and duplicates are dropped by the primary key.
 */
export const CLEANUP_JOB = 'auth.cleanup';
const HOUR = 3600_000;
const KEEP_ENDED_MS = 7 * 24 * HOUR;

function hourJobId(hour: number): string {
  const hex = createHash('sha256').update(`${CLEANUP_JOB}:${hour}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export async function scheduleCleanup(deps: Deps): Promise<void> {
  const now = deps.clock.now();
  const hour = Math.floor(now / HOUR);
  const runtime = deps.runtime.auth;
  if (runtime.cleanupScheduledHour === hour) return;
  runtime.cleanupScheduledHour = hour;
  try {
    await enqueueJob(deps.db, now, {
      id: hourJobId(hour),
      type: CLEANUP_JOB,
      payload: null,
      runAt: now + 60_000,
      maxAttempts: 3,
    });
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
  }
}

export async function cleanupAuthTables(deps: Deps): Promise<{ sessions: number; codes: number; failures: number }> {
  const now = deps.clock.now();
  const cutoff = now - KEEP_ENDED_MS;
  const sessions = await deps.db
    .deleteFrom('auth_sessions')
    .where((eb) => eb.or([eb('expires_at', '<', cutoff), eb('revoked_at', '<', cutoff)]))
    .executeTakeFirst();
  const codes = await deps.db
    .deleteFrom('oauth_codes')
    .where('expires_at', '<', now - 24 * HOUR)
    .executeTakeFirst();
  const failures = await deps.db
    .deleteFrom('auth_login_failures')
    .where('locked_until', '<', now)
    .where('window_start', '<', now - HOUR)
    .executeTakeFirst();
  return {
    sessions: Number(sessions.numDeletedRows),
    codes: Number(codes.numDeletedRows),
    failures: Number(failures.numDeletedRows),
  };
}
