import assert from 'node:assert/strict';
import { it } from 'node:test';
import { createHash } from 'node:crypto';
import { derivedId, isUuid, newId } from './ids.ts';

it('makes distinct UUIDv7 ids from the pooled random bytes, past many pool refills', () => {
  const ms = Date.UTC(2026, 0, 2, 3, 4, 5);
  const ids = Array.from({ length: 5000 }, () => newId(ms));
  assert.equal(new Set(ids).size, ids.length);
  for (const id of ids) {
    assert.ok(isUuid(id), id);
    assert.equal(id[14], '7', `version 7: ${id}`);
    assert.ok('89ab'.includes(id[19]!), `RFC 4122 variant: ${id}`);
    assert.equal(parseInt(id.slice(0, 8) + id.slice(9, 13), 16), ms, `time prefix: ${id}`);
  }
  // The random part differs between consecutive ids (no slice of the pool is reused).
  assert.notEqual(ids[0]!.slice(15), ids[1]!.slice(15));
});

it('derives the same UUIDv7 from the same time and key, and a different one from another key', () => {
  const ms = Date.UTC(2026, 10, 29, 21, 40, 0);
  const a = derivedId(ms, 'event-a' + 'endpoint-1');
  assert.equal(derivedId(ms, 'event-a' + 'endpoint-1'), a);
  assert.ok(isUuid(a), a);
  assert.equal(a[14], '7', `version 7: ${a}`);
  assert.ok('89ab'.includes(a[19]!), `RFC 4122 variant: ${a}`);
  assert.equal(parseInt(a.slice(0, 8) + a.slice(9, 13), 16), ms, `time prefix: ${a}`);
  assert.notEqual(derivedId(ms, 'event-a' + 'endpoint-2'), a);
  assert.notEqual(derivedId(ms, 'event-b' + 'endpoint-1').slice(15), a.slice(15));
  // The bits after the time are SHA-256 of the key (version and variant bits aside).
  const hash = createHash('sha256')
    .update('event-a' + 'endpoint-1')
    .digest('hex');
  assert.equal(a.slice(24), hash.slice(20, 32));
});
