import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  createSecretKey,
  hkdfSync,
  randomBytes,
  type KeyObject,
} from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Server-held key material, derived from one secret: keyed hashes for high-entropy secrets
 * (API keys, refresh tokens) and authenticated encryption for secrets that must be read back
 * (webhook signing secrets, OAuth client secrets). Nothing here is ever logged.
 */
export interface Keyring {
  /** HMAC-SHA256 of `data` under a per-purpose subkey, base64url. */
  hash(purpose: string, data: string): string;
  /** AES-256-GCM; output is `v1.<iv>.<tag>.<ciphertext>` in base64url parts. */
  encrypt(plaintext: string): string;
  decrypt(sealed: string): string;
}

export function createKeyring(secret: string): Keyring {
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
  return {
    hash(purpose, data) {
      let key = hashKeys.get(purpose);
      if (!key) hashKeys.set(purpose, (key = createSecretKey(subkey(`hash:${purpose}`))));
      return createHmac('sha256', key).update(data).digest('base64url');
    },
    encrypt(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', subkey('encrypt'), iv);
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return [
        'v1',
        iv.toString('base64url'),
        cipher.getAuthTag().toString('base64url'),
        body.toString('base64url'),
      ].join('.');
    },
    decrypt(sealed) {
      const [version, iv, tag, body] = sealed.split('.');
      if (version !== 'v1' || !iv || !tag || body === undefined) throw new Error('Unrecognised sealed value');
      const decipher = createDecipheriv('aes-256-gcm', subkey('encrypt'), Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
    },
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
