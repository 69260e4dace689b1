import assert from 'node:assert/strict';
import { it } from 'node:test';
import { isUuid, newId } from './ids.ts';

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
