import { extname } from 'node:path';
import { lookupTable } from '../../../core/lookup.ts';
import { invalidField } from '../../../core/http/errors.ts';

const BY_EXTENSION = lookupTable({
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.jpe': 'image/jpeg',
  '.png': 'image/png',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.tif': 'image/tiff',
  '.tiff': 'image/tiff',
  '.avif': 'image/avif',
  '.heic': 'image/heic',
  '.svg': 'image/svg+xml',
  '.bmp': 'image/bmp',
  '.pdf': 'application/pdf',
  '.mp4': 'video/mp4',
  '.m4v': 'video/mp4',
  '.mov': 'video/quicktime',
  '.webm': 'video/webm',
  '.avi': 'video/x-msvideo',
  '.mp3': 'audio/mpeg',
  '.wav': 'audio/wav',
  '.zip': 'application/zip',
  '.txt': 'text/plain',
  '.csv': 'text/csv',
  '.json': 'application/json',
  '.psd': 'image/vnd.adobe.photoshop',
  '.ai': 'application/postscript',
  '.eps': 'application/postscript',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  '.xlsx': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  '.pptx': 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  '.odt': 'application/vnd.oasis.opendocument.text',
  '.ods': 'application/vnd.oasis.opendocument.spreadsheet',
  '.odp': 'application/vnd.oasis.opendocument.presentation',
  '.md': 'text/markdown',
  '.markdown': 'text/markdown',
  '.heif': 'image/heif',
  '.hif': 'image/heif',
  '.mkv': 'video/x-matroska',
  '.m4a': 'audio/mp4',
  '.aac': 'audio/aac',
  '.flac': 'audio/flac',
  '.ogg': 'audio/ogg',
  '.oga': 'audio/ogg',
  '.opus': 'audio/ogg',
  '.dng': 'image/x-adobe-dng',
  '.cr2': 'image/x-canon-cr2',
  '.cr3': 'image/x-canon-cr3',
  '.nef': 'image/x-nikon-nef',
  '.arw': 'image/x-sony-arw',
  '.orf': 'image/x-olympus-orf',
  '.rw2': 'image/x-panasonic-rw2',
  '.raf': 'image/x-fuji-raf',
  '.pef': 'image/x-pentax-pef',
  '.srw': 'image/x-samsung-srw',
});

/** Camera RAW types: previews come from the JPEG the camera embedded (renditions/media/images/images.ts). */
export const RAW_TYPES: ReadonlySet<string> = new Set([
  'image/x-adobe-dng',
  'image/x-canon-cr2',
  'image/x-canon-cr3',
  'image/x-nikon-nef',
  'image/x-sony-arw',
  'image/x-olympus-orf',
  'image/x-panasonic-rw2',
  'image/x-fuji-raf',
  'image/x-pentax-pef',
  'image/x-samsung-srw',
]);

/**
 * A media type as RFC 6838 names it (`type/subtype`, restricted-name characters, at most 127
 * each) with optional RFC 9110 parameters (`; name=token` or `; name="quoted"`). Nothing else is
 * stored as a content type: a CR/LF or a non-Latin-1 character in one (`text/plain\r\nX-Evil: 1`)
 * broke every later download of the asset with a 500.
 */
const RESTRICTED_NAME = '[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}';
const TOKEN = "[-!#$%&'*+.^_`|~0-9A-Za-z]+";
const QUOTED = '"(?:[\\t\\x20\\x21\\x23-\\x5b\\x5d-\\x7e]|\\\\[\\t\\x20-\\x7e])*"';
export const MEDIA_TYPE_PATTERN = `^${RESTRICTED_NAME}/${RESTRICTED_NAME}(?:[\\t ]*;[\\t ]*${TOKEN}=(?:${TOKEN}|${QUOTED}))*$`;
const MEDIA_TYPE = new RegExp(MEDIA_TYPE_PATTERN, 'u');

export function isMediaType(value: string): boolean {
  return value.length <= 200 && MEDIA_TYPE.test(value);
}

/** A declared content type, or a 400 naming `field`. */
export function checkMediaType(value: string | null | undefined, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isMediaType(value))
    throw invalidField(
      field,
      'is not a media type (type/subtype with optional ; name=value parameters, e.g. image/jpeg)',
    );
  return value;
}

export function typeFromFilename(filename: string): string | undefined {
  return BY_EXTENSION[extname(filename).toLowerCase()];
}

