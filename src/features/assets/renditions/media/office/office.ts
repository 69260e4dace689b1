import { copyFile, open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { unzipSync } from 'fflate';
import { RenditionError } from '../../rendition-error.ts';
import type { ConvertInput } from '../media.ts';
import { keptText, type MediaResult } from '../media-types.ts';
import { analysePdf } from '../pdf/pdf.ts';
import { runTool, sofficePath } from '../run-tool.ts';

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const PPTX = 'application/vnd.openxmlformats-officedocument.presentationml.presentation';
const ODT = 'application/vnd.oasis.opendocument.text';
const ODS = 'application/vnd.oasis.opendocument.spreadsheet';
const ODP = 'application/vnd.oasis.opendocument.presentation';

export const OFFICE_TYPES: ReadonlySet<string> = new Set([DOCX, XLSX, PPTX, ODT, ODS, ODP]);
export const TEXT_TYPES: ReadonlySet<string> = new Set(['text/plain', 'text/markdown', 'text/csv', 'text/x-markdown']);

/** An unpacked part larger than this is refused (a zip bomb is not unpacked). */
const PART_MAX_BYTES = 256 * 1024 * 1024;

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decodeXml(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|amp|lt|gt|quot|apos);/g, (_m, e: string) => {
    if (e.startsWith('#x')) return safeChar(Number.parseInt(e.slice(2), 16));
    if (e.startsWith('#')) return safeChar(Number.parseInt(e.slice(1), 10));
    return ENTITIES[e] ?? '';
  });
}

function safeChar(code: number): string {
  return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : '';
}

/**
 * The text of an OOXML or ODF XML part: paragraph and row ends become line breaks, tabs and
 * breaks become spaces, every other tag goes, entities are decoded.
 */
export function xmlText(xml: string): string {
  return decodeXml(
    xml
      .replace(/<(w:tab|w:br|a:br|text:tab|text:line-break|text:s)\b[^>]*\/?>/g, ' ')
      .replace(/<\/(w:p|a:p|text:p|text:h|si|row|table:table-row|c)>/g, '\n')
      .replace(/<[^>]*>/g, ''),
  );
}

function firstTag(xml: string | undefined, tag: string): string | undefined {
  if (!xml) return undefined;
  const m = new RegExp(`<${tag}(?:\\s[^>]*)?>([^<]*)</${tag}>`).exec(xml);
  const value = m ? decodeXml(m[1]!).trim() : '';
  return value === '' ? undefined : value;
}

function byNumber(a: string, b: string): number {
  return Number(/(\d+)\.xml$/.exec(a)?.[1] ?? 0) - Number(/(\d+)\.xml$/.exec(b)?.[1] ?? 0);
}

/** The parts of a zip named by `wanted`, unpacked with fflate (a maintained zip reader); the rest is skipped. */
function unzipParts(data: Uint8Array, wanted: (name: string) => boolean): Record<string, string> {
  let files: Record<string, Uint8Array>;
  try {
    files = unzipSync(data, {
      filter: (f) => {
        if (!wanted(f.name)) return false;
        if (f.originalSize > PART_MAX_BYTES)
          throw new RenditionError(`the document's part ${f.name} unpacks to more than ${PART_MAX_BYTES} bytes`);
        return true;
      },
    });
  } catch (error) {
    if (error instanceof RenditionError) throw error;
    throw new RenditionError(`the document could not be read as a zip: ${(error as Error).message}`);
  }
  const decoder = new TextDecoder('utf-8');
  return Object.fromEntries(Object.entries(files).map(([name, bytes]) => [name, decoder.decode(bytes)]));
}

interface OfficeText {
  text: string;
  properties: Record<string, string | number>;
}

