import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Deps } from '../../../deps.ts';
import { tooManyRequests } from '../../../core/http/errors.ts';

/**
 * Failed-login throttling per account and per client IP, kept in the database so that every
 * instance sees the same counters. A few failures are free; after that each further failure
 * locks the key for an exponentially growing delay capped at 15 minutes — a slowdown, never a
 * permanent lockout.
 *
 * Every attempt is reserved before any password hashing, by one atomic upsert per key that
 * counts the attempt as a failure and, past the free ones, sets the lock at once; an attempt
 * arriving while a key is locked changes nothing and gets 429. So parallel guesses are admitted
 * one lock period at a time, on SQLite and PostgreSQL alike: 61 parallel wrong passwords with 5
 * free failures get 6 checked. A success then clears the account's counter and gives the IP its
 * reserved failure back.
 */
const WINDOW_MS = 15 * 60_000;
const MAX_LOCK_SECONDS = 15 * 60;
/**
 * The same mechanism guards story-board link passwords (issue 23, defect 6): per link (`link`)
 * and per client address (`link-ip`, apart from sign-in's so neither starves the other).
 */
const FREE_FAILURES = { account: 5, ip: 50, link: 5, 'link-ip': 20 } as const;

type Kind = keyof typeof FREE_FAILURES;
type ThrottleKey = { kind: Kind; key: string };

function keysFor(username: string, ip: string): ThrottleKey[] {
  return [
    { kind: 'account', key: `account:${username.trim().toLowerCase()}` },
    { kind: 'ip', key: `ip:${ip}` },
  ];
}

function linkKeysFor(linkId: string, ip: string): ThrottleKey[] {
  return [
    { kind: 'link', key: `link:${linkId}` },
    { kind: 'link-ip', key: `link-ip:${ip}` },
  ];
}

/** Lock seconds after `over` failures beyond the free ones: 1, 2, 4, … capped at 15 minutes. */
export function lockSeconds(over: number): number {
  return Math.min(MAX_LOCK_SECONDS, 2 ** Math.min(Math.max(over, 1) - 1, 20));
}

/** A number parameter typed for PostgreSQL (whose CASE and + cannot infer an untyped one). */
const num = (v: number) => sql<number>`cast(${v} as bigint)`;

/** The lock delay as SQL (no pow() in every SQLite build): a CASE over the few steps below the cap. */
function lockMsSql(overExpr: ReturnType<typeof sql<number>>) {
  const steps: ReturnType<typeof sql>[] = [];
  for (let over = 1; lockSeconds(over) < MAX_LOCK_SECONDS; over++)
    steps.push(sql`when ${overExpr} = ${num(over)} then ${num(lockSeconds(over) * 1000)}`);
  return sql<number>`(case ${sql.join(steps, sql` `)} else ${num(MAX_LOCK_SECONDS * 1000)} end)`;
}

export interface LoginReservation {
  username: string;
  ip: string;
}

/**
 * Reserves one attempt for the account and the IP, or throws 429 with Retry-After while either
 * is locked. Call before hashing; then settle with loginSucceeded (failures need nothing more).
 */
export async function reserveLoginAttempt(deps: Deps, username: string, ip: string): Promise<LoginReservation> {
  await reserveAttempt(deps, keysFor(username, ip), 'Too many failed sign-in attempts; try again later');
  return { username, ip };
}

/** A successful login clears its account's counter and returns the IP's reserved failure (one good password must not launder a spraying IP). */
export async function loginSucceeded(deps: Deps, reservation: LoginReservation): Promise<void> {
  await attemptSucceeded(deps, keysFor(reservation.username, reservation.ip));
}

export interface LinkPasswordReservation {
  linkId: string;
  ip: string;
}

/**
 * Reserves one password attempt on a share link for the link and the client address, or throws
 * 429 with Retry-After while either is locked. Call before verifying the password; settle a right
 * one with linkPasswordSucceeded.
 */
export async function reserveLinkPasswordAttempt(
  deps: Deps,
  linkId: string,
  ip: string,
): Promise<LinkPasswordReservation> {
  await reserveAttempt(deps, linkKeysFor(linkId, ip), 'Too many wrong passwords for this link; try again later');
  return { linkId, ip };
}

export async function linkPasswordSucceeded(deps: Deps, reservation: LinkPasswordReservation): Promise<void> {
  await attemptSucceeded(deps, linkKeysFor(reservation.linkId, reservation.ip));
}

/** One atomic reservation per key (see the top of this file); 429 while any key is locked. */
async function reserveAttempt(deps: Deps, keys: ThrottleKey[], message: string): Promise<void> {
  const now = deps.clock.now();
  const windowStart = now - WINDOW_MS;
  let lockedUntil = 0;
  for (const { kind, key } of keys) {
    const token = randomUUID();
    const t = 'auth_login_failures';
    const locked = sql<boolean>`${sql.ref(`${t}.locked_until`)} > ${num(now)}`;
    const counted = sql<number>`(case when ${sql.ref(`${t}.window_start`)} < ${num(windowStart)} then 1 else ${sql.ref(`${t}.failures`)} + 1 end)`;
    const over = sql<number>`(${counted} - ${num(FREE_FAILURES[kind])})`;
    const row = await deps.db
      .insertInto('auth_login_failures')
      .values({ key, failures: 1, window_start: now, locked_until: 0, reservation: token })
      .onConflict((oc) =>
        oc.column('key').doUpdateSet({
          failures: sql<number>`case when ${locked} then ${sql.ref(`${t}.failures`)} else ${counted} end`,
          window_start: sql<number>`case when ${locked} then ${sql.ref(`${t}.window_start`)} when ${sql.ref(`${t}.window_start`)} < ${num(windowStart)} then ${num(now)} else ${sql.ref(`${t}.window_start`)} end`,
          locked_until: sql<number>`case when ${locked} then ${sql.ref(`${t}.locked_until`)} when ${over} > 0 then ${num(now)} + ${lockMsSql(over)} else ${sql.ref(`${t}.locked_until`)} end`,
          reservation: sql<string>`case when ${locked} then ${sql.ref(`${t}.reservation`)} else cast(${token} as text) end`,
        }),
      )
      .returning(['reservation', 'locked_until'])
      .executeTakeFirstOrThrow();
    if (row.reservation !== token) lockedUntil = Math.max(lockedUntil, Number(row.locked_until));
  }
  if (lockedUntil > now) throw tooManyRequests((lockedUntil - now) / 1000, message);
}

/** Clears the first key's counter (the account, the link) and gives the address its reserved failure back. */
async function attemptSucceeded(deps: Deps, [account, ip]: ThrottleKey[]): Promise<void> {
  await deps.db.deleteFrom('auth_login_failures').where('key', '=', account!.key).execute();
  await deps.db
    .updateTable('auth_login_failures')
    .set({ failures: sql<number>`case when failures > 0 then failures - 1 else 0 end` })
    .where('key', '=', ip!.key)
    .execute();
}
