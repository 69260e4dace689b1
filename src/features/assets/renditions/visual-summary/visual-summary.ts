import { rgbaToThumbHash } from 'thumbhash';
import { loadSharp } from '../../../../core/sharp.ts';

/** What a client paints before the thumbnail loads (issue 25 item 7): stored as JSON in assets.placeholder. */
export interface Placeholder {
  /** ThumbHash (https://evanw.github.io/thumbhash/) of the picture, base64: decoded client-side to a blurred preview. */
  thumbhash: string;
  /** The picture's dominant colour, #rrggbb. */
  dominantColor: string;
}

/** A 64-bit difference hash (dHash) as two unsigned 32-bit halves (asset_visual_hashes.hash_hi/hash_lo). */
export interface VisualHash {
  hi: number;
  lo: number;
}

export interface VisualSummary {
  placeholder: Placeholder;
  hash: VisualHash;
}

const hex = (n: number) =>
  Math.max(0, Math.min(255, Math.round(n)))
    .toString(16)
    .padStart(2, '0');

/**
 * The placeholder and perceptual hash of one picture, from a small rendition (the thumbnail) or any
 * image sharp reads: ThumbHash of the picture fitted in 100×100 (alpha kept), sharp's dominant
 * colour, and the dHash of its 9×8 greyscale reduction (each bit: is a pixel brighter than its
 * right neighbour), which resizing and recompressing barely change.
 */
export async function visualSummary(input: Buffer): Promise<VisualSummary> {
  const sharp = await loadSharp();
  // Three reads of the same small picture, at once (one after another, each waited for a thread).
  const [small, { dominant }, hash] = await Promise.all([
    sharp(input, { failOn: 'error' })
      .resize(100, 100, { fit: 'inside' })
      .ensureAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true }),
    sharp(input).stats(),
    dHash(input),
  ]);
  const thumbhash = Buffer.from(rgbaToThumbHash(small.info.width, small.info.height, small.data)).toString('base64');
  return {
    placeholder: { thumbhash, dominantColor: `#${hex(dominant.r)}${hex(dominant.g)}${hex(dominant.b)}` },
    hash,
  };
}

/** The 64-bit dHash of an image (see visualSummary). */
export async function dHash(input: Buffer): Promise<VisualHash> {
  const sharp = await loadSharp();
  // Flattened on white so a transparent picture hashes as it is usually shown.
  const { data } = await sharp(input, { failOn: 'error' })
    .flatten({ background: '#ffffff' })
    .greyscale()
    .resize(9, 8, { fit: 'fill', kernel: 'cubic' })
    .raw()
    .toBuffer({ resolveWithObject: true });
  let hi = 0;
  let lo = 0;
  for (let y = 0; y < 8; y++)
    for (let x = 0; x < 8; x++) {
      const bit = data[y * 9 + x]! > data[y * 9 + x + 1]! ? 1 : 0;
      const i = y * 8 + x;
      if (i < 32) hi = (hi << 1) | bit;
      else lo = (lo << 1) | bit;
    }
  return { hi: hi >>> 0, lo: lo >>> 0 };
}

/** Bits that differ between two hashes (0: the same picture for dHash; 64: opposite). */
export function hammingDistance(a: VisualHash, b: VisualHash): number {
  return popcount((a.hi ^ b.hi) >>> 0) + popcount((a.lo ^ b.lo) >>> 0);
}

/** Set bits of a 32-bit value. */
export function popcount(n: number): number {
  let v = n - ((n >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}
