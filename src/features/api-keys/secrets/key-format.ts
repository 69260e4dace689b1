import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * API key format: `tsk_` + 43 base62 characters (32 random bytes = 256 bits) + 6 base62
 * characters of CRC32 over everything before them. 53 characters, one "word" (double-click
 * selects it), matched by KEY_PATTERN so secret scanners find leaked keys, and checkable
 * offline so malformed keys are refused before any database access.
 *
 * keyHint (the last 4 characters) falls inside the checksum, so it reveals none of the random part.
 */
export const KEY_PREFIX = 'tsk_';
const SECRET_LENGTH = 43;
const CHECKSUM_LENGTH = 6;
export const KEY_LENGTH = KEY_PREFIX.length + SECRET_LENGTH + CHECKSUM_LENGTH;
/** Published pattern for secret scanners (gitleaks, trufflehog, GitHub custom patterns). */
export const KEY_PATTERN = /^tsk_[0-9A-Za-z]{49}$/;

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BASE = 62n;

/** Base62 of a big-endian unsigned integer, left-padded to `width`: no modulo bias on the bytes. */
function base62(bytes: Buffer, width: number): string {
  let n = BigInt(`0x${bytes.toString('hex') || '0'}`);
  let out = '';
  while (n > 0n) {
    out = ALPHABET[Number(n % BASE)]! + out;
    n /= BASE;
  }
  return out.padStart(width, '0');
}

function checksum(body: string): string {
  let n = crc32(body);
  let out = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = ALPHABET[n % 62]! + out;
    n = Math.floor(n / 62);
  }
  return out;
}

/** A fresh key. 62^43 > 2^256, so every 32-byte value has exactly one encoding. */
export function generateKey(): string {
  const body = KEY_PREFIX + base62(randomBytes(32), SECRET_LENGTH);
  return body + checksum(body);
}

/** Prefix, length, alphabet and checksum all right. Pure CPU: no I/O, well under a microsecond. */
export function isWellFormedKey(value: string): boolean {
  if (value.length !== KEY_LENGTH || !KEY_PATTERN.test(value)) return false;
  const body = value.slice(0, KEY_LENGTH - CHECKSUM_LENGTH);
  return checksum(body) === value.slice(KEY_LENGTH - CHECKSUM_LENGTH);
}

/** The random part alone (what a storage scan must never find). */
export function secretPart(key: string): string {
  return key.slice(KEY_PREFIX.length, KEY_PREFIX.length + SECRET_LENGTH);
}

export function keyHint(key: string): string {
  return key.slice(-4);
}
