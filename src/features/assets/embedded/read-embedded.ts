import exifr from 'exifr';
import type { EmbeddedField } from '../../metadata/index.ts';

/**
 * The embedded fields of a file (IPTC-IIM, XMP, EXIF), read by exifr and named as the metadata
 * feature's EMBEDDED_FIELDS (ExifTool's names). Lists (keywords, creators) stay lists; dates are
 * ISO calendar dates (yyyy-MM-dd); GPS is decimal degrees. A file without metadata, or one exifr
 * cannot read, gives an empty map.
 */
export type EmbeddedValues = Partial<Record<EmbeddedField, string | string[]>>;

/** What exifr is asked to read (the benchmark calls exifr alone with the same options). */
export const EXIFR_OPTIONS = {
  tiff: true,
  exif: true,
  gps: true,
  xmp: true,
  iptc: true,
  icc: false,
  jfif: false,
  ihdr: false,
  ifd1: false,
  interop: false,
  makerNote: false,
  userComment: false,
  mergeOutput: false,
  translateValues: false,
  reviveValues: true,
  sanitize: true,
} as const;

/** The job that maps embedded fields onto attributes when content arrives (apply-embedded.ts). */
export const EMBEDDED_JOB = 'assets.embedded_metadata';

/** Content types exifr reads metadata from. */
export function mayHoldEmbedded(contentType: string | null): boolean {
  return /^image\/(jpeg|pjpeg|tiff|png|webp|heic|heif|avif)$/.test(contentType ?? '');
}

type Block = Record<string, unknown> | undefined;

export async function readEmbedded(input: string | Buffer): Promise<EmbeddedValues> {
  let raw: Record<string, Block> | undefined;
  try {
    raw = (await exifr.parse(input, EXIFR_OPTIONS)) as Record<string, Block> | undefined;
  } catch {
    return {};
  }
  return raw ? mapEmbedded(raw) : {};
}

/** exifr's segments (mergeOutput: false) → embedded field names. */
export function mapEmbedded(raw: Record<string, Block>): EmbeddedValues {
  const out: EmbeddedValues = {};
  const put = (field: EmbeddedField, value: unknown, kind: 'text' | 'list' | 'date' = 'text') => {
    const v = kind === 'date' ? dateOf(value) : kind === 'list' ? listOf(value) : textOf(value);
    if (v !== undefined && (Array.isArray(v) ? v.length > 0 : v !== '')) out[field] = v;
  };
  const dc = raw.dc;
  const ps = raw.photoshop;
  const rights = raw.xmpRights;
  const core = raw.Iptc4xmpCore;
  const iptc = utf8Iptc(raw.iptc);
  const ifd0 = raw.ifd0;
  const exif = raw.exif;
  put('XMP-dc:Title', dc?.title);
  put('XMP-dc:Description', dc?.description);
  put('XMP-dc:Subject', dc?.subject, 'list');
  put('XMP-dc:Creator', dc?.creator, 'list');
  put('XMP-dc:Rights', dc?.rights);
  put('XMP-photoshop:Headline', ps?.Headline);
  put('XMP-photoshop:Credit', ps?.Credit);
  put('XMP-photoshop:City', ps?.City);
  put('XMP-photoshop:Country', ps?.Country);
  put('XMP-photoshop:DateCreated', ps?.DateCreated, 'date');
  put('XMP-xmpRights:UsageTerms', rights?.UsageTerms);
  put('XMP-xmpRights:WebStatement', rights?.WebStatement);
  put('XMP-iptcCore:Location', core?.Location);
  put('XMP-iptcCore:CountryCode', core?.CountryCode);
  put('IPTC:ObjectName', iptc?.ObjectName);
  put('IPTC:Headline', iptc?.Headline);
  put('IPTC:Caption-Abstract', iptc?.Caption);
  put('IPTC:Keywords', iptc?.Keywords, 'list');
  put('IPTC:By-line', iptc?.Byline, 'list');
  put('IPTC:Credit', iptc?.Credit);
  put('IPTC:CopyrightNotice', iptc?.CopyrightNotice);
  put('IPTC:City', iptc?.City);
  put('IPTC:Country-PrimaryLocationName', iptc?.Country);
  put('IPTC:SpecialInstructions', iptc?.SpecialInstructions);
  put('IPTC:DateCreated', iptc?.DateCreated, 'date');
  put('EXIF:ImageDescription', ifd0?.ImageDescription);
  put('EXIF:Artist', ifd0?.Artist);
  put('EXIF:Copyright', ifd0?.Copyright);
  put('EXIF:DateTimeOriginal', exif?.DateTimeOriginal ?? exif?.CreateDate, 'date');
  const gps = gpsOf(raw.gps);
  if (gps) {
    out['EXIF:GPSLatitude'] = String(gps.latitude);
    out['EXIF:GPSLongitude'] = String(gps.longitude);
    out['EXIF:GPSPosition'] = `${gps.latitude}, ${gps.longitude}`;
  }
  return out;
}

