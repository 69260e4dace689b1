import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createInflightLimiter, createRateLimiter } from './rate-limit.ts';

function manualClock(start = 1_700_000_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

/** Simulates a sender that sends whenever allowed and otherwise waits as told; returns sends per simulated second. */
function simulate(rate: number, seconds: number): number[] {
  const clock = manualClock();
  const limiter = createRateLimiter(clock.now);
  const start = clock.now();
  const perSecond = Array<number>(seconds).fill(0);
  while (clock.now() - start < seconds * 1000) {
    const wait = limiter.take('ep', rate);
    if (wait === 0) perSecond[Math.floor((clock.now() - start) / 1000)]! += 1;
    else clock.advance(wait);
  }
  return perSecond;
}

describe('per-endpoint rate limiter', () => {
  it('allows a small burst, then tells how long to wait', () => {
    const clock = manualClock();
    const limiter = createRateLimiter(clock.now);
    for (let i = 0; i < 10; i++) assert.equal(limiter.take('ep', 100), 0, `burst message ${i + 1}`);
    assert.equal(limiter.take('ep', 100), 10);
    clock.advance(9);
    assert.equal(limiter.take('ep', 100), 1);
    clock.advance(1);
    assert.equal(limiter.take('ep', 100), 0);
  });

  it('a refused take consumes nothing', () => {
    const clock = manualClock();
    const limiter = createRateLimiter(clock.now);
    assert.equal(limiter.take('ep', 1), 0);
    for (let i = 0; i < 5; i++) assert.equal(limiter.take('ep', 1), 1000);
    clock.advance(1000);
    assert.equal(limiter.take('ep', 1), 0);
  });

  it('holds the long-run rate exactly (200/s over 10 s, 3/s over 5 s)', () => {
    const fast = simulate(200, 10);
    assert.ok(fast[0]! >= 200 && fast[0]! <= 200 + 20, `first second: rate plus at most the 0.1 s burst (${fast[0]})`);
    assert.ok(
      fast.slice(1).every((n) => n === 200),
      fast.join(','),
    );
    const slow = simulate(3, 5);
    assert.deepEqual(slow, [3, 3, 3, 3, 3]);
  });

  it('peek() reports the wait without taking a slot', () => {
    const clock = manualClock();
    const limiter = createRateLimiter(clock.now);
    assert.equal(limiter.peek('ep', 1), 0, 'untracked endpoint: allowed');
    assert.equal(limiter.size, 0);
    assert.equal(limiter.peek('ep', 1), 0);
    assert.equal(limiter.take('ep', 1), 0, 'peeking consumed nothing');
    assert.equal(limiter.peek('ep', 1), 1000);
    clock.advance(400);
    assert.equal(limiter.peek('ep', 1), 600);
    assert.equal(limiter.take('ep', 1), 600);
  });

  it('endpoints are independent', () => {
    const clock = manualClock();
    const limiter = createRateLimiter(clock.now);
    assert.equal(limiter.take('slow', 1), 0);
    assert.ok(limiter.take('slow', 1) > 0);
    assert.equal(limiter.take('other', 1), 0);
  });

  it('no rate, zero, negative or non-finite rates mean unlimited and are not tracked', () => {
    const limiter = createRateLimiter(manualClock().now);
    for (const rate of [null, undefined, 0, -5, Number.NaN, Number.POSITIVE_INFINITY]) {
      for (let i = 0; i < 1000; i++) assert.equal(limiter.take('ep', rate), 0);
    }
    assert.equal(limiter.size, 0);
  });

  it('a changed rate applies at once', () => {
    const clock = manualClock();
    const limiter = createRateLimiter(clock.now);
    for (let i = 0; i < 100; i++) limiter.take('ep', 1000);
    assert.equal(limiter.take('ep', 10), 100);
    clock.advance(100);
    assert.equal(limiter.take('ep', 10), 0);
  });

  it('a clock going backwards never grants extra messages', () => {
    const clock = manualClock();
    const limiter = createRateLimiter(clock.now);
    assert.equal(limiter.take('ep', 1), 0);
    clock.advance(-10_000);
    assert.ok(limiter.take('ep', 1) > 0);
  });

  it('forget() and the idle sweep bound memory', () => {
    const clock = manualClock();
    const limiter = createRateLimiter(clock.now, { maxTracked: 3 });
    for (const id of ['a', 'b', 'c']) limiter.take(id, 10);
    assert.equal(limiter.size, 3);
    limiter.forget('a');
    assert.equal(limiter.size, 2);
    limiter.take('a', 10);
    clock.advance(1000);
    limiter.take('d', 10);
    assert.equal(limiter.size, 1, 'full idle buckets were swept');
  });
});

describe('per-endpoint in-flight limiter', () => {
  it('caps concurrent deliveries per endpoint and frees slots on release', () => {
    const limiter = createInflightLimiter(2);
    assert.equal(limiter.tryAcquire('slow'), true);
    assert.equal(limiter.tryAcquire('slow'), true);
    assert.equal(limiter.tryAcquire('slow'), false);
    assert.equal(limiter.tryAcquire('healthy'), true, 'other endpoints are unaffected');
    assert.equal(limiter.inflight('slow'), 2);
    limiter.release('slow');
    assert.equal(limiter.tryAcquire('slow'), true);
    assert.equal(limiter.tryAcquire('slow', 5), true, 'a per-call maximum overrides the default');
  });

  it('release never goes below zero', () => {
    const limiter = createInflightLimiter(1);
    limiter.release('x');
    assert.equal(limiter.inflight('x'), 0);
    assert.equal(limiter.tryAcquire('x'), true);
    assert.equal(limiter.tryAcquire('x'), false);
  });
});
