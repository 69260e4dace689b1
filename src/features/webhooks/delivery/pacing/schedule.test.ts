import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  AUTO_DISABLE_AFTER_MS,
  decideAfterAttempt,
  MAX_ATTEMPTS,
  MAX_RETRY_AFTER_MS,
  nextAttemptAt,
  nextDelayMs,
  RETRY_SCHEDULE_MS,
  shouldDisable,
} from './schedule.ts';

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const zero = () => 0;
const almostOne = () => 0.999999;

describe('webhook retry schedule', () => {
  it('is immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h: 8 attempts', () => {
    assert.equal(MAX_ATTEMPTS, 8);
    assert.deepEqual(RETRY_SCHEDULE_MS, [0, 5 * S, 5 * M, 30 * M, 2 * H, 5 * H, 10 * H, 10 * H]);
    const delays = Array.from({ length: 8 }, (_, i) => nextDelayMs(i, { random: zero }));
    assert.deepEqual(delays, RETRY_SCHEDULE_MS);
  });

  it('returns null after the 8th failed attempt', () => {
    assert.equal(nextDelayMs(8, { random: zero }), null);
    assert.equal(nextDelayMs(9), null);
    assert.equal(nextAttemptAt(8, 1000), null);
  });

  it('three failures then success lands 35 min 5 s after the first try (without jitter)', () => {
    let at = 0;
    for (let failed = 1; failed <= 3; failed++) at = nextAttemptAt(failed, at, { random: zero })!;
    assert.equal(at, 35 * M + 5 * S);
  });

  it('the last attempt is about 27 h 35 min after the first (without jitter)', () => {
    let at = 0;
    for (let failed = 1; failed < MAX_ATTEMPTS; failed++) at = nextAttemptAt(failed, at, { random: zero })!;
    assert.equal(at, 27 * H + 35 * M + 5 * S);
  });

  it('jitter is add-only, at most 10 % and at most 15 min; the immediate attempt stays 0', () => {
    assert.equal(nextDelayMs(0, { random: almostOne }), 0);
    for (let failed = 1; failed < MAX_ATTEMPTS; failed++) {
      const base = RETRY_SCHEDULE_MS[failed]!;
      const high = nextDelayMs(failed, { random: almostOne })!;
      assert.ok(high >= base, `attempt ${failed + 1} never early`);
      assert.ok(high <= base + Math.min(base * 0.1, 15 * M), `attempt ${failed + 1} jitter bounded`);
    }
    assert.equal(nextDelayMs(1, { random: () => 0.5 }), 5 * S + 250);
    assert.equal(nextDelayMs(6, { random: () => 0.5 }), 10 * H + 450_000);
  });

  it('out-of-range random values never make a delay negative or unbounded', () => {
    assert.equal(nextDelayMs(1, { random: () => -5 }), 5 * S);
    assert.equal(nextDelayMs(1, { random: () => 7 }), 5500);
  });

  it('honours Retry-After when it is longer than the schedule', () => {
    assert.equal(nextDelayMs(1, { random: zero, retryAfterSeconds: 120 }), 120 * S);
    assert.equal(nextDelayMs(2, { random: zero, retryAfterSeconds: 120 }), 5 * M);
    assert.equal(nextDelayMs(1, { random: zero, retryAfterSeconds: 0 }), 5 * S);
    assert.equal(nextDelayMs(1, { random: zero, retryAfterSeconds: Number.NaN }), 5 * S);
  });

  it('caps Retry-After at 24 h', () => {
    assert.equal(nextDelayMs(1, { random: zero, retryAfterSeconds: 10 * 24 * 3600 }), MAX_RETRY_AFTER_MS);
    assert.equal(MAX_RETRY_AFTER_MS, 24 * H);
  });

  it('rejects negative or fractional attempt numbers', () => {
    assert.throws(() => nextDelayMs(-1), RangeError);
    assert.throws(() => nextDelayMs(1.5), RangeError);
  });

  it('disables an endpoint after 5 days of continuous failure, not before', () => {
    const first = 1_700_000_000_000;
    assert.equal(AUTO_DISABLE_AFTER_MS, 5 * 24 * H);
    assert.equal(shouldDisable(null, first + 10 * 24 * H), false);
    assert.equal(shouldDisable(undefined, first), false);
    assert.equal(shouldDisable(first, first + 5 * 24 * H - 1), false);
    assert.equal(shouldDisable(first, first + 5 * 24 * H), true);
  });
});

describe('decideAfterAttempt', () => {
  const fail = (extra: object = {}) => ({ ok: false, status: 500, responseHeaders: {}, ...extra });

  it('success ends the message', () => {
    assert.deepEqual(decideAfterAttempt({ ok: true, status: 200 }, 3), { action: 'succeeded' });
  });

  it('a failure retries on the schedule until the 8th attempt, then the message is exhausted', () => {
    assert.deepEqual(decideAfterAttempt(fail(), 1, { random: zero }), { action: 'retry', delayMs: 5 * S });
    assert.deepEqual(decideAfterAttempt(fail(), 7, { random: zero }), { action: 'retry', delayMs: 10 * H });
    assert.deepEqual(decideAfterAttempt(fail(), 8, { random: zero }), { action: 'failed', reason: 'exhausted' });
  });

  it('passes Retry-After through', () => {
    assert.deepEqual(decideAfterAttempt(fail({ status: 429, retryAfterSeconds: 60 }), 1, { random: zero }), {
      action: 'retry',
      delayMs: 60 * S,
    });
  });

  it('webhook-delivery: abort-message stops the retries (unless turned off)', () => {
    const aborted = fail({ responseHeaders: { 'webhook-delivery': 'Abort-Message' } });
    assert.deepEqual(decideAfterAttempt(aborted, 1), { action: 'failed', reason: 'aborted_by_receiver' });
    assert.equal(decideAfterAttempt(aborted, 1, { stopOnAbortHeader: false }).action, 'retry');
  });

  it('410 Gone retries by default and stops only when asked', () => {
    assert.equal(decideAfterAttempt(fail({ status: 410 }), 1).action, 'retry');
    assert.deepEqual(decideAfterAttempt(fail({ status: 410 }), 1, { stopOnGone: true }), {
      action: 'failed',
      reason: 'gone',
    });
  });
});
