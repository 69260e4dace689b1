import { createHash } from 'node:crypto';
import { transform as esbuildTransform } from 'esbuild';
import { transform as cssTransform } from 'lightningcss';
import sharp from 'sharp';

export type ImageFormat = 'avif' | 'webp' | 'orig';

const IMAGE_TYPES = /^image\/(jpeg|png|webp|avif|tiff)\b/i;
const CSS_TYPE = /^text\/css\b/i;
const JS_TYPE = /^(application|text)\/(x-)?javascript\b/i;

export function isOptimizableImage(contentType: string | undefined): boolean {
  return contentType !== undefined && IMAGE_TYPES.test(contentType);
}

export interface OptimizerSettings {
  optimizerEnableWebP: boolean;
  optimizerEnableAvif: boolean;
  optimizerImageQuality: number;
  optimizerMaxWidth: number;
  optimizerMinifyCSS: boolean;
  optimizerMinifyJavaScript: boolean;
}

/** What the client accepts, best first: AVIF > WebP > original. */
export function acceptedFormats(accept: string | undefined, s: OptimizerSettings): ImageFormat[] {
  const a = (accept ?? '').toLowerCase();
  const out: ImageFormat[] = [];
  if (s.optimizerEnableAvif && a.includes('image/avif')) out.push('avif');
  if (s.optimizerEnableWebP && a.includes('image/webp')) out.push('webp');
  out.push('orig');
  return out;
}

/** One encoded representation of an image: resized to the zone's max width, at its quality. */
export async function encodeImage(
  source: Buffer,
  format: ImageFormat,
  s: OptimizerSettings,
): Promise<{ body: Buffer; contentType: string }> {
  let img = sharp(source, { failOn: 'none' }).rotate();
  if (s.optimizerMaxWidth > 0) img = img.resize({ width: s.optimizerMaxWidth, withoutEnlargement: true });
  const quality = s.optimizerImageQuality;
  if (format === 'avif')
    return {
      body: await img.avif({ quality: Math.max(1, quality - 20), effort: 4 }).toBuffer(),
      contentType: 'image/avif',
    };
  if (format === 'webp') return { body: await img.webp({ quality, effort: 4 }).toBuffer(), contentType: 'image/webp' };
  const meta = await sharp(source).metadata();
  switch (meta.format) {
    case 'jpeg':
      return { body: await img.jpeg({ quality, mozjpeg: true }).toBuffer(), contentType: 'image/jpeg' };
    case 'png':
      return { body: await img.png({ compressionLevel: 9 }).toBuffer(), contentType: 'image/png' };
    case 'webp':
      return { body: await img.webp({ quality }).toBuffer(), contentType: 'image/webp' };
    default:
      return { body: source, contentType: `image/${meta.format ?? 'octet-stream'}` };
  }
}

/** Minified CSS or JS for a stored body, or null when the type is not minified (or does not parse). */
export async function minify(
  body: Buffer,
  contentType: string | undefined,
  s: OptimizerSettings,
): Promise<Buffer | null> {
  if (!contentType) return null;
  try {
    if (s.optimizerMinifyCSS && CSS_TYPE.test(contentType)) {
      return Buffer.from(cssTransform({ filename: 'style.css', code: body, minify: true }).code);
    }
    if (s.optimizerMinifyJavaScript && JS_TYPE.test(contentType)) {
      const out = await esbuildTransform(body.toString('utf8'), { minify: true, loader: 'js', legalComments: 'none' });
      return Buffer.from(out.code);
    }
  } catch {
    return null;
  }
  return null;
}

export function variantEtag(etag: string | undefined, body: Buffer, format: string): string {
  const base = etag
    ? etag.replace(/^W\//, '').replace(/"/g, '')
    : createHash('sha1').update(body).digest('base64url').slice(0, 16);
  return `"${base}-${format}"`;
}
