import type { Metadata, OutputInfo, SharpOptions } from 'sharp';
import { loadSharp } from '../../../../core/sharp.ts';
import type { RenditionName } from '../../views/present.ts';
import type { RawRaster } from '../media/media-types.ts';
import { RenditionError } from '../rendition-error.ts';

/**
 * The image pipeline itself, with nothing but sharp behind it: the render process
 * (render-process.child.ts) loads this module alone, and the job calls it there (render-process.ts).
 */
export interface RenditionSpec {
  name: RenditionName;
  /** The box the rendition fits inside (never upscaled). */
  size: number;
}

export interface RenderedImage {
  name: RenditionName;
  data: Buffer;
  width: number;
  height: number;
  contentType: string;
}

export interface SourceInfo {
  format: string;
  width: number;
  height: number;
  hasAlpha: boolean;
  meta: Metadata;
}

/** A file path, encoded bytes, or decoded pixels (a PDF page, a HEIC or PSD composite). */
export type ImageInput = string | Buffer | RawRaster;

export function source(sharp: Awaited<ReturnType<typeof loadSharp>>, input: ImageInput, options: SharpOptions) {
  if (typeof input === 'string' || Buffer.isBuffer(input)) return sharp(input, options);
  return sharp(input.data, { ...options, raw: { width: input.width, height: input.height, channels: input.channels } });
}

export function fitInside(width: number, height: number, box: number): { width: number; height: number } {
  const scale = Math.min(1, box / Math.max(width, height));
  return { width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)) };
}

/** sharp's timeout error as a RenditionError naming the setting (undefined for any other error). */
export function timedOut(error: unknown, seconds: number): RenditionError | undefined {
  if (!/^timeout:/.test((error as Error)?.message ?? '')) return undefined;
  return new RenditionError(`the image took longer than ${seconds} s to render (TESSERA_RENDITION_TIMEOUT_SECONDS)`);
}

/**
 * Decodes the source once (shrink-on-load to the largest rendition wanted, EXIF orientation
 * applied, sRGB) and derives every rendition from that one decoded image.
 */
export async function renderImage(
  input: ImageInput,
  specs: readonly RenditionSpec[],
  info: Pick<SourceInfo, 'hasAlpha'>,
  maxPixels: number,
  timeoutSeconds = 30,
): Promise<RenderedImage[]> {
  const largest = Math.max(...specs.map((s) => s.size));
  const sharp = await loadSharp();
  let base: { data: Buffer; info: OutputInfo };
  const started = performance.now();
  try {
    base = await source(sharp, input, { limitInputPixels: maxPixels, failOn: 'error' })
      .timeout({ seconds: timeoutSeconds })
      .autoOrient()
      .resize(largest, largest, { fit: 'inside', withoutEnlargement: true })
      .toColourspace('srgb')
      .raw()
      .toBuffer({ resolveWithObject: true });
  } catch (error) {
    throw (
      timedOut(error, timeoutSeconds) ??
      new RenditionError(`the image could not be decoded: ${(error as Error).message}`)
    );
  }
  // sharp checks its timeout only between pixel batches: a source drawn in one call (an SVG filter)
  // can finish past the limit unchecked. The limit holds anyway: such a rendition is abandoned.
  if (performance.now() - started > timeoutSeconds * 1000)
    throw timedOut(new Error('timeout: decoding'), timeoutSeconds)!;
  const raw = { width: base.info.width, height: base.info.height, channels: base.info.channels as 1 | 2 | 3 | 4 };
  const alpha = info.hasAlpha && (raw.channels === 4 || raw.channels === 2);
  return Promise.all(
    specs.map(async (spec) => {
      const target = fitInside(raw.width, raw.height, spec.size);
      let img = sharp(base.data, { raw }).timeout({ seconds: timeoutSeconds });
      if (target.width !== raw.width || target.height !== raw.height)
        img = img.resize(target.width, target.height, { fit: 'fill' });
      const encoded = alpha ? img.png({ compressionLevel: 6 }) : img.jpeg({ quality: 80 });
      const data = await encoded.toBuffer().catch((error: unknown) => {
        throw timedOut(error, timeoutSeconds) ?? error;
      });
      return {
        name: spec.name,
        data,
        width: target.width,
        height: target.height,
        contentType: alpha ? 'image/png' : 'image/jpeg',
      };
    }),
  );
}
