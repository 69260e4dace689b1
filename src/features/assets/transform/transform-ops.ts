import type { Sharp } from 'sharp';
import { invalidField } from '../../../core/http/errors.ts';
import { loadSharp } from '../../../core/sharp.ts';
import { RenditionError } from '../renditions/rendition-error.ts';
import { rasteriseSvg } from '../renditions/media/images/svg-raster.ts';
import { sniff } from '../upload/content-types.ts';
import { open as openFile, readFile } from 'node:fs/promises';

/**
 * The transformations Tessera offers on `POST /v1/asset/transform` (operationId GetTransformation).
 * The reference names one kind only, its proprietary `digimarc` watermark, which Tessera refuses
 * like any kind it does not have.
 */
export const TRANSFORM_KINDS = ['resize', 'crop', 'rotate', 'flip', 'format', 'quality', 'watermark'] as const;
export type TransformKind = (typeof TRANSFORM_KINDS)[number];

export const OUTPUT_FORMATS = ['jpeg', 'png', 'webp', 'avif', 'tiff', 'gif'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];
const FITS = ['inside', 'outside', 'cover', 'contain', 'fill'] as const;
const GRAVITIES = [
  'center',
  'north',
  'northeast',
  'east',
  'southeast',
  'south',
  'southwest',
  'west',
  'northwest',
] as const;
const MAX_SIDE = 16_384;

export type TransformOp =
  | { type: 'resize'; width?: number; height?: number; fit: (typeof FITS)[number]; withoutEnlargement: boolean }
  | { type: 'crop'; left: number; top: number; width: number; height: number }
  | { type: 'rotate'; angle: number; background: string }
  | { type: 'flip'; direction: 'vertical' | 'horizontal' }
  | { type: 'format'; format: OutputFormat }
  | { type: 'quality'; quality: number }
  | {
      type: 'watermark';
      text?: string;
      objectId?: string;
      gravity: (typeof GRAVITIES)[number];
      opacity: number;
      scale: number;
    };

/** The raw operation objects as the request schema lets them through (every field optional). */
export interface RawOp {
  type?: unknown;
  [key: string]: unknown;
}

const isInt = (v: unknown, min: number, max: number): v is number =>
  typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
const isNum = (v: unknown, min: number, max: number): v is number =>
  typeof v === 'number' && Number.isFinite(v) && v >= min && v <= max;
const oneOf = <T extends string>(list: readonly T[], v: unknown): v is T =>
  typeof v === 'string' && (list as readonly string[]).includes(v);

/**
 * Checks one operation and fills its defaults; a 400 names the field (`at` is the operation's path,
 * e.g. `body.transformations.0.transformations.1`) and, for an unknown kind, the kind.
 */
