import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KEY_LENGTH, KEY_PATTERN, generateKey, isWellFormedKey, keyHint, secretPart } from './key-format.ts';

describe('API key format', () => {
  it('is tsk_ + 43 base62 characters of randomness + a 6-character checksum', () => {
    const key = generateKey();
    assert.equal(key.length, KEY_LENGTH);
    assert.equal(KEY_LENGTH, 53);
    assert.match(key, KEY_PATTERN);
    assert.ok(key.startsWith('tsk_'));
    assert.equal(secretPart(key).length, 43);
    assert.equal(keyHint(key), key.slice(-4));
    assert.ok(isWellFormedKey(key));
  });

  it('never repeats and always checks out over 20,000 keys', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      const key = generateKey();
      assert.ok(isWellFormedKey(key), key);
      seen.add(key);
    }
    assert.equal(seen.size, 20_000);
  });

  it('spreads the random part over the whole alphabet (bias-free encoding)', () => {
    const counts = new Map<string, number>();
    const n = 4000;
    for (let i = 0; i < n; i++) {
      // The first character only carries the top bits of 256; skip it.
      for (const ch of secretPart(generateKey()).slice(1)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    }
    assert.equal(counts.size, 62);
    const expected = (n * 42) / 62;
    let chi = 0;
    for (const c of counts.values()) chi += (c - expected) ** 2 / expected;
    // 61 degrees of freedom: p < 1e-8 beyond 140, so a pass is certain unless the encoding is biased.
    assert.ok(chi < 140, `chi-square ${chi}`);
  });

  it('rejects any single-character change, wrong prefix, wrong length or alphabet', () => {
    const key = generateKey();
    for (let i = 4; i < key.length; i++) {
      const swapped = key.slice(0, i) + (key[i] === 'a' ? 'b' : 'a') + key.slice(i + 1);
      assert.equal(isWellFormedKey(swapped), false, `position ${i}`);
    }
    assert.equal(isWellFormedKey(`tsx_${key.slice(4)}`), false);
    assert.equal(isWellFormedKey(key.slice(0, -1)), false);
    assert.equal(isWellFormedKey(`${key}0`), false);
    assert.equal(isWellFormedKey(`${key.slice(0, 10)}-${key.slice(11)}`), false);
    assert.equal(isWellFormedKey(''), false);
    assert.equal(isWellFormedKey(`tsk_${'A'.repeat(49)}`), false);
  });
});
