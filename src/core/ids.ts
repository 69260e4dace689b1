import { createHash, randomFillSync } from 'node:crypto';

// Random bytes are drawn from the CSPRNG 4 KiB at a time (as crypto.randomUUID does): one
// randomBytes(16) call per id cost about a tenth of a bulk create's CPU. Each slice is used once.
const POOL = Buffer.alloc(4096);
let poolOffset = POOL.length;
function random16(): Buffer {
  if (poolOffset + 16 > POOL.length) {
    randomFillSync(POOL);
    poolOffset = 0;
  }
  const bytes = POOL.subarray(poolOffset, poolOffset + 16);
  poolOffset += 16;
  return bytes;
}

/**
 * UUID version 7: time-ordered, so primary keys stay local in indexes and cursors sort by
 * creation. `ms` lets callers pin the timestamp part to an injected clock.
 */
export function newId(ms: number = Date.now()): string {
  const bytes = random16();
  bytes.writeUIntBE(ms, 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * A UUID version 7 derived from its inputs: the time part is `ms`, the 74 other bits come from
 * SHA-256 of `key`. The same (ms, key) gives the same id, so a row written again after a crash (a
 * webhook message re-sent before its first outcome was recorded) keeps its id.
 */
export function derivedId(ms: number, key: string): string {
  const bytes = createHash('sha256').update(key).digest().subarray(0, 16);
  bytes.writeUIntBE(ms, 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}
