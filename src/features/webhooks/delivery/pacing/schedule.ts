// The retry schedule of reference §14.2 (the Svix schedule): attempt 1 immediately, then after
// 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h — 8 attempts over ≈ 27 h 35 min. Pure functions; the
// caller injects `random` (tests) and the clock (times are epoch ms).

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Delay before attempt i+1, measured from the failure of attempt i (index 0 = the first attempt). */
export const RETRY_SCHEDULE_MS: readonly number[] = Object.freeze([
  0,
  5 * SECOND,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  5 * HOUR,
  10 * HOUR,
  10 * HOUR,
]);
export const MAX_ATTEMPTS = RETRY_SCHEDULE_MS.length;
/** Jitter is added only (an attempt never fires before its scheduled time): up to 10 %, at most 15 min. */
export const JITTER_RATIO = 0.1;
export const MAX_JITTER_MS = 15 * MINUTE;
/** A receiver's Retry-After can postpone a retry, but not beyond this. */
export const MAX_RETRY_AFTER_MS = DAY;
/** An endpoint whose every attempt has failed for this long is disabled. */
export const AUTO_DISABLE_AFTER_MS = 5 * DAY;

export interface NextDelayOptions {
  /** Parsed Retry-After of the failed attempt's response, in seconds. */
  retryAfterSeconds?: number;
  /** Uniform [0, 1); defaults to Math.random. */
  random?: () => number;
}

/**
 * Milliseconds to wait before the next attempt after attempt number `failedAttemptNumber` (1-based)
 * failed; null when that was the last attempt. `nextDelayMs(0)` is the first attempt: 0.
 */
export function nextDelayMs(failedAttemptNumber: number, options: NextDelayOptions = {}): number | null {
  if (!Number.isInteger(failedAttemptNumber) || failedAttemptNumber < 0)
    throw new RangeError('failedAttemptNumber must be a non-negative integer');
  if (failedAttemptNumber >= MAX_ATTEMPTS) return null;
  const base = RETRY_SCHEDULE_MS[failedAttemptNumber]!;
  const random = options.random ?? Math.random;
  const r = Math.min(Math.max(random(), 0), 1);
  const delay = base + Math.round(Math.min(base * JITTER_RATIO, MAX_JITTER_MS) * r);
  const retryAfter = options.retryAfterSeconds;
  if (retryAfter === undefined || !Number.isFinite(retryAfter) || retryAfter <= 0) return delay;
  return Math.max(delay, Math.min(Math.ceil(retryAfter * SECOND), MAX_RETRY_AFTER_MS));
}

/** Epoch ms of the next attempt, or null when exhausted (convenience over `nextDelayMs`). */
export function nextAttemptAt(
  failedAttemptNumber: number,
  failedAt: number,
  options: NextDelayOptions = {},
): number | null {
  const delay = nextDelayMs(failedAttemptNumber, options);
  return delay === null ? null : failedAt + delay;
}

/** True when the endpoint has failed continuously since `firstFailureAt` for 5 days or more. */
export function shouldDisable(firstFailureAt: number | null | undefined, now: number): boolean {
  if (firstFailureAt === null || firstFailureAt === undefined) return false;
  return now - firstFailureAt >= AUTO_DISABLE_AFTER_MS;
}

/** What the worker does after an attempt. */
export type AttemptDecision =
  | { action: 'succeeded' }
  | { action: 'retry'; delayMs: number }
  | { action: 'failed'; reason: 'exhausted' | 'aborted_by_receiver' | 'gone' };

export interface DecideOptions {
  random?: () => number;
  /** Svix: a receiver answering with `webhook-delivery: abort-message` stops the retries; default true. */
  stopOnAbortHeader?: boolean;
  /** Standard Webhooks: 410 Gone stops the retries (the worker may also disable the endpoint); default false. */
  stopOnGone?: boolean;
}

/** Decides after attempt number `attemptNumber` (1-based) from its result (a SendResult fits). */
export function decideAfterAttempt(
  result: { ok: boolean; status?: number; retryAfterSeconds?: number; responseHeaders?: Record<string, string> },
  attemptNumber: number,
  options: DecideOptions = {},
): AttemptDecision {
  if (result.ok) return { action: 'succeeded' };
  if (
    (options.stopOnAbortHeader ?? true) &&
    result.responseHeaders?.['webhook-delivery']?.trim().toLowerCase() === 'abort-message'
  ) {
    return { action: 'failed', reason: 'aborted_by_receiver' };
  }
  if (options.stopOnGone === true && result.status === 410) return { action: 'failed', reason: 'gone' };
  const delayMs = nextDelayMs(attemptNumber, {
    ...(result.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: result.retryAfterSeconds }),
    ...(options.random ? { random: options.random } : {}),
  });
  return delayMs === null ? { action: 'failed', reason: 'exhausted' } : { action: 'retry', delayMs };
}
