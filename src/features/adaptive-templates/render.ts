import { loadSharp } from '../../core/sharp.ts';
import { invalidField } from '../../core/http/errors.ts';
import { bag, own } from '../../core/lookup.ts';

/**
 * Adaptive template sources: SVG or HTML with named fields written `{{name}}` or
 * `{{name|default text}}`, in text or attribute values. Filling escapes every value for XML/HTML,
 * so a value can never add markup; SVG renders to PNG with sharp (librsvg) with nothing fetched
 * from outside the document.
 */
export type TemplateKind = 'svg' | 'html';

export interface FieldDefinition {
  name: string;
  label: string;
  default: string;
  maxLength: number;
  multiline: boolean;
}

export const MAX_SOURCE_BYTES = 1_000_000;
export const MAX_RENDER_PIXELS = 40_000_000;
const PLACEHOLDER = /\{\{\s*([A-Za-z][A-Za-z0-9_-]{0,63})\s*(?:\|([^}]*))?\}\}/g;

export function kindOf(mimeType: string, filename: string): TemplateKind | null {
  const type = mimeType.toLowerCase().split(';')[0]!.trim();
  if (type === 'image/svg+xml' || /\.svg$/i.test(filename)) return 'svg';
  if (type === 'text/html' || /\.html?$/i.test(filename)) return 'html';
  return null;
}

const humanize = (name: string) =>
  name
    .replace(/[_-]+/g, ' ')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/^./, (c) => c.toUpperCase());

/** The fields a source names, in order of first appearance (the first default given wins). */
export function extractFields(source: string): FieldDefinition[] {
  const out = new Map<string, FieldDefinition>();
  for (const m of source.matchAll(PLACEHOLDER)) {
    const name = m[1]!;
    const existing = out.get(name);
    if (existing) {
      if (existing.default === '' && m[2]) existing.default = decodeEntities(m[2].trim());
      continue;
    }
    out.set(name, {
      name,
      label: humanize(name),
      default: m[2] ? decodeEntities(m[2].trim()) : '',
      maxLength: 200,
      multiline: false,
    });
  }
  return [...out.values()];
}

function decodeEntities(text: string): string {
  return text.replace(
    /&(amp|lt|gt|quot|#39|apos);/g,
    (_, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", apos: "'" })[e]!,
  );
}

const escapeXml = (value: string) =>
  value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** Checks a source when it is registered: size, kind-specific safety, at least one field. */
export function checkSource(kind: TemplateKind, source: string, field: string): void {
  if (Buffer.byteLength(source) > MAX_SOURCE_BYTES)
    throw invalidField(field, `is larger than ${MAX_SOURCE_BYTES} bytes`);
  if (kind === 'svg') {
    if (!/<svg[\s>]/i.test(source)) throw invalidField(field, 'is not an SVG document');
    // No DTDs (entity expansion), no external references (librsvg would read files or URLs).
    if (/<!DOCTYPE|<!ENTITY/i.test(source)) throw invalidField(field, 'must not contain a DOCTYPE or entities');
    for (const m of source.matchAll(/(?:xlink:)?href\s*=\s*["']([^"']*)["']/gi)) {
      const target = m[1]!.trim();
      if (!target.startsWith('#') && !/^data:image\/(png|jpeg|gif|webp);base64,/i.test(target)) {
        throw invalidField(
          field,
          `refers to an external resource (${target.slice(0, 60)}); only #fragments and data: images are allowed`,
        );
      }
    }
    if (/url\(\s*["']?(?!#|data:)/i.test(source))
      throw invalidField(field, 'refers to an external resource in CSS url()');
    if (/<script[\s>]|\son[a-z]+\s*=/i.test(source))
      throw invalidField(field, 'must not contain scripts or event handlers');
  }
  if (extractFields(source).length === 0)
    throw invalidField(field, 'names no fields (write {{fieldName}} where a value goes)');
}

/** Checks the values sent for a template's fields; unknown names are an error, missing ones take the default. */
export function checkValues(
  fields: readonly FieldDefinition[],
  values: Record<string, unknown>,
  field: string,
): Record<string, string> {
  const known = new Map(fields.map((f) => [f.name, f]));
  for (const name of Object.keys(values)) {
    if (!known.has(name)) throw invalidField(`${field}.${name}`, 'is not a field of this template');
  }
  const out = bag<string>();
  for (const f of fields) {
    const raw = own(values, f.name);
    if (raw !== undefined && typeof raw !== 'string') throw invalidField(`${field}.${f.name}`, 'must be a string');
    const value = (raw ?? f.default).replace(/\r\n?/g, '\n');
    if (value.length > f.maxLength)
      throw invalidField(`${field}.${f.name}`, `is longer than ${f.maxLength} characters`);
    out[f.name] = f.multiline ? value : value.replace(/\n/g, ' ');
  }
  return out;
}

/** The source with every placeholder replaced by its (escaped) value. */
export function fill(source: string, values: Record<string, string>): string {
  return source.replace(PLACEHOLDER, (_m, name: string, def?: string) =>
    escapeXml(own<string>(values, name) ?? (def ? decodeEntities(def.trim()) : '')),
  );
}

/** An SVG as PNG, at most `maxWidth` wide (never upscaled). */
export async function renderSvg(svg: string, maxWidth = 2000): Promise<Buffer> {
  const sharp = await loadSharp();
  const image = sharp(Buffer.from(svg), { limitInputPixels: MAX_RENDER_PIXELS });
  return image.resize({ width: maxWidth, withoutEnlargement: true }).png().toBuffer();
}
