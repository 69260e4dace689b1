import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { zipSync, strToU8 } from 'fflate';
import * as mupdf from 'mupdf';

/** Test files made at test time: PDFs by MuPDF, office files as zips of their XML, media by ffmpeg's generators. */
export function makePdf(
  pages: string[],
  info: Record<string, string> = {},
  size: [number, number] = [595, 842],
): Buffer {
  const doc = new mupdf.PDFDocument();
  const font = doc.addSimpleFont(new mupdf.Font('Helvetica'));
  const resources = doc.addObject({ Font: { F1: font } });
  for (const text of pages) {
    const lines = text
      .split('\n')
      .map((l, i) => `BT /F1 18 Tf 72 ${size[1] - 82 - i * 24} Td (${l.replace(/[()\\]/g, '')}) Tj ET`)
      .join('\n');
    doc.insertPage(-1, doc.addPage([0, 0, size[0], size[1]], 0, resources, lines));
  }
  for (const [key, value] of Object.entries(info)) doc.setMetaData(`info:${key}`, value);
  return Buffer.from(doc.saveToBuffer('').asUint8Array());
}

const xml = (body: string) => strToU8(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>${body}`);
const W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"';
const CORE = (title: string, author: string) =>
  xml(
    `<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>${title}</dc:title><dc:creator>${author}</dc:creator></cp:coreProperties>`,
  );

export function makeDocx(paragraphs: string[], title = 'Doc title', author = 'Grace'): Buffer {
  return Buffer.from(
    zipSync({
      '[Content_Types].xml': xml('<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>'),
      'word/document.xml': xml(
        `<w:document ${W}><w:body>${paragraphs.map((p) => `<w:p><w:r><w:t xml:space="preserve">${p}</w:t></w:r></w:p>`).join('')}</w:body></w:document>`,
      ),
      'docProps/core.xml': CORE(title, author),
      'docProps/app.xml': xml(
        '<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties"><Pages>1</Pages><Application>Tessera Tests</Application></Properties>',
      ),
    }),
  );
}

export function makePptx(slides: string[]): Buffer {
  const files: Record<string, Uint8Array> = {
    '[Content_Types].xml': xml('<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>'),
    'docProps/core.xml': CORE('Deck', 'Linus'),
  };
  slides.forEach((text, i) => {
    files[`ppt/slides/slide${i + 1}.xml`] = xml(
      `<p:sld xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><p:cSld><p:spTree><p:sp><p:txBody><a:p><a:r><a:t>${text}</a:t></a:r></a:p></p:txBody></p:sp></p:spTree></p:cSld></p:sld>`,
    );
  });
  return Buffer.from(zipSync(files));
}

export function makeXlsx(strings: string[], numbers: number[]): Buffer {
  return Buffer.from(
    zipSync({
      '[Content_Types].xml': xml('<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>'),
      'xl/workbook.xml': xml(
        '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheets><sheet name="Budget" sheetId="1"/></sheets></workbook>',
      ),
      'xl/sharedStrings.xml': xml(
        `<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">${strings.map((s) => `<si><t>${s}</t></si>`).join('')}</sst>`,
      ),
      'xl/worksheets/sheet1.xml': xml(
        `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1">${strings.map((_s, i) => `<c r="A${i + 1}" t="s"><v>${i}</v></c>`).join('')}${numbers.map((n, i) => `<c r="B${i + 1}"><v>${n}</v></c>`).join('')}</row></sheetData></worksheet>`,
      ),
    }),
  );
}

export function makeOdt(paragraphs: string[]): Buffer {
  return Buffer.from(
    zipSync({
      mimetype: strToU8('application/vnd.oasis.opendocument.text'),
      'content.xml': xml(
        `<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:body><office:text>${paragraphs.map((p) => `<text:p>${p}</text:p>`).join('')}</office:text></office:body></office:document-content>`,
      ),
      'meta.xml': xml(
        '<office:document-meta xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:meta="urn:oasis:names:tc:opendocument:xmlns:meta:1.0" xmlns:dc="http://purl.org/dc/elements/1.1/"><office:meta><dc:title>Open doc</dc:title><meta:document-statistic meta:page-count="2"/></office:meta></office:document-meta>',
      ),
    }),
  );
}

const require = createRequire(import.meta.url);
const run = promisify(execFile);

/** A clip made by the shipped ffmpeg's generators (testsrc, sine): `args` are the output options. */
export async function ffmpegClip(name: string, inputs: string[], args: string[]): Promise<Buffer> {
  const ffmpeg = (require('@ffmpeg-installer/ffmpeg') as { path: string }).path;
  const dir = await mkdtemp(join(tmpdir(), 'tessera-clip-'));
  try {
    const out = join(dir, name);
    await run(ffmpeg, ['-nostdin', '-v', 'error', '-y', ...inputs, ...args, out]);
    return await readFile(out);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A 2-second 320×240 H.264/AAC MP4 with a tone. */
export const videoClip = () =>
  ffmpegClip(
    'clip.mp4',
    [
      '-f',
      'lavfi',
      '-i',
      'testsrc=duration=2:size=320x240:rate=25',
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=440:duration=2',
    ],
    ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest'],
  );
/** A 2-second WAV tone. */
export const audioClip = () =>
  ffmpegClip('tone.wav', ['-f', 'lavfi', '-i', 'sine=frequency=440:duration=2'], ['-c:a', 'pcm_s16le']);