/** The media type the first bytes prove, for the formats whose signature is unambiguous. */
export function sniff(head: Buffer): string | undefined {
  const at = (offset: number, bytes: number[]) => bytes.every((b, i) => head[offset + i] === b);
  const ascii = (offset: number, text: string) =>
    head.subarray(offset, offset + text.length).toString('latin1') === text;
  if (at(0, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (at(0, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (ascii(0, 'GIF87a') || ascii(0, 'GIF89a')) return 'image/gif';
  if (ascii(0, 'RIFF') && ascii(8, 'WEBP')) return 'image/webp';
  if (at(0, [0x49, 0x49, 0x2a, 0x00]) || at(0, [0x4d, 0x4d, 0x00, 0x2a])) return 'image/tiff';
  if (ascii(0, '%PDF-')) return 'application/pdf';
  if (ascii(4, 'ftypavif')) return 'image/avif';
  if (ascii(4, 'ftypheic') || ascii(4, 'ftypheix') || ascii(4, 'ftypmif1') || ascii(4, 'ftypmsf1')) return 'image/heic';
  if (ascii(4, 'ftypqt')) return 'video/quicktime';
  if (ascii(4, 'ftyp')) return 'video/mp4';
  if (at(0, [0x1a, 0x45, 0xdf, 0xa3])) return 'video/webm';
  return undefined;
}

/** Families that may legitimately share a signature (an .m4v is an mp4; a .docx is a zip). */
function family(type: string): string {
  if (type === 'video/mp4' || type === 'video/quicktime' || type === 'audio/mp4' || type === 'image/x-canon-cr3')
    return 'iso-bmff';
  if (type === 'image/heic' || type === 'image/heif') return 'heif';
  if (type === 'video/webm' || type === 'video/x-matroska' || type === 'audio/webm') return 'matroska';
  // TIFF-based camera RAW files start with a TIFF header.
  if (
    type === 'image/tiff' ||
    type === 'image/x-adobe-dng' ||
    type === 'image/x-canon-cr2' ||
    type === 'image/x-nikon-nef' ||
    type === 'image/x-sony-arw' ||
    type === 'image/x-pentax-pef' ||
    type === 'image/x-samsung-srw'
  )
    return 'tiff';
  return type;
}

/**
 * Content types a client sends when it declares nothing about the content: curl's default for a
 * body (`application/x-www-form-urlencoded`), a form's own encoding, or raw bytes. They never
 * override a type declared at create, nor one the file name implies.
 */
const NOT_A_DECLARATION = new Set([
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'application/octet-stream',
  'binary/octet-stream',
]);

/** A content type that declares something about the content (lower case, without parameters), or undefined. */
export function meaningfulType(value: string | null | undefined): string | undefined {
  if (value === undefined || value === null || !isMediaType(value.trim())) return undefined;
  const type = value.split(';')[0]!.trim().toLowerCase();
  return NOT_A_DECLARATION.has(type) ? undefined : type;
}

/**
 * The declared type of an upload: the one declared at create stands; the upload request's own
 * Content-Type counts only when none was declared and it says something (not curl's default).
 */
export function declaredUploadType(
  atCreate: string | null | undefined,
  onRequest: string | null | undefined,
): string | undefined {
  return meaningfulType(atCreate) ?? meaningfulType(onRequest);
}

/**
 * The content type to record, or a problem: a declared type (at create or on the request, see
 * declaredUploadType, else the file extension) that the bytes contradict is refused. The bytes'
 * own type is recorded where their signature proves one; otherwise the declared type stands.
 */
export function verifyContentType(
  head: Buffer,
  declared: string | undefined,
  filename: string,
): { type: string } | { problem: string } {
  const sniffed = sniff(head);
  const claimed = meaningfulType(declared);
  const expected = claimed ?? typeFromFilename(filename);
  if (sniffed && expected && BY_EXTENSION_VALUES.has(expected) && family(sniffed) !== family(expected)) {
    return {
      problem: `the content is ${sniffed} but ${claimed ? 'the declared type says' : `the file name ${filename} says`} ${expected}`,
    };
  }
  return { type: sniffed ?? expected ?? 'application/octet-stream' };
}

const BY_EXTENSION_VALUES = new Set(
  (Object.values(BY_EXTENSION) as string[]).filter(
    (t) => t.startsWith('image/') || t.startsWith('video/') || t === 'application/pdf',
  ),
);

export function isImage(type: string | null | undefined): boolean {
  return (
    !!type &&
    [
      'image/jpeg',
      'image/png',
      'image/gif',
      'image/webp',
      'image/tiff',
      'image/avif',
      'image/heic',
      'image/svg+xml',
    ].includes(type)
  );
}
