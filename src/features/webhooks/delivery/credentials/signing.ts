// Standard Webhooks (v1, HMAC-SHA256) signing for outgoing deliveries. We sign with node:crypto
// (about 5x faster than the pure-JS hash inside the `standardwebhooks` package); tests use that
// package as the independent consumer-side oracle.
import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';
export const USER_AGENT = 'Tessera-Webhooks/1.0';
/** Standard Webhooks allows 24–64 byte keys; shorter ones are refused (an invalid base64 string
 * silently decoding to a near-empty key is a known bug class in other SDKs). */
export const MIN_SECRET_BYTES = 24;
export const MAX_SECRET_BYTES = 64;

export interface WebhookHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
  'content-type': 'application/json';
  'user-agent': string;
  [name: string]: string;
}

/** A fresh signing secret: `whsec_` + base64 of 32 random bytes. */
export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** Decodes a `whsec_…` secret into its HMAC key; throws on malformed or too short/long secrets. */
export function secretKey(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  if (!BASE64.test(encoded) || encoded.length % 4 !== 0) throw new Error('webhook secret is not valid base64');
  const key = Buffer.from(encoded, 'base64');
  if (key.length < MIN_SECRET_BYTES || key.length > MAX_SECRET_BYTES) {
    throw new Error(`webhook secret must decode to ${MIN_SECRET_BYTES}–${MAX_SECRET_BYTES} bytes`);
  }
  return key;
}

/** True when `secret` is a usable `whsec_…` secret (for validating operator-supplied secrets). */
export function isValidSecret(secret: string): boolean {
  if (!secret.startsWith(SECRET_PREFIX)) return false;
  try {
    secretKey(secret);
    return true;
  } catch {
    return false;
  }
}

function checkSignedParts(msgId: string, timestampSeconds: number): void {
  // The signed content is `id.timestamp.body`; a '.' in the id would make it ambiguous.
  if (msgId.length === 0 || msgId.includes('.'))
    throw new Error('webhook message id must be non-empty and contain no "."');
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0)
    throw new Error('webhook timestamp must be integer Unix seconds');
}

// Decoding a secret and importing it as a key is most of the cost of signing a small body; each
// secret's key is made once (bounded: the oldest entry goes first).
const keyCache = new Map<string, KeyObject>();
function hmacKey(secret: string): KeyObject {
  let key = keyCache.get(secret);
  if (key === undefined) {
    key = createSecretKey(secretKey(secret));
    if (keyCache.size >= 1000) keyCache.delete(keyCache.keys().next().value!);
    keyCache.set(secret, key);
  }
  return key;
}

/** One `v1,<base64>` signature of `${msgId}.${timestampSeconds}.${body}`. */
export function sign(secret: string, msgId: string, timestampSeconds: number, body: string | Buffer): string {
  checkSignedParts(msgId, timestampSeconds);
  const hmac = createHmac('sha256', hmacKey(secret));
  hmac.update(`${msgId}.${timestampSeconds}.`);
  hmac.update(body);
  return `v1,${hmac.digest('base64')}`;
}

/** Space-separated signatures, one per secret (during a rotation overlap: old and new). */
export function signatureHeader(
  secrets: readonly string[],
  msgId: string,
  timestampSeconds: number,
  body: string | Buffer,
): string {
  if (secrets.length === 0) throw new Error('at least one webhook secret is required');
  return [...new Set(secrets)].map((s) => sign(s, msgId, timestampSeconds, body)).join(' ');
}

/** The headers of one delivery attempt. `timestamp` is Unix seconds of this attempt. */
export function webhookHeaders(input: {
  msgId: string;
  timestamp: number;
  body: string | Buffer;
  secrets: readonly string[];
}): WebhookHeaders {
  return {
    'webhook-id': input.msgId,
    'webhook-timestamp': String(input.timestamp),
    'webhook-signature': signatureHeader(input.secrets, input.msgId, input.timestamp, input.body),
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
  };
}
