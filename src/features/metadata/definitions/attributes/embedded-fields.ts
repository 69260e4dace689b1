import { invalidField } from '../../../../core/http/errors.ts';

/**
 * Fields embedded in files (IPTC-IIM, XMP, EXIF) that an attribute may read at upload and write
 * back on `?embed=true` downloads. Names are ExifTool's `group:tag` names, so they mean the same to
 * anyone who knows ExifTool. An attribute lists them in priority order: the first field the file
 * holds wins. `write: false` marks fields read but never written back.
 */
export const EMBEDDED_FIELDS = {
  'XMP-dc:Title': { kind: 'text' },
  'XMP-dc:Description': { kind: 'text' },
  'XMP-dc:Subject': { kind: 'list' },
  'XMP-dc:Creator': { kind: 'list' },
  'XMP-dc:Rights': { kind: 'text' },
  'XMP-photoshop:Headline': { kind: 'text' },
  'XMP-photoshop:Credit': { kind: 'text' },
  'XMP-photoshop:City': { kind: 'text' },
  'XMP-photoshop:Country': { kind: 'text' },
  'XMP-photoshop:DateCreated': { kind: 'date' },
  'XMP-xmpRights:UsageTerms': { kind: 'text' },
  'XMP-xmpRights:WebStatement': { kind: 'text' },
  'XMP-iptcCore:Location': { kind: 'text' },
  'XMP-iptcCore:CountryCode': { kind: 'text' },
  'IPTC:ObjectName': { kind: 'text' },
  'IPTC:Headline': { kind: 'text' },
  'IPTC:Caption-Abstract': { kind: 'text' },
  'IPTC:Keywords': { kind: 'list' },
  'IPTC:By-line': { kind: 'list' },
  'IPTC:Credit': { kind: 'text' },
  'IPTC:CopyrightNotice': { kind: 'text' },
  'IPTC:City': { kind: 'text' },
  'IPTC:Country-PrimaryLocationName': { kind: 'text' },
  'IPTC:SpecialInstructions': { kind: 'text' },
  'IPTC:DateCreated': { kind: 'date' },
  'EXIF:ImageDescription': { kind: 'text' },
  'EXIF:Artist': { kind: 'text' },
  'EXIF:Copyright': { kind: 'text' },
  'EXIF:DateTimeOriginal': { kind: 'date' },
  'EXIF:GPSLatitude': { kind: 'text', write: false },
  'EXIF:GPSLongitude': { kind: 'text', write: false },
  'EXIF:GPSPosition': { kind: 'text', write: false },
} as const satisfies Record<string, { kind: 'text' | 'list' | 'date'; write?: false }>;

export type EmbeddedField = keyof typeof EMBEDDED_FIELDS;
export const EMBEDDED_FIELD_NAMES = Object.keys(EMBEDDED_FIELDS) as EmbeddedField[];
const BY_LOWER = new Map(EMBEDDED_FIELD_NAMES.map((name) => [name.toLowerCase(), name]));
export const MAX_EMBEDDED_FIELDS = 20;

/** Whether a field is written back into files on `?embed=true` downloads. */
export function writableEmbeddedField(name: EmbeddedField): boolean {
  return (EMBEDDED_FIELDS[name] as { write?: false }).write !== false;
}

/**
 * The `embeddedFields` of an attribute write: known names (any case, answered canonical), no
 * repeats, at most 20, and only on text or date attributes.
 */
export function checkEmbeddedFields(value: unknown, type: string, field = 'body.embeddedFields'): EmbeddedField[] {
  if (!Array.isArray(value))
    throw invalidField(field, 'must be an array of embedded field names such as "XMP-dc:Title" or "IPTC:Keywords"');
  if (value.length > 0 && type !== 'text' && type !== 'date')
    throw invalidField(field, 'only text and date attributes read embedded fields');
  if (value.length > MAX_EMBEDDED_FIELDS) throw invalidField(field, `may list at most ${MAX_EMBEDDED_FIELDS} fields`);
  const out: EmbeddedField[] = [];
  value.forEach((raw, i) => {
    const name = typeof raw === 'string' ? BY_LOWER.get(raw.trim().toLowerCase()) : undefined;
    if (!name)
      throw invalidField(
        `${field}.${i}`,
        `${JSON.stringify(raw)} is not an embedded field; one of ${EMBEDDED_FIELD_NAMES.join(', ')}`,
      );
    if (out.includes(name)) throw invalidField(`${field}.${i}`, `${name} appears twice`);
    out.push(name);
  });
  return out;
}
