import { readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { loadSharp } from '../../../../../core/sharp.ts';
import { RenditionError } from '../../rendition-error.ts';
import type { ConvertInput } from '../media.ts';
import type { MediaResult } from '../media-types.ts';

const require = createRequire(import.meta.url);

function pixelCheck(width: number, height: number, maxPixels: number): void {
  if (!(width > 0 && height > 0)) throw new RenditionError('not a readable image: no dimensions');
  if (width * height > maxPixels)
    throw new RenditionError(`the image has ${width * height} pixels, more than the limit of ${maxPixels}`);
}

/**
 * HEIC/HEIF: sharp's prebuilt libvips has no HEVC decoder, so heic-decode (libheif in
 * WebAssembly) decodes the primary image to RGBA, which the image pipeline takes as raw pixels.
 */
export async function convertHeic(input: ConvertInput): Promise<MediaResult> {
  const decode = require('heic-decode') as (o: {
    buffer: Uint8Array;
  }) => Promise<{ width: number; height: number; data: Uint8ClampedArray }>;
  let image: { width: number; height: number; data: Uint8ClampedArray };
  try {
    image = await decode({ buffer: await readFile(input.file) });
  } catch (error) {
    throw new RenditionError(`the HEIC/HEIF image could not be decoded: ${(error as Error)?.message ?? String(error)}`);
  }
  pixelCheck(image.width, image.height, input.maxPixels);
  return {
    visual: {
      kind: 'raw',
      raster: {
        data: Buffer.from(image.data.buffer, image.data.byteOffset, image.data.byteLength),
        width: image.width,
        height: image.height,
        channels: 4,
      },
    },
    extra: [],
    technical: {
      image_metadata: {
        fileType: 'HEIC',
        imageWidth: image.width,
        imageHeight: image.height,
        megapixels: Math.round((image.width * image.height) / 10_000) / 100,
        decodedBy: 'heic-decode (libheif)',
      },
    },
  };
}

/** The end of the JPEG starting at `start` (just past its EOI marker), or -1. */
function jpegEnd(data: Buffer, start: number): number {
  let i = start + 2;
  while (i + 4 <= data.length) {
    if (data[i] !== 0xff) return -1;
    const marker = data[i + 1]!;
    if (marker === 0xd9) return i + 2;
    if (marker === 0xff) {
      i += 1;
      continue;
    }
    if (marker >= 0xd0 && marker <= 0xd7) {
      i += 2;
      continue;
    }
    const length = data.readUInt16BE(i + 2);
    i += 2 + length;
    if (marker === 0xda) {
      // Entropy-coded data: runs until a marker that is neither a stuffed 0x00 nor a restart.
      while (
        i + 1 < data.length &&
        !(data[i] === 0xff && data[i + 1] !== 0x00 && !(data[i + 1]! >= 0xd0 && data[i + 1]! <= 0xd7))
      )
        i++;
    }
  }
  return -1;
}

/** Every complete JPEG stream embedded in a file, largest first. */
export function embeddedJpegs(data: Buffer): { start: number; end: number }[] {
  const found: { start: number; end: number }[] = [];
  let at = data.indexOf(Buffer.from([0xff, 0xd8, 0xff]), 0);
  while (at >= 0) {
    const end = jpegEnd(data, at);
    if (end > at) {
      found.push({ start: at, end });
      at = data.indexOf(Buffer.from([0xff, 0xd8, 0xff]), end);
    } else {
      at = data.indexOf(Buffer.from([0xff, 0xd8, 0xff]), at + 3);
    }
  }
  return found.sort((a, b) => b.end - b.start - (a.end - a.start));
}

/**
 * Camera RAW (DNG, CR2, CR3, NEF, ARW, ORF, RW2, RAF, …): cameras embed a full-size or large JPEG
 * preview; the largest one sharp can read becomes the source of the image renditions. The raw
 * sensor data is not developed.
 */
export async function convertRaw(input: ConvertInput): Promise<MediaResult> {
  const data = await readFile(input.file);
  const sharp = await loadSharp();
  for (const { start, end } of embeddedJpegs(data).slice(0, 8)) {
    const jpeg = data.subarray(start, end);
    const meta = await sharp(jpeg)
      .metadata()
      .catch(() => undefined);
    if (!meta?.width || !meta.height) continue;
    const path = join(input.dir, 'raw-preview.jpg');
    await writeFile(path, jpeg);
    return {
      visual: { kind: 'file', path },
      extra: [],
      technical: {
        image_metadata: {
          fileType: 'RAW',
          previewSource: 'embedded JPEG',
          previewWidth: meta.width,
          previewHeight: meta.height,
          previewBytes: jpeg.length,
        },
      },
    };
  }
  throw new RenditionError('the RAW file has no embedded JPEG preview to show');
}

/**
 * Photoshop (PSD/PSB): ag-psd reads the composite image the file stores (what Photoshop shows
 * flattened), layers skipped; it becomes the source of the image renditions.
 */
export async function convertPsd(input: ConvertInput): Promise<MediaResult> {
  const { readPsd, initializeCanvas } = require('ag-psd') as typeof import('ag-psd');
  // Pixels only, no canvas: ag-psd asks for ImageData objects, which plain arrays serve.
  initializeCanvas(
    () => {
      throw new RenditionError('the Photoshop file needs a canvas to decode');
    },
    (width: number, height: number) =>
      ({ width, height, data: new Uint8ClampedArray(width * height * 4), colorSpace: 'srgb' }) as never,
  );
  const data = await readFile(input.file);
  // Header first: dimensions and the pixel limit before anything is decoded.
  if (data.length < 26 || data.toString('latin1', 0, 4) !== '8BPS')
    throw new RenditionError('not a Photoshop file (no 8BPS signature)');
  pixelCheck(data.readUInt32BE(18), data.readUInt32BE(14), input.maxPixels);
  let psd: ReturnType<typeof readPsd>;
  try {
    psd = readPsd(data, { useImageData: true, skipLayerImageData: true, skipThumbnail: true });
  } catch (error) {
    throw new RenditionError(`the Photoshop file could not be read: ${(error as Error).message}`);
  }
  const image = psd.imageData;
  if (!image)
    throw new RenditionError('the Photoshop file stores no composite image (saved without "Maximize Compatibility")');
  const bytes = image.data as Uint8ClampedArray | Uint8Array;
  return {
    visual: {
      kind: 'raw',
      raster: {
        data: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
        width: image.width,
        height: image.height,
        channels: 4,
      },
    },
    extra: [],
    technical: {
      image_metadata: {
        fileType: 'PSD',
        imageWidth: psd.width,
        imageHeight: psd.height,
        layers: psd.children?.length ?? 0,
        colorMode: psd.colorMode ?? null,
        bitDepth: psd.bitsPerChannel ?? null,
        decodedBy: 'ag-psd (composite image)',
      },
    },
  };
}