/**
 * exifr hands IPTC-IIM text over byte for byte as Latin-1; nearly every writer today stores UTF-8
 * (and says so in 1:90, which exifr does not read). Text that is valid UTF-8 is decoded as such.
 */
function utf8Iptc(block: Block): Block {
  if (!block) return block;
  const fix = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(fix);
    if (typeof v !== 'string' || !/[\u0080-\u00ff]/.test(v)) return v;
    const bytes = Buffer.from(v, 'latin1');
    const text = bytes.toString('utf8');
    return text.includes('\ufffd') ? v : text;
  };
  return Object.fromEntries(Object.entries(block).map(([k, v]) => [k, fix(v)]));
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** XMP text arrives with XML entities left in (exifr does not decode them). */
function decode(text: string): string {
  return text
    .replace(/&(amp|lt|gt|quot|apos|#\d+|#x[0-9a-f]+);/gi, (whole, name: string) => {
      if (name[0] !== '#') return ENTITIES[name.toLowerCase()] ?? whole;
      const code =
        name[1] === 'x' || name[1] === 'X' ? Number.parseInt(name.slice(2), 16) : Number.parseInt(name.slice(1), 10);
      return Number.isInteger(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    })
    .replace(/\0+$/, '')
    .trim();
}

/** One value: a string, a number, a language alternative ({lang, value}) or the first of a list. */
function textOf(value: unknown): string | undefined {
  const list = listOf(value);
  return list && list.length > 0 ? list.join(', ') : undefined;
}

function listOf(value: unknown): string[] | undefined {
  if (value === null || value === undefined) return undefined;
  if (Array.isArray(value)) {
    // A language alternative lists one entry per language: the x-default one (or the first) is the value.
    if (value.length > 0 && value.every((v) => v && typeof v === 'object' && 'lang' in v)) {
      const chosen = value.find((v) => (v as { lang?: unknown }).lang === 'x-default') ?? value[0];
      return listOf(chosen);
    }
    return value.flatMap((v) => listOf(v) ?? []);
  }
  if (typeof value === 'string') return value.trim() === '' ? [] : [decode(value)];
  if (typeof value === 'number' || typeof value === 'boolean') return [String(value)];
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? [] : [value.toISOString()];
  if (typeof value === 'object' && 'value' in value) return listOf((value as { value: unknown }).value);
  return undefined;
}

function dateOf(value: unknown): string | undefined {
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) return undefined;
    // exifr revives EXIF's zone-less local times as local Dates: their calendar date is the local one.
    const pad = (n: number) => String(n).padStart(2, '0');
    return `${value.getFullYear()}-${pad(value.getMonth() + 1)}-${pad(value.getDate())}`;
  }
  const text = textOf(value);
  const m = text ? /^(\d{4})[-:]?(\d{2})[-:]?(\d{2})/.exec(text) : null;
  return m ? `${m[1]}-${m[2]}-${m[3]}` : undefined;
}

function gpsOf(gps: Block): { latitude: number; longitude: number } | undefined {
  if (!gps) return undefined;
  const degrees = (v: unknown, ref: unknown, negative: string): number | undefined => {
    let n: number | undefined;
    if (typeof v === 'number') n = v;
    else if (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'number'))
      n = v[0] + (v[1] ?? 0) / 60 + (v[2] ?? 0) / 3600;
    if (n === undefined || !Number.isFinite(n)) return undefined;
    return Math.round((ref === negative ? -Math.abs(n) : n) * 1e6) / 1e6;
  };
  const latitude = typeof gps.latitude === 'number' ? gps.latitude : degrees(gps.GPSLatitude, gps.GPSLatitudeRef, 'S');
  const longitude =
    typeof gps.longitude === 'number' ? gps.longitude : degrees(gps.GPSLongitude, gps.GPSLongitudeRef, 'W');
  if (latitude === undefined || longitude === undefined || Math.abs(latitude) > 90 || Math.abs(longitude) > 180)
    return undefined;
  return { latitude: Math.round(latitude * 1e6) / 1e6, longitude: Math.round(longitude * 1e6) / 1e6 };
}
