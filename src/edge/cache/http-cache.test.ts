import assert from 'node:assert/strict';
import { it } from 'node:test';
import { etagMatches, freshness, notModified, parseRange, parseVary } from './http-cache.ts';
import { ipMatcher } from '../../features/cdn/edge-contract/contract.ts';

const opts = {
  edgeTtl: null,
  staleWhileUpdating: false,
  staleWhileOffline: false,
  nowMs: Date.parse('2026-01-01T00:00:00Z'),
};

it('freshness follows RFC 9111 for a shared cache', () => {
  assert.equal(freshness(200, { 'cache-control': 'max-age=10, s-maxage=20' }, opts).ttlMs, 20_000);
  assert.equal(freshness(200, { 'cache-control': 'max-age=10' }, opts).ttlMs, 10_000);
  assert.equal(freshness(200, { 'cache-control': 'no-store' }, opts).storable, false);
  assert.equal(freshness(200, { 'cache-control': 'private, max-age=5' }, opts).storable, false);
  assert.equal(freshness(200, { 'cache-control': 'max-age=5', 'set-cookie': 'a=b' }, opts).storable, false);
  assert.equal(freshness(200, { 'cache-control': 'max-age=5', vary: '*' }, opts).storable, false);
  assert.equal(freshness(500, { 'cache-control': 'max-age=5' }, opts).storable, false);
  assert.equal(freshness(200, {}, opts).storable, false);
  assert.equal(freshness(200, { etag: '"x"' }, opts).ttlMs, 0);
  assert.equal(freshness(200, { 'cache-control': 'no-cache, max-age=60' }, opts).alwaysRevalidate, true);
  assert.equal(
    freshness(200, { expires: 'Thu, 01 Jan 2026 00:01:00 GMT', date: 'Thu, 01 Jan 2026 00:00:00 GMT' }, opts).ttlMs,
    60_000,
  );
  assert.equal(
    freshness(200, { 'last-modified': 'Wed, 31 Dec 2025 14:00:00 GMT', date: 'Thu, 01 Jan 2026 00:00:00 GMT' }, opts)
      .ttlMs,
    3_600_000,
  );
  assert.equal(freshness(200, { 'cache-control': 'max-age=1' }, { ...opts, edgeTtl: 99 }).ttlMs, 99_000);
  const f = freshness(
    200,
    { 'cache-control': 'max-age=1, stale-while-revalidate=30, stale-if-error=60', age: '3' },
    opts,
  );
  assert.deepEqual([f.swrMs, f.sieMs, f.initialAgeMs], [30_000, 60_000, 3000]);
  assert.equal(
    freshness(
      200,
      { 'cache-control': 'max-age=1, must-revalidate' },
      { ...opts, staleWhileUpdating: true, staleWhileOffline: true },
    ).swrMs,
    0,
  );
  assert.ok(freshness(200, { 'cache-control': 'max-age=1' }, { ...opts, staleWhileUpdating: true }).swrMs > 0);
});

it('validators, ranges and Vary', () => {
  assert.ok(etagMatches('"a", W/"b"', '"b"'));
  assert.ok(etagMatches('*', '"z"'));
  assert.ok(!etagMatches('"a"', undefined));
  assert.ok(
    notModified({ ifModifiedSince: 'Thu, 01 Jan 2026 00:00:00 GMT' }, undefined, 'Wed, 31 Dec 2025 00:00:00 GMT'),
  );
  assert.ok(
    !notModified(
      { ifNoneMatch: '"x"', ifModifiedSince: 'Thu, 01 Jan 2026 00:00:00 GMT' },
      '"y"',
      'Wed, 31 Dec 2025 00:00:00 GMT',
    ),
  );
  assert.deepEqual(parseRange('bytes=0-0', 10), { kind: 'partial', start: 0, end: 0 });
  assert.deepEqual(parseRange('bytes=5-', 10), { kind: 'partial', start: 5, end: 9 });
  assert.deepEqual(parseRange('bytes=-4', 10), { kind: 'partial', start: 6, end: 9 });
  assert.deepEqual(parseRange('bytes=3-100', 10), { kind: 'partial', start: 3, end: 9 });
  assert.deepEqual(parseRange('bytes=10-', 10), { kind: 'unsatisfiable' });
  assert.deepEqual(parseRange('bytes=0-1,3-4', 10), { kind: 'full' });
  assert.deepEqual(parseRange('items=0-1', 10), { kind: 'full' });
  assert.deepEqual(parseVary('Accept-Encoding, accept-language'), ['accept-encoding', 'accept-language']);
});

it('IP rules match addresses and CIDR ranges of both families', () => {
  const m = ipMatcher(['10.0.0.0/8', '192.0.2.7', '2001:db8::/32']);
  assert.ok(m.matches('10.1.2.3'));
  assert.ok(m.matches('::ffff:10.9.9.9'));
  assert.ok(m.matches('192.0.2.7'));
  assert.ok(!m.matches('192.0.2.8'));
  assert.ok(m.matches('2001:db8:1::5'));
  assert.ok(!m.matches('2001:db9::1'));
  assert.ok(!m.matches('not-an-ip'));
});
