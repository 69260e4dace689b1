import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { it } from 'node:test';
import { MAX_TOKEN_LIFETIME_SECONDS, signToken, verifyToken } from './zone-model.ts';

const NOW = 1_790_000_000;

it('signed URL tokens: path, expiry and optional IP binding', () => {
  const t = signToken('k', '/a.jpg', NOW + 1000);
  assert.ok(verifyToken('k', '/a.jpg', t, String(NOW + 1000), NOW));
  assert.ok(!verifyToken('k', '/a.jpg', t, String(NOW + 1000), NOW + 1001), 'expired');
  assert.ok(!verifyToken('k', '/b.jpg', t, String(NOW + 1000), NOW));
  assert.ok(!verifyToken('other', '/a.jpg', t, String(NOW + 1000), NOW));
  const ip = signToken('k', '/a.jpg', NOW + 1000, '1.2.3.4');
  assert.ok(verifyToken('k', '/a.jpg', ip, String(NOW + 1000), NOW, '1.2.3.4'));
  assert.ok(!verifyToken('k', '/a.jpg', ip, String(NOW + 1000), NOW, '1.2.3.5'));
  assert.ok(!verifyToken('k', '/a.jpg', ip, String(NOW + 1000), NOW), 'an IP-bound token without the IP');
});

it('signed URL tokens: no digit moves between path, expiry and IP (moved, truncated, extended variants)', () => {
  const e = NOW + 3600;
  const t = signToken('k', '/image01', e);
  // moved digit: the path loses its last digit, expires gains it in front (the year-2343 exploit)
  assert.ok(!verifyToken('k', '/image0', t, `1${e}`, NOW));
  // truncated: the same token on a shorter path or with a shorter expiry
  assert.ok(!verifyToken('k', '/image0', t, String(e), NOW));
  assert.ok(!verifyToken('k', '/image01', t, String(e).slice(0, -1), Number(String(e).slice(0, -1)) - 10));
  // extended: the same token on a longer path or with an extra digit
  assert.ok(!verifyToken('k', '/image011', t, String(e), NOW));
  assert.ok(!verifyToken('k', '/image01', t, `${e}0`, NOW));
  // a token signed with the digit in the expiry does not serve the path that carries it
  const moved = signToken('k', '/image0', Number(`1${e}`));
  assert.ok(!verifyToken('k', '/image01', moved, String(e), NOW));
  // path and IP cannot trade characters either
  const withIp = signToken('k', '/a', e, '1.2.3.4');
  assert.ok(!verifyToken('k', '/a', withIp, String(e), NOW, '1.2.3.4x'));
  assert.ok(!verifyToken('k', '/a1', signToken('k', '/a', e, '1.2.3.4'), String(e), NOW, '.2.3.4'));
});

it('signed URL tokens: expiry must be a plain decimal within the longest lifetime', () => {
  const far = NOW + MAX_TOKEN_LIFETIME_SECONDS + 3600;
  assert.ok(!verifyToken('k', '/a', signToken('k', '/a', far), String(far), NOW), 'beyond the longest lifetime');
  const e = NOW + MAX_TOKEN_LIFETIME_SECONDS;
  assert.ok(verifyToken('k', '/a', signToken('k', '/a', e), String(e), NOW));
  const t = signToken('k', '/a', NOW + 60);
  for (const written of [
    `0${NOW + 60}`,
    `${NOW + 60}.0`,
    ` ${NOW + 60}`,
    `+${NOW + 60}`,
    `0x${(NOW + 60).toString(16)}`,
    `${(NOW + 60) / 10}e1`,
    '',
    'NaN',
  ]) {
    assert.ok(!verifyToken('k', '/a', t, written, NOW), written);
  }
});

it('signed URL tokens: the old unkeyed SHA-256(key + path + expires) format is refused', () => {
  const e = NOW + 3600;
  const old = createHash('sha256').update(`k/a.jpg${e}`).digest('base64url');
  assert.ok(!verifyToken('k', '/a.jpg', old, String(e), NOW));
  assert.notEqual(signToken('k', '/a.jpg', e), old);
});