/** Text and document properties of a docx, xlsx, pptx, odt, ods or odp (no LibreOffice needed). */
export function officeText(type: string, data: Uint8Array): OfficeText {
  const ooxml = type === DOCX || type === XLSX || type === PPTX;
  const parts = unzipParts(data, (name) => {
    if (ooxml) {
      if (name === 'docProps/core.xml' || name === 'docProps/app.xml') return true;
      if (type === DOCX) return /^word\/(document|header\d*|footer\d*|footnotes|endnotes)\.xml$/.test(name);
      if (type === PPTX) return /^ppt\/(slides\/slide\d+|notesSlides\/notesSlide\d+)\.xml$/.test(name);
      return (
        name === 'xl/sharedStrings.xml' || name === 'xl/workbook.xml' || /^xl\/worksheets\/sheet\d+\.xml$/.test(name)
      );
    }
    return name === 'content.xml' || name === 'meta.xml';
  });
  const names = Object.keys(parts);
  if (ooxml && !names.some((n) => n.startsWith('word/') || n.startsWith('ppt/') || n.startsWith('xl/')))
    throw new RenditionError('the document has none of the parts its type needs (not an Office Open XML file)');
  if (!ooxml && !parts['content.xml'])
    throw new RenditionError('the document has no content.xml (not an OpenDocument file)');
  const chunks: string[] = [];
  const properties: Record<string, string | number> = {};
  if (type === DOCX) {
    for (const n of ['word/document.xml', ...names.filter((x) => /header|footer|footnotes|endnotes/.test(x)).sort()])
      if (parts[n]) chunks.push(xmlText(parts[n]!));
  } else if (type === PPTX) {
    const slides = names.filter((n) => n.startsWith('ppt/slides/')).sort(byNumber);
    for (const n of slides) chunks.push(xmlText(parts[n]!));
    for (const n of names.filter((x) => x.startsWith('ppt/notesSlides/')).sort(byNumber))
      chunks.push(xmlText(parts[n]!));
    properties.slideCount = slides.length;
  } else if (type === XLSX) {
    const sheets = [...(parts['xl/workbook.xml'] ?? '').matchAll(/<sheet\b[^>]*\bname="([^"]*)"/g)].map((m) =>
      decodeXml(m[1]!),
    );
    chunks.push(sheets.join('\n'));
    if (parts['xl/sharedStrings.xml']) chunks.push(xmlText(parts['xl/sharedStrings.xml']));
    // Inline strings and numbers written in the sheets themselves.
    for (const n of names.filter((x) => x.startsWith('xl/worksheets/')).sort(byNumber)) {
      for (const m of parts[n]!.matchAll(/<is>([\s\S]*?)<\/is>|<c\b(?![^>]*\bt="s")[^>]*>\s*<v>([^<]*)<\/v>/g))
        chunks.push(m[1] !== undefined ? xmlText(m[1]) : decodeXml(m[2]!));
    }
    properties.sheetCount = sheets.length;
  } else {
    chunks.push(xmlText(parts['content.xml']!.replace(/^[\s\S]*?<office:body>/, '')));
  }
  const core = parts['docProps/core.xml'] ?? parts['meta.xml'];
  const app = parts['docProps/app.xml'];
  for (const [name, tag] of [
    ['title', 'dc:title'],
    ['subject', 'dc:subject'],
    ['author', 'dc:creator'],
    ['description', 'dc:description'],
    ['keywords', 'cp:keywords'],
    ['keywords', 'meta:keyword'],
    ['lastModifiedBy', 'cp:lastModifiedBy'],
    ['created', 'dcterms:created'],
    ['modified', 'dcterms:modified'],
    ['created', 'meta:creation-date'],
    ['modified', 'dc:date'],
    ['application', 'meta:generator'],
  ] as const) {
    const v = firstTag(core, tag);
    if (v && properties[name] === undefined) properties[name] = v;
  }
  const pages = Number(
    firstTag(app, 'Pages') ?? /meta:page-count="(\d+)"/.exec(parts['meta.xml'] ?? '')?.[1] ?? Number.NaN,
  );
  if (Number.isFinite(pages)) properties.pageCount = pages;
  const application = firstTag(app, 'Application');
  if (application) properties.application = application;
  return { text: chunks.join('\n'), properties };
}

/**
 * Office documents: text and properties always (read from the zip's XML); a page-1 preview only
 * through LibreOffice (TESSERA_SOFFICE_PATH or soffice on PATH) converting to PDF, which MuPDF then
 * renders. Without LibreOffice the thumbnail is a placeholder and technical metadata says why.
 */
export async function convertOffice(input: ConvertInput): Promise<MediaResult> {
  const type = OFFICE_TYPES.has(input.contentType) ? input.contentType : undefined;
  const data = await readFile(input.file);
  const kind = type ?? [...OFFICE_TYPES].find((t) => input.filename.toLowerCase().endsWith(extensionOf(t))) ?? DOCX;
  const { text, properties } = officeText(kind, data);
  const kept = keptText(text, input.media.textMaxChars);
  const document_metadata: Record<string, unknown> = {
    ...properties,
    textCharacters: kept.text.length,
    textTruncated: kept.truncated,
    extractedBy: 'Tessera (document XML read with fflate)',
  };
  const soffice = sofficePath(input.media);
  if (!soffice) {
    const note =
      'No page preview: LibreOffice is not installed (set TESSERA_SOFFICE_PATH to its soffice binary); the thumbnail is a placeholder.';
    return {
      extra: [],
      text: kept.text,
      note,
      technical: { document_metadata: { ...document_metadata, previewNote: note } },
    };
  }
  const source = join(input.dir, `document${extensionOf(kind)}`);
  await copyFile(input.file, source);
  await runTool(
    input.media,
    soffice,
    [
      '--headless',
      '--norestore',
      `-env:UserInstallation=file://${join(input.dir, 'lo-profile')}`,
      '--convert-to',
      'pdf',
      '--outdir',
      input.dir,
      source,
    ],
    input.signal,
    { cwd: input.dir, label: 'LibreOffice' },
  );
  const pdf = await analysePdf(
    input.media,
    join(input.dir, 'document.pdf'),
    { page: 0, box: input.box, text: false },
    input.signal,
  );
  document_metadata.renderedPageCount = pdf.pageCount;
  document_metadata.previewBy = 'LibreOffice (to PDF), then MuPDF';
  return {
    visual: pdf.raster ? { kind: 'raw', raster: pdf.raster } : undefined,
    extra: [],
    text: kept.text,
    technical: { document_metadata },
  };
}

function extensionOf(type: string): string {
  return (
    { [DOCX]: '.docx', [XLSX]: '.xlsx', [PPTX]: '.pptx', [ODT]: '.odt', [ODS]: '.ods', [ODP]: '.odp' }[type] ?? '.bin'
  );
}

/** Plain text, Markdown and CSV: the text itself (UTF-8, up to the kept length); a placeholder thumbnail. */
export async function convertText(input: ConvertInput): Promise<MediaResult> {
  const handle = await open(input.file, 'r');
  let text: string;
  try {
    const max = Math.min(input.media.textMaxChars * 4, 512 * 1024 * 1024);
    const buffer = Buffer.alloc(Math.min(max, (await handle.stat()).size));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    text = new TextDecoder('utf-8').decode(buffer.subarray(0, bytesRead));
  } finally {
    await handle.close();
  }
  if (text.includes('\u0000')) throw new RenditionError('the file is not text: it holds NUL bytes');
  const kept = keptText(text, input.media.textMaxChars);
  return {
    extra: [],
    text: kept.text,
    technical: {
      document_metadata: {
        lineCount: text.split('\n').length,
        textCharacters: kept.text.length,
        textTruncated: kept.truncated,
        extractedBy: 'Tessera (UTF-8 text)',
      },
    },
  };
}