export function parseOp(raw: RawOp, at: string): TransformOp {
  const type = raw.type;
  if (typeof type !== 'string' || type === '')
    throw invalidField(`${at}.type`, `required: one of ${TRANSFORM_KINDS.join(', ')}`);
  if (!oneOf(TRANSFORM_KINDS, type))
    throw invalidField(`${at}.type`, `unknown transformation "${type}"; Tessera offers ${TRANSFORM_KINDS.join(', ')}`);
  const need = (name: string, ok: boolean, what: string) => {
    if (!ok) throw invalidField(`${at}.${name}`, what);
  };
  switch (type) {
    case 'resize': {
      need('width', raw.width === undefined || isInt(raw.width, 1, MAX_SIDE), `an integer from 1 to ${MAX_SIDE}`);
      need('height', raw.height === undefined || isInt(raw.height, 1, MAX_SIDE), `an integer from 1 to ${MAX_SIDE}`);
      need('width', raw.width !== undefined || raw.height !== undefined, 'width or height (or both) is required');
      need('fit', raw.fit === undefined || oneOf(FITS, raw.fit), `one of ${FITS.join(', ')}`);
      need(
        'withoutEnlargement',
        raw.withoutEnlargement === undefined || typeof raw.withoutEnlargement === 'boolean',
        'true or false',
      );
      return {
        type,
        width: raw.width as number | undefined,
        height: raw.height as number | undefined,
        fit: (raw.fit as (typeof FITS)[number] | undefined) ?? 'inside',
        withoutEnlargement: (raw.withoutEnlargement as boolean | undefined) ?? true,
      };
    }
    case 'crop':
      for (const name of ['left', 'top'] as const)
        need(name, isInt(raw[name] ?? 0, 0, MAX_SIDE), `an integer from 0 to ${MAX_SIDE}`);
      for (const name of ['width', 'height'] as const)
        need(name, isInt(raw[name], 1, MAX_SIDE), `required: an integer from 1 to ${MAX_SIDE}`);
      return {
        type,
        left: (raw.left as number | undefined) ?? 0,
        top: (raw.top as number | undefined) ?? 0,
        width: raw.width as number,
        height: raw.height as number,
      };
    case 'rotate':
      need('angle', isNum(raw.angle, -360, 360), 'required: degrees from -360 to 360 (clockwise)');
      need(
        'background',
        raw.background === undefined ||
          (typeof raw.background === 'string' && /^#[0-9a-fA-F]{6}([0-9a-fA-F]{2})?$/.test(raw.background)),
        'a colour #rrggbb or #rrggbbaa',
      );
      return { type, angle: raw.angle as number, background: (raw.background as string | undefined) ?? '#ffffff' };
    case 'flip':
      need(
        'direction',
        raw.direction === undefined || oneOf(['vertical', 'horizontal'] as const, raw.direction),
        'vertical or horizontal',
      );
      return { type, direction: (raw.direction as 'vertical' | 'horizontal' | undefined) ?? 'vertical' };
    case 'format':
      need(
        'format',
        oneOf(OUTPUT_FORMATS, raw.format === 'jpg' ? 'jpeg' : raw.format),
        `required: one of ${OUTPUT_FORMATS.join(', ')}`,
      );
      return { type, format: (raw.format === 'jpg' ? 'jpeg' : raw.format) as OutputFormat };
    case 'quality':
      need('quality', isInt(raw.quality, 1, 100), 'required: an integer from 1 to 100');
      return { type, quality: raw.quality as number };
    case 'watermark': {
      const text = typeof raw.text === 'string' ? raw.text.trim() : raw.text;
      need(
        'text',
        text === undefined || (typeof text === 'string' && text.length >= 1 && text.length <= 200),
        '1 to 200 characters',
      );
      need(
        'objectId',
        raw.objectId === undefined ||
          (typeof raw.objectId === 'string' && raw.objectId.length > 0 && raw.objectId.length <= 100),
        'the objectId of an image asset',
      );
      need(
        'text',
        (text === undefined) !== (raw.objectId === undefined),
        'a watermark is either text or an image (objectId): give exactly one',
      );
      need('gravity', raw.gravity === undefined || oneOf(GRAVITIES, raw.gravity), `one of ${GRAVITIES.join(', ')}`);
      need('opacity', raw.opacity === undefined || isNum(raw.opacity, 0, 1), 'a number from 0 to 1');
      need(
        'scale',
        raw.scale === undefined || isNum(raw.scale, 0.01, 1),
        'a number from 0.01 to 1 (a share of the image width)',
      );
      return {
        type,
        text: text as string | undefined,
        objectId: raw.objectId as string | undefined,
        gravity: (raw.gravity as (typeof GRAVITIES)[number] | undefined) ?? 'southeast',
        opacity: (raw.opacity as number | undefined) ?? 0.5,
        scale: (raw.scale as number | undefined) ?? 0.25,
      };
    }
  }
}

/**
 * What the operations do to a `width`×`height` source where it is known exactly (crops, quarter
 * turns, flips): a crop outside the picture is a 400 naming it. After a resize or an odd angle the
 * size is left to the run, which reports such a crop as the item's error.
 */
export function checkGeometry(
  ops: readonly TransformOp[],
  width: number | null,
  height: number | null,
  at: string,
): void {
  let size = width && height ? { width, height } : null;
  ops.forEach((op, i) => {
    if (!size) return;
    if (op.type === 'crop') {
      if (op.left + op.width > size.width || op.top + op.height > size.height)
        throw invalidField(
          `${at}.${i}`,
          `the crop (${op.left},${op.top} ${op.width}x${op.height}) reaches outside the ${size.width}x${size.height} image`,
        );
      size = { width: op.width, height: op.height };
    } else if (op.type === 'rotate')
      size =
        op.angle % 90 !== 0
          ? null
          : Math.abs(op.angle % 180) === 90
            ? { width: size.height, height: size.width }
            : size;
    else if (op.type === 'resize') size = null;
  });
}

export interface TransformLimits {
  maxPixels: number;
  timeoutSeconds: number;
  /** Stops an SVG being drawn (its child process is killed), e.g. when the Action loses its lease. */
  signal?: AbortSignal;
}

/**
 * Whether libvips would hand these bytes to librsvg: an SVG (no other format's signature, `<svg`
 * near the start) or gzip (libvips reads gzipped SVG too). Such bytes are never decoded in this
 * process: a filter bomb blocks inside one librsvg call that no timeout here can interrupt.
 */
export function drawnByLibrsvg(head: Buffer): boolean {
  if (head[0] === 0x1f && head[1] === 0x8b) return true;
  if (sniff(head) !== undefined) return false;
  return head.subarray(0, 4096).toString('latin1').toLowerCase().includes('<svg');
}

async function headOf(input: Buffer | string): Promise<Buffer> {
  if (typeof input !== 'string') return input.subarray(0, 4096);
  const file = await openFile(input, 'r');
  try {
    const head = Buffer.alloc(4096);
    const { bytesRead } = await file.read(head, 0, head.length, 0);
    return head.subarray(0, bytesRead);
  } finally {
    await file.close();
  }
}

/** The longest side an SVG is drawn at: as big as the pixel limit allows (the rasteriser never enlarges). */
const svgBox = (maxPixels: number) => Math.max(1, Math.min(16_384, Math.floor(Math.sqrt(maxPixels))));

/**
 * An SVG drawn in the killable child process the renditions use (issue 23, defect 7): bounded by
 * TESSERA_RENDITION_TIMEOUT_SECONDS and TESSERA_RENDITION_MAX_PIXELS, killed on abort.
 */
function drawSvg(bytes: Buffer, limits: TransformLimits) {
  return rasteriseSvg(bytes, svgBox(limits.maxPixels), limits.maxPixels, limits.timeoutSeconds, limits.signal);
}

export interface TransformOutput {
  data: Buffer;
  format: OutputFormat;
  contentType: string;
  width: number;
  height: number;
}

const CONTENT_TYPES: Record<OutputFormat, string> = {
  jpeg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
  avif: 'image/avif',
  tiff: 'image/tiff',
  gif: 'image/gif',
};
export const EXTENSIONS: Record<OutputFormat, string> = {
  jpeg: 'jpg',
  png: 'png',
  webp: 'webp',
  avif: 'avif',
  tiff: 'tif',
  gif: 'gif',
};

/**
 * Runs the operations in order on an image (EXIF orientation applied first), each step decoded to
 * pixels so the next one sees its result; the output keeps the source format where sharp writes it
 * (else JPEG) unless a `format` operation says otherwise. `mark` loads a watermark image's bytes.
 */
export async function applyTransformations(
  input: Buffer | string,
  ops: readonly TransformOp[],
  limits: TransformLimits,
  mark: (objectId: string) => Promise<Buffer>,
): Promise<TransformOutput> {
  try {
    return await transform(input, ops, limits, mark);
  } catch (error) {
    if (error instanceof RenditionError) throw error;
    const message = (error as Error)?.message ?? String(error);
    if (/^timeout:/.test(message))
      throw new RenditionError(
        `the image took longer than ${limits.timeoutSeconds} s to transform (TESSERA_RENDITION_TIMEOUT_SECONDS)`,
      );
    throw new RenditionError(`the image could not be transformed: ${message}`);
  }
}

async function transform(
  input: Buffer | string,
  ops: readonly TransformOp[],
  limits: TransformLimits,
  mark: (objectId: string) => Promise<Buffer>,
): Promise<TransformOutput> {
  const sharp = await loadSharp();
  const open = (data: Buffer | string, raw?: { width: number; height: number; channels: 1 | 2 | 3 | 4 }) =>
    sharp(data, raw ? { raw } : { limitInputPixels: limits.maxPixels }).timeout({ seconds: limits.timeoutSeconds });
  let sourceFormat: string | undefined;
  let svg: { data: Buffer; raw: { width: number; height: number; channels: 1 | 2 | 3 | 4 } } | undefined;
  if (drawnByLibrsvg(await headOf(input))) {
    const r = await drawSvg(typeof input === 'string' ? await readFile(input) : input, limits);
    svg = { data: r.data, raw: { width: r.width, height: r.height, channels: r.channels } };
    sourceFormat = 'svg';
  } else
    try {
      sourceFormat = (await sharp(input, { limitInputPixels: limits.maxPixels }).metadata()).format;
    } catch (error) {
      throw new RenditionError(`the source is not a readable image: ${(error as Error).message}`);
    }
  let format: OutputFormat = oneOf(OUTPUT_FORMATS, sourceFormat) ? sourceFormat : 'jpeg';
  let quality: number | undefined;
  const run = async (img: Sharp) => {
    const out = await img.raw().toBuffer({ resolveWithObject: true });
    return {
      data: out.data,
      raw: { width: out.info.width, height: out.info.height, channels: out.info.channels as 1 | 2 | 3 | 4 },
    };
  };
  let current = svg ?? (await run(open(input).rotate()));
  for (const op of ops) {
    const img = open(current.data, current.raw);
    const { width, height } = current.raw;
    switch (op.type) {
      case 'resize':
        current = await run(
          img.resize({
            width: op.width,
            height: op.height,
            fit: op.fit,
            withoutEnlargement: op.withoutEnlargement,
            background: { r: 255, g: 255, b: 255, alpha: 0 },
          }),
        );
        break;
      case 'crop':
        if (op.left + op.width > width || op.top + op.height > height)
          throw new RenditionError(
            `the crop (${op.left},${op.top} ${op.width}x${op.height}) reaches outside the ${width}x${height} image it was applied to`,
          );
        current = await run(img.extract({ left: op.left, top: op.top, width: op.width, height: op.height }));
        break;
      case 'rotate':
        current = await run(img.rotate(op.angle, { background: op.background }));
        break;
      case 'flip':
        current = await run(op.direction === 'vertical' ? img.flip() : img.flop());
        break;
      case 'format':
        format = op.format;
        break;
      case 'quality':
        quality = op.quality;
        break;
      case 'watermark': {
        const overlay =
          op.text !== undefined
            ? await textMark(sharp, op.text, width, height, op)
            : await imageMark(sharp, await mark(op.objectId!), width, height, op, limits);
        current = await run(img.composite([{ input: overlay, gravity: op.gravity }]));
        break;
      }
    }
    if (current.raw.width * current.raw.height > limits.maxPixels)
      throw new RenditionError(`the result would have more than ${limits.maxPixels} pixels`);
  }
  let out = open(current.data, current.raw);
  if (format === 'jpeg' && (current.raw.channels === 4 || current.raw.channels === 2))
    out = out.flatten({ background: '#ffffff' });
  const encoded =
    format === 'jpeg'
      ? out.jpeg({ quality: quality ?? 85 })
      : format === 'png'
        ? out.png()
        : format === 'webp'
          ? out.webp({ quality: quality ?? 85 })
          : format === 'avif'
            ? out.avif({ quality: quality ?? 60 })
            : format === 'tiff'
              ? out.tiff({ quality: quality ?? 85 })
              : out.gif();
  const { data, info } = await encoded.toBuffer({ resolveWithObject: true });
  return { data, format, contentType: CONTENT_TYPES[format], width: info.width, height: info.height };
}

type SharpFn = Awaited<ReturnType<typeof loadSharp>>;
type Mark = Extract<TransformOp, { type: 'watermark' }>;

const xml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Text drawn as SVG: white with a dark outline (legible on any picture), `scale` of the image width. */
async function textMark(sharp: SharpFn, text: string, width: number, height: number, op: Mark): Promise<Buffer> {
  const boxWidth = Math.max(8, Math.min(width, Math.round(width * op.scale)));
  const fontSize = Math.max(
    6,
    Math.min(Math.round(height * 0.9), Math.round((boxWidth / Math.max(1, text.length)) * 1.7)),
  );
  const boxHeight = Math.max(6, Math.min(height, Math.round(fontSize * 1.4)));
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${boxWidth}" height="${boxHeight}"><text x="50%" y="50%" dominant-baseline="middle" text-anchor="middle" font-family="sans-serif" font-weight="bold" font-size="${fontSize}" fill="#ffffff" stroke="#000000" stroke-width="${Math.max(1, Math.round(fontSize / 20))}" opacity="${op.opacity}" textLength="${Math.round(boxWidth * 0.94)}" lengthAdjust="spacingAndGlyphs">${xml(text)}</text></svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

/** An image scaled to `scale` of the picture's width (never beyond the picture), its alpha times `opacity`. */
async function imageMark(
  sharp: SharpFn,
  bytes: Buffer,
  width: number,
  height: number,
  op: Mark,
  limits: TransformLimits,
): Promise<Buffer> {
  const target = Math.max(1, Math.round(width * op.scale));
  // An SVG watermark is drawn in the killable child process too, never in this one.
  const drawn = drawnByLibrsvg(bytes) ? await drawSvg(bytes, limits) : undefined;
  try {
    return await (drawn
      ? sharp(drawn.data, { raw: { width: drawn.width, height: drawn.height, channels: drawn.channels } })
      : sharp(bytes, { limitInputPixels: limits.maxPixels }).rotate()
    )
      .resize({ width: target, height, fit: 'inside' })
      .ensureAlpha()
      .composite([
        {
          input: Buffer.from([255, 255, 255, Math.round(255 * op.opacity)]),
          raw: { width: 1, height: 1, channels: 4 },
          tile: true,
          blend: 'dest-in',
        },
      ])
      .png()
      .toBuffer();
  } catch (error) {
    throw new RenditionError(`the watermark image could not be read: ${(error as Error).message}`);
  }
}
