import { readFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import * as mupdf from 'mupdf';

/**
 * One PDF job in a worker thread (pdf.ts starts it): MuPDF's WebAssembly build opens the file,
 * reads its properties and text, and renders one page to RGB pixels. A hostile file can only
 * exhaust this thread, which pdf.ts terminates on its time and memory bounds.
 */
interface Request {
  file: string;
  page: number;
  box: number;
  text: boolean;
  textMaxChars: number;
}

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

function run(req: Request) {
  const doc = mupdf.Document.openDocument(readFileSync(req.file), 'application/pdf');
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
      const t = page.toStructuredText('preserve-whitespace').asText();
      parts.push(t);
      length += t.length + 1;
    }
    text = parts.join('\n');
    truncated = length >= req.textMaxChars && parts.length < pageCount;
  }
  if (req.page < 0 || req.page >= pageCount) return { pageCount, properties, text, truncated };
  const page = doc.loadPage(req.page);
  const [x0, y0, x1, y1] = page.getBounds();
  const w = x1 - x0;
  const h = y1 - y0;
  if (!(w > 0 && h > 0)) throw new Error(`page ${req.page + 1} has no area`);
  const scale = req.box / Math.max(w, h);
  const pix = page.toPixmap(mupdf.Matrix.scale(scale, scale), mupdf.ColorSpace.DeviceRGB, false, true);
  const width = pix.getWidth();
  const height = pix.getHeight();
  const stride = pix.getStride();
  const pixels = pix.getPixels();
  const data = new Uint8Array(width * height * 3);
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

try {
  const result = run(workerData as Request);
  parentPort!.postMessage({ ok: true, result }, result.raster ? [result.raster.data.buffer as ArrayBuffer] : []);
} catch (error) {
  parentPort!.postMessage({ ok: false, message: (error as Error).message ?? String(error) });
}
