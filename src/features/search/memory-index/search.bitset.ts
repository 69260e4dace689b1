/**
 * Document sets as bitsets over doc_no (bit n set: document n is in the set): 1,000,000 documents
 * fit in 31,250 32-bit words, so AND, OR and counting a whole set take microseconds.
 */
export type Bitset = Uint32Array;

export const wordsFor = (capacity: number) => (capacity + 31) >>> 5;

export function newBitset(capacity: number): Bitset {
  return new Uint32Array(wordsFor(capacity));
}

export function setBit(b: Bitset, n: number): void {
  b[n >>> 5]! |= 1 << (n & 31);
}

export function clearBit(b: Bitset, n: number): void {
  b[n >>> 5]! &= ~(1 << (n & 31));
}

export function hasBit(b: Bitset, n: number): boolean {
  return (b[n >>> 5]! & (1 << (n & 31))) !== 0;
}

/** A copy sized for `capacity` bits (longer or shorter than the original). */
export function resized(b: Bitset, capacity: number): Bitset {
  const out = newBitset(capacity);
  out.set(b.length <= out.length ? b : b.subarray(0, out.length));
  return out;
}

export function fromDocs(capacity: number, docs: ArrayLike<number>): Bitset {
  const b = newBitset(capacity);
  for (let i = 0; i < docs.length; i++) setBit(b, docs[i]!);
  return b;
}

/** a &= b (b may be shorter: missing words are zero). */
export function andInto(a: Bitset, b: Bitset): void {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) a[i]! &= b[i]!;
  a.fill(0, n);
}

/** a |= b. */
export function orInto(a: Bitset, b: Bitset): void {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) a[i]! |= b[i]!;
}

function popcount32(v: number): number {
  v -= (v >>> 1) & 0x55555555;
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

export function count(b: Bitset): number {
  let n = 0;
  for (let i = 0; i < b.length; i++) if (b[i] !== 0) n += popcount32(b[i]!);
  return n;
}

/** The set's doc_nos, ascending. */
export function toDocs(b: Bitset): Int32Array {
  const out = new Int32Array(count(b));
  let k = 0;
  for (let i = 0; i < b.length; i++) {
    let w = b[i]!;
    while (w !== 0) {
      const low = w & -w;
      out[k++] = (i << 5) + (31 - Math.clz32(low));
      w ^= low;
    }
  }
  return out;
}
