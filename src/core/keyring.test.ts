import assert from 'node:assert/strict';
import { createCipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { createKeyring } from './keyring.ts';

const K1 = 'one-'.repeat(10);
const K2 = 'two-'.repeat(10);
const K3 = 'three-'.repeat(8);

/** A value sealed the way Tessera did before key ids (`v1.<iv>.<tag>.<ct>`), to prove they still open. */
function sealV1(secret: string, plaintext: string): string {
  const key = Buffer.from(hkdfSync('sha256', Buffer.from(secret), Buffer.alloc(0), 'tessera:encrypt', 32));
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', iv, cipher.getAuthTag(), body]
    .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
    .join('.');
}

describe('keyring with key ids (secret rotation, decision 0013)', () => {
  it('tags sealed values with the current key id, a fingerprint that differs per key and reveals nothing', () => {
    const one = createKeyring(K1);
    const two = createKeyring(K2, [K1]);
    assert.match(one.keyId, /^[A-Za-z0-9_-]{8}$/);
    assert.notEqual(one.keyId, two.keyId);
    assert.equal(createKeyring(K1).keyId, one.keyId, 'stable across processes');
    assert.deepEqual(two.keyIds, [two.keyId, one.keyId]);
    const sealed = two.encrypt('whsec_secret');
    const parts = sealed.split('.');
    assert.equal(parts.length, 5);
    assert.equal(parts[0], 'v2');
    assert.equal(parts[1], two.keyId);
    assert.ok(!sealed.includes('whsec_secret'));
    assert.equal(two.isCurrent(sealed), true);
    assert.equal(one.isCurrent(sealed), false);
  });

  it('decrypts with the key a value names: the previous key opens the old, only holders open the new', () => {
    const one = createKeyring(K1);
    const old = one.encrypt('signing key');
    const rotated = createKeyring(K2, [K1]);
    assert.equal(rotated.decrypt(old), 'signing key');
    const fresh = rotated.encrypt('new secret');
    assert.throws(() => one.decrypt(fresh), /does not hold/);
    // Staged: the old key current, the new one accepted: values sealed by rotated processes open.
    assert.equal(createKeyring(K1, [K2]).decrypt(fresh), 'new secret');
    assert.throws(() => createKeyring(K2).decrypt(old), /does not hold/);
  });

  it('opens v1 values (sealed before key ids) with whichever held key opens them', () => {
    const legacy = sealV1(K1, 'legacy secret');
    assert.equal(createKeyring(K1).decrypt(legacy), 'legacy secret');
    assert.equal(createKeyring(K2, [K3, K1]).decrypt(legacy), 'legacy secret');
    assert.throws(() => createKeyring(K2, [K3]).decrypt(legacy));
    assert.equal(createKeyring(K1).isCurrent(legacy), false, 'a v1 value is always re-encrypted');
  });

  it('rejects altered values: ciphertext, tag, iv, and a key id swapped for another held key', () => {
    const keys = createKeyring(K2, [K1]);
    const sealed = keys.encrypt('secret value');
    const [v, kid, iv, tag, body] = sealed.split('.') as [string, string, string, string, string];
    const flip = (part: string) => {
      const bytes = Buffer.from(part, 'base64url');
      bytes[0] = bytes[0]! ^ 1;
      return bytes.toString('base64url');
    };
    for (const altered of [
      [v, kid, iv, tag, flip(body)],
      [v, kid, iv, flip(tag), body],
      [v, kid, flip(iv), tag, body],
      [v, createKeyring(K1).keyId, iv, tag, body],
      [v, kid, iv, tag],
      ['v3', kid, iv, tag, body],
    ])
      assert.throws(() => keys.decrypt(altered.join('.')), `${altered[0]} ${altered.length}`);
    const legacy = sealV1(K1, 'x').split('.');
    legacy[3] = flip(legacy[3]!);
    assert.throws(() => keys.decrypt(legacy.join('.')));
  });

  it('hashes under the current key and verifies under any held key', () => {
    const one = createKeyring(K1);
    const two = createKeyring(K2, [K1]);
    const h1 = one.hash('api-key', 'tsk_x');
    assert.equal(two.hashWith(one.keyId, 'api-key', 'tsk_x'), h1);
    assert.deepEqual(two.hashes('api-key', 'tsk_x'), [two.hash('api-key', 'tsk_x'), h1]);
    assert.deepEqual(one.hashes('api-key', 'tsk_x'), [h1], 'one key: one hash, the hot path unchanged');
    assert.notEqual(two.hash('api-key', 'tsk_x'), h1);
    assert.equal(two.verify('api-key', 'tsk_x', h1), true);
    assert.equal(two.verify('api-key', 'tsk_x', two.hash('api-key', 'tsk_x')), true);
    assert.equal(one.verify('api-key', 'tsk_x', two.hash('api-key', 'tsk_x')), false);
    assert.equal(two.verify('api-key', 'tsk_y', h1), false);
    assert.equal(two.verify('other-purpose', 'tsk_x', h1), false, 'subkeys per purpose');
    assert.equal(two.verify('api-key', 'tsk_x', ''), false);
    assert.equal(createKeyring(K2).verify('api-key', 'tsk_x', h1), false, 'dropped key: no longer verifies');
    // The same key listed twice (current and previous) is held once.
    assert.equal(createKeyring(K1, [K1, K1]).keyIds.length, 1);
  });
});
