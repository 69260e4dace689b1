import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  createSecretKey,
  hkdfSync,
  randomBytes,
  timingSafeEqual,
  type KeyObject,
} from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Server-held key material, derived from one secret: keyed hashes for high-entropy secrets
 * (API keys, refresh tokens) and authenticated encryption for secrets that must be read back
 * (webhook signing secrets, OAuth client secrets). Nothing here is ever logged.
 *
 * Rotation (docs/operations.md › "Rotating the secret key", decision 0013): besides the current key a
 * keyring may hold previous keys (TESSERA_SECRET_KEY_PREVIOUS). The current key alone hashes and
 * encrypts; every held key verifies and decrypts. A key is named by its id, a short fingerprint
 * (an HMAC of a fixed label under the key, so it says nothing about the key).
 */
export interface Keyring {
  /** The current key's id (8 base64url characters). */
  readonly keyId: string;
  /** Every held key's id, current first. */
  readonly keyIds: readonly string[];
  /** HMAC-SHA256 of `data` under a per-purpose subkey of the current key, base64url. */
  hash(purpose: string, data: string): string;
  /** The same under a held key named by its id. */
  hashWith(keyId: string, purpose: string, data: string): string;
  /**
   * The hash under every held key, current first (one element without previous keys): for looking up a
   * stored hash that may have been made under a previous key.
   */
  hashes(purpose: string, data: string): string[];
  /** Whether `mac` is the hash of `data` under any held key (constant time per key). */
  verify(purpose: string, data: string, mac: string): boolean;
  /** AES-256-GCM under the current key: `v2.<key id>.<iv>.<tag>.<ciphertext>` in base64url parts. */
  encrypt(plaintext: string): string;
  /**
   * Opens a `v2` value with the key it names, or a `v1` value (made before key ids, no name) with
   * whichever held key opens it. Throws when no held key does (or the value was altered).
   */
  decrypt(sealed: string): string;
  /** Whether a sealed value is a `v2` value under the current key (nothing to re-encrypt). */
  isCurrent(sealed: string): boolean;
  /** The raw per-purpose subkey of a held key: for key material that must outlive a rotation (the audit chain). */
  subkey(keyId: string, purpose: string): Buffer;
}

const KEY_ID_LABEL = 'tessera key id v1';

interface HeldKey {
  id: string;
  subkey(purpose: string): Buffer;
  hash(purpose: string, data: string): string;
}

function holdKey(secret: string): HeldKey {
  const master = Buffer.from(secret, 'utf8');
  const subkeys = new Map<string, Buffer>();
  const subkey = (purpose: string): Buffer => {
    let key = subkeys.get(purpose);
    if (!key) {
      key = Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), `tessera:${purpose}`, 32));
      subkeys.set(purpose, key);
    }
    return key;
  };
  // HMAC with a KeyObject made once: from a Buffer, every createHmac builds a key object anew,
  // which was most of the cost of an API key check (keys are hashed on every request).
  const hashKeys = new Map<string, KeyObject>();
  const hash = (purpose: string, data: string): string => {
    let key = hashKeys.get(purpose);
    if (!key) hashKeys.set(purpose, (key = createSecretKey(subkey(`hash:${purpose}`))));
    return createHmac('sha256', key).update(data).digest('base64url');
  };
  return { id: hash('key-id', KEY_ID_LABEL).slice(0, 8), subkey, hash };
}

function open(key: HeldKey, iv: string, tag: string, body: string): string {
  const decipher = createDecipheriv('aes-256-gcm', key.subkey('encrypt'), Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
}

const sameText = (a: string, b: string): boolean => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/** A keyring for `secret` (the current key) and any previous keys, which only verify and decrypt. */
export function createKeyring(secret: string, previous: readonly string[] = []): Keyring {
  const current = holdKey(secret);
  const held: HeldKey[] = [current];
  for (const other of previous) {
    const key = holdKey(other);
    if (!held.some((k) => k.id === key.id)) held.push(key);
  }
  const byId = new Map(held.map((k) => [k.id, k]));
  const named = (keyId: string): HeldKey => {
    const key = byId.get(keyId);
    if (!key) throw new Error(`No key with id ${keyId} is held`);
    return key;
  };
  return {
    keyId: current.id,
    keyIds: held.map((k) => k.id),
    hash: current.hash,
    hashWith: (keyId, purpose, data) => named(keyId).hash(purpose, data),
    hashes: (purpose, data) => held.map((k) => k.hash(purpose, data)),
    verify(purpose, data, mac) {
      let ok = false;
      for (const key of held) if (sameText(key.hash(purpose, data), mac)) ok = true;
      return ok;
    },
    encrypt(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', current.subkey('encrypt'), iv);
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return [
        'v2',
        current.id,
        iv.toString('base64url'),
        cipher.getAuthTag().toString('base64url'),
        body.toString('base64url'),
      ].join('.');
    },
    decrypt(sealed) {
      const parts = sealed.split('.');
      if (parts[0] === 'v2' && parts.length === 5 && parts[2] && parts[3]) {
        const key = byId.get(parts[1]!);
        if (!key) throw new Error(`Sealed under a key this process does not hold (key id ${parts[1]})`);
        return open(key, parts[2], parts[3], parts[4]!);
      }
      if (parts[0] === 'v1' && parts.length === 4 && parts[1] && parts[2]) {
        let failure: unknown;
        for (const key of held) {
          try {
            return open(key, parts[1], parts[2], parts[3]!);
          } catch (error) {
            failure = error;
          }
        }
        throw failure;
      }
      throw new Error('Unrecognised sealed value');
    },
    isCurrent(sealed) {
      const parts = sealed.split('.');
      return parts[0] === 'v2' && parts[1] === current.id;
    },
    subkey: (keyId, purpose) => named(keyId).subkey(purpose),
  };
}

/**
 * The secret from TESSERA_SECRET_KEY, or else from `<dataDir>/secret.key`, made on first start.
 * Several instances sharing one database must share the secret: set TESSERA_SECRET_KEY.
 */
export function loadSecret(configured: string | undefined, file: string): string {
  if (configured) return configured;
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dirname(file), { recursive: true });
  const secret = randomBytes(32).toString('base64url');
  writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
  return secret;
}
