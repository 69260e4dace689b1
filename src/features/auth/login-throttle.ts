import { sql } from 'kysely';
import type { Deps } from '../../deps.ts';
import { tooManyRequests } from '../../core/http/errors.ts';

/**
 * Failed-login throttling per account and per client IP, kept in the database so that every
 * instance sees the same counters. A few failures are free; after that each further failure
 * locks the key for an exponentially growing delay capped at 15 minutes — a slowdown, never a
 * permanent lockout. The check runs before any password hashing, so a throttled guess costs
 * the server one indexed read.
 */
const WINDOW_MS = 15 * 60_000;
const MAX_LOCK_SECONDS = 15 * 60;
const FREE_FAILURES = { account: 5, ip: 50 } as const;

type Kind = keyof typeof FREE_FAILURES;

function keysFor(username: string, ip: string): { kind: Kind; key: string }[] {
  return [
    { kind: 'account', key: `account:${username.trim().toLowerCase()}` },
    { kind: 'ip', key: `ip:${ip}` },
  ];
}

/** Throws 429 with Retry-After while the account or the IP is in a lock period. */
export async function assertNotThrottled(deps: Deps, username: string, ip: string): Promise<void> {
  const now = deps.clock.now();
  const rows = await deps.db.selectFrom('auth_login_failures').select('locked_until')
    .where('key', 'in', keysFor(username, ip).map((k) => k.key)).where('locked_until', '>', now).execute();
  if (rows.length === 0) return;
  const until = Math.max(...rows.map((r) => r.locked_until));
  throw tooManyRequests((until - now) / 1000, 'Too many failed sign-in attempts; try again later');
}

export async function recordLoginFailure(deps: Deps, username: string, ip: string): Promise<void> {
  const now = deps.clock.now();
  const windowStart = now - WINDOW_MS;
  for (const { kind, key } of keysFor(username, ip)) {
    const row = await deps.db.insertInto('auth_login_failures')
      .values({ key, failures: 1, window_start: now, locked_until: 0 })
      .onConflict((oc) => oc.column('key').doUpdateSet({
        failures: sql<number>`case when auth_login_failures.window_start < ${windowStart} then 1 else auth_login_failures.failures + 1 end`,
        window_start: sql<number>`case when auth_login_failures.window_start < ${windowStart} then ${now} else auth_login_failures.window_start end`,
      }))
      .returning(['failures'])
      .executeTakeFirstOrThrow();
    const over = row.failures - FREE_FAILURES[kind];
    if (over > 0) {
      const seconds = Math.min(MAX_LOCK_SECONDS, 2 ** Math.min(over - 1, 20));
      await deps.db.updateTable('auth_login_failures').set({ locked_until: now + seconds * 1000 }).where('key', '=', key).execute();
    }
  }
}

/** A successful login clears its account's counter (not the IP's: one good password must not launder a spraying IP). */
export async function clearAccountFailures(deps: Deps, username: string): Promise<void> {
  await deps.db.deleteFrom('auth_login_failures').where('key', '=', `account:${username.trim().toLowerCase()}`).execute();
}
