import { ExifTool } from 'exiftool-vendored';
import { EMBEDDED_FIELDS, type EmbeddedField } from '../../metadata/index.ts';
import type { EmbeddedValues } from './read-embedded.ts';

/** Content types whose XMP exifr does not read (it reads their EXIF, not the XMP item of the HEIF box). */
export function xmpNeedsExifTool(contentType: string | null): boolean {
  return /^image\/(heic|heif|heic-sequence|heif-sequence)$/.test(contentType ?? '');
}

/**
 * The XMP fields of a file, read by ExifTool (the same maintained tool `?embed=true` writes with):
 * for HEIC/HEIF, where exifr finds no XMP. `-G1` names tags as EMBEDDED_FIELDS does
 * (`XMP-dc:Subject`), so they map one to one. A file ExifTool cannot read gives an empty map.
 */
export async function readXmpByExifTool(file: string): Promise<EmbeddedValues> {
  const exiftool = new ExifTool({ maxProcs: 1, taskTimeoutMillis: 30_000 });
  let raw: Record<string, unknown>;
  try {
    raw = (await exiftool.readRaw(file, { readArgs: ['-G1', '-XMP:all'] })) as Record<string, unknown>;
  } catch {
    return {};
  } finally {
    await exiftool.end();
  }
  const out: EmbeddedValues = {};
  for (const [name, spec] of Object.entries(EMBEDDED_FIELDS) as [EmbeddedField, { kind: string }][]) {
    if (!name.startsWith('XMP-')) continue;
    const value = raw[name];
    if (value === undefined || value === null) continue;
    const list = (Array.isArray(value) ? value : [value]).map((v) => String(v).trim()).filter((v) => v !== '');
    if (list.length === 0) continue;
    if (spec.kind === 'list') out[name] = list;
    else if (spec.kind === 'date') {
      const m = /^(\d{4})[-:](\d{2})[-:](\d{2})/.exec(list[0]!);
      if (m) out[name] = `${m[1]}-${m[2]}-${m[3]}`;
    } else out[name] = list.join(', ');
  }
  return out;
}
