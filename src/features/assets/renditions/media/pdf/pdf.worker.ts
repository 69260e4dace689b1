import { readFileSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import * as mupdf from 'mupdf';

/**
 * PDF jobs in a kept-warm worker thread (pdf.ts's pool starts it and sends one job at a time):
 * MuPDF's WebAssembly build opens the file, reads its properties and text, and renders one page to
 * RGB pixels. A hostile file can only exhaust this thread, which pdf.ts terminates on its time and
 * memory bounds and replaces.
 */
interface Request {
  file: string;
  page: number;
  box: number;
  text: boolean;
  textMaxChars: number;
}

// MuPDF's warnings and an abort's last words go to the pool as messages (pdf.ts keeps their tail for the reason of a
// crashed thread); stdout is discarded. Piped worker stdio would hold the server's event loop open (see pdf.ts).
process.stderr.write = ((chunk: string | Uint8Array) => {
  parentPort!.postMessage({ stderr: typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8') });
  return true;
}) as typeof process.stderr.write;
process.stdout.write = (() => true) as typeof process.stdout.write;

const META_KEYS: Record<string, string> = {
  title: 'info:Title',
  author: 'info:Author',
  subject: 'info:Subject',
  keywords: 'info:Keywords',
  creator: 'info:Creator',
  producer: 'info:Producer',
  creationDate: 'info:CreationDate',
  modificationDate: 'info:ModDate',
  format: 'format',
  encryption: 'encryption',
};

/** Everything MuPDF allocated for one job, freed when it ends: the thread serves many jobs. */
type Freeable = { destroy(): void };

function run(req: Request) {
  const owned: Freeable[] = [];
  const own = <T extends Freeable>(value: T): T => {
    owned.push(value);
    return value;
  };
  try {
    return runOwned(req, own);
  } finally {
    for (const value of owned.reverse()) value.destroy();
  }
}

function runOwned(req: Request, own: <T extends Freeable>(value: T) => T) {
  const doc = own(mupdf.Document.openDocument(readFileSync(req.file), 'application/pdf'));
  if (doc.needsPassword()) throw new Error('the PDF is password-protected');
  const pageCount = doc.countPages();
  if (pageCount < 1) throw new Error('the PDF has no pages');
  const properties: Record<string, string> = {};
  for (const [name, key] of Object.entries(META_KEYS)) {
    const value = doc.getMetaData(key);
    if (value) properties[name] = value;
  }
  let text: string | undefined;
  let truncated = false;
  if (req.text) {
    const parts: string[] = [];
    let length = 0;
    for (let i = 0; i < pageCount && length < req.textMaxChars; i++) {
      const page = doc.loadPage(i);
      const stext = page.toStructuredText('preserve-whitespace');
      const t = stext.asText();
      stext.destroy();
      page.destroy();
      parts.push(t);
      length += t.length + 1;
    }
    text = parts.join('\n');
    truncated = length >= req.textMaxChars && parts.length < pageCount;
  }
  if (req.page < 0 || req.page >= pageCount) return { pageCount, properties, text, truncated };
  const page = own(doc.loadPage(req.page));
  const [x0, y0, x1, y1] = page.getBounds();
  const w = x1 - x0;
  const h = y1 - y0;
  if (!(w > 0 && h > 0)) throw new Error(`page ${req.page + 1} has no area`);
  const scale = req.box / Math.max(w, h);
  const pix = own(page.toPixmap(mupdf.Matrix.scale(scale, scale), mupdf.ColorSpace.DeviceRGB, false, true));
  const width = pix.getWidth();
  const height = pix.getHeight();
  const stride = pix.getStride();
  const pixels = pix.getPixels();
  // Not zero-filled (every byte is written below); large enough to own its ArrayBuffer, which is
  // transferred to the main thread rather than copied.
  const data = Buffer.allocUnsafeSlow(width * height * 3);
  if (stride === width * 3) data.set(pixels.subarray(0, data.length));
  else for (let y = 0; y < height; y++) data.set(pixels.subarray(y * stride, y * stride + width * 3), y * width * 3);
  return {
    pageCount,
    properties,
    text,
    truncated,
    pageSize: { width: Math.round(w), height: Math.round(h) },
    raster: { data, width, height },
  };
}

parentPort!.on('message', ({ id, req }: { id: number; req: Request }) => {
  try {
    const result = run(req);
    parentPort!.postMessage({ id, ok: true, result }, result.raster ? [result.raster.data.buffer as ArrayBuffer] : []);
  } catch (error) {
    parentPort!.postMessage({ id, ok: false, message: (error as Error).message ?? String(error) });
  }
});
