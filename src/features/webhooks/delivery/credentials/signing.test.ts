import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import {
  generateSecret,
  isValidSecret,
  secretKey,
  sign,
  signatureHeader,
  USER_AGENT,
  webhookHeaders,
} from './signing.ts';

const nowSeconds = () => Math.floor(Date.now() / 1000);

describe('webhook signing (Standard Webhooks v1)', () => {
  it('matches the Standard Webhooks known-answer vector', () => {
    const signature = sign(
      'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      1614265330,
      '{"test": 2432232314}',
    );
    assert.equal(signature, 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('generates whsec_ secrets of 32 random bytes that are all different', () => {
    const a = generateSecret();
    const b = generateSecret();
    assert.match(a, /^whsec_[A-Za-z0-9+/]+=*$/);
    assert.equal(secretKey(a).length, 32);
    assert.notEqual(a, b);
    assert.ok(isValidSecret(a));
  });

  it('produces headers the standardwebhooks library verifies', () => {
    const secret = generateSecret();
    const body = JSON.stringify({
      eventType: 'asset.created',
      event: { id: 'asset-created-1' },
      asset: { name: 'ünïcødé ✓' },
    });
    const headers = webhookHeaders({ msgId: 'msg_01', timestamp: nowSeconds(), body, secrets: [secret] });
    assert.equal(headers['content-type'], 'application/json');
    assert.equal(headers['user-agent'], USER_AGENT);
    assert.equal(headers['webhook-id'], 'msg_01');
    assert.match(headers['webhook-timestamp'], /^\d+$/);
    const payload = new Webhook(secret).verify(body, headers);
    assert.deepEqual(payload, JSON.parse(body));
  });

  it('verifies with both the old and the new secret during a rotation overlap', () => {
    const oldSecret = generateSecret();
    const newSecret = generateSecret();
    const body = '{"eventType":"asset.updated"}';
    const headers = webhookHeaders({
      msgId: 'msg_rot',
      timestamp: nowSeconds(),
      body,
      secrets: [oldSecret, newSecret],
    });
    assert.equal(headers['webhook-signature'].split(' ').length, 2);
    assert.doesNotThrow(() => new Webhook(oldSecret).verify(body, headers));
    assert.doesNotThrow(() => new Webhook(newSecret).verify(body, headers));
    assert.throws(() => new Webhook(generateSecret()).verify(body, headers));
  });

  it('agrees with the library on random bodies including empty and binary-ish ones', () => {
    const secret = generateSecret();
    const ts = nowSeconds();
    const lib = new Webhook(secret);
    for (const body of ['', '{}', 'x'.repeat(100_000), '\u0000\u2028😀', JSON.stringify({ n: Math.random() })]) {
      assert.equal(signatureHeader([secret], 'msg_x', ts, body), lib.sign('msg_x', new Date(ts * 1000), body));
    }
  });

  it('a tampered body or timestamp fails verification', () => {
    const secret = generateSecret();
    const ts = nowSeconds();
    const headers = webhookHeaders({ msgId: 'msg_t', timestamp: ts, body: '{"a":1}', secrets: [secret] });
    assert.throws(() => new Webhook(secret).verify('{"a":2}', headers));
    assert.throws(() => new Webhook(secret).verify('{"a":1}', { ...headers, 'webhook-timestamp': String(ts + 1) }));
  });

  it('refuses malformed secrets, ids with dots and non-integer timestamps', () => {
    assert.equal(isValidSecret('whsec_short'), false);
    assert.equal(isValidSecret('whsec_!!!notbase64!!!'), false);
    assert.equal(isValidSecret('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'), false);
    assert.throws(() => sign('whsec_c2hvcnQ=', 'msg', 1, '{}'), /bytes/);
    assert.throws(() => sign(generateSecret(), 'msg.1', 1, '{}'), /message id/);
    assert.throws(() => sign(generateSecret(), 'msg', 1.5, '{}'), /timestamp/);
    assert.throws(() => signatureHeader([], 'msg', 1, '{}'), /at least one/);
  });
});
