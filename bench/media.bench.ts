// Media conversions against the tool alone, in the same run (issue 25):
// - a 100-page PDF: Tessera's PDF conversion (properties, the text of every page, page 1 rendered)
//   and a single page preview, against MuPDF (the same WebAssembly build) called directly in-process;
// - a 60 s 1080p H.264 clip: Tessera's video conversion (ffprobe, then poster, web proxy and animated
//   preview) against the same three ffmpeg commands run directly;
// - embedded metadata: files/s of Tessera's reader (exifr, then the mapping onto field names) against
//   exifr alone with the same options.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import exifr from 'exifr';
import * as mupdf from 'mupdf';
import sharp from 'sharp';
import { parseConfig } from '../src/config.ts';
import { EXIFR_OPTIONS, readEmbedded } from '../src/features/assets/embedded/read-embedded.ts';
import { convertAudioVideo, videoCommands } from '../src/features/assets/renditions/media/audio-video/audio-video.ts';
import { makePdf } from '../src/features/assets/renditions/media/media.fixtures.ts';
import { analysePdf, closePdfThreads, convertPdf } from '../src/features/assets/renditions/media/pdf/pdf.ts';
import { fmt, percentile, printTable } from './lib.ts';

const PDF_RUNS = Number(process.env.MEDIA_BENCH_PDF_RUNS ?? 30);
const VIDEO_RUNS = Number(process.env.MEDIA_BENCH_VIDEO_RUNS ?? 3);
const VIDEO_SECONDS = Number(process.env.MEDIA_BENCH_VIDEO_SECONDS ?? 60);
const EMBEDDED_READS = Number(process.env.MEDIA_BENCH_EMBEDDED_READS ?? 2000);
const only = (process.env.MEDIA_BENCH_ONLY ?? 'pdf,video,embedded').split(',');
const media = parseConfig({
  TESSERA_DATA_DIR: tmpdir(),
  TESSERA_SECRET_KEY: 'bench-secret-key-0123456789abcdef0123',
}).media;
const load = () =>
  `load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`;
const dir = mkdtempSync(join(tmpdir(), 'tessera-media-bench-'));
const ratioLegend = {
  'min ms':
    'fastest run in milliseconds: the cost of the work with the least interference from other jobs on the machine',
  'ratio (min)':
    'Tessera’s fastest run divided by the tool alone’s fastest run, same run (the least noisy comparison on a shared machine)',
  'CPU p50 ms':
    'median CPU milliseconds (user + system) of the process, its threads and the ffmpeg children it waited for: what other jobs on the shared machine do not change',
  'ratio (CPU)': 'Tessera’s median CPU time divided by the tool alone’s, same run',
  'ratio (p50)':
    'Tessera’s median divided by the tool-alone median of the same work, same run (target ≤ 1.2 for PDF, ≤ 1.1 for video)',
};

/** CPU milliseconds this process and its waited-for children (ffmpeg) have used: what other jobs on the machine do not change. */
function cpuMs(): number {
  const own = process.cpuUsage();
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  const tick = 10; // ms per clock tick (USER_HZ 100 on Linux)
  return (own.user + own.system) / 1000 + (Number(fields[13]) + Number(fields[14])) * tick;
}

interface Timed {
  wall: number[];
  cpu: number[];
}

/** Alternates the two ways `runs` times (after one untimed call of each) so both share the machine's noise. */
async function paired(runs: number, a: () => Promise<unknown>, b: () => Promise<unknown>): Promise<[Timed, Timed]> {
  await a();
  await b();
  const ta: Timed = { wall: [], cpu: [] };
  const tb: Timed = { wall: [], cpu: [] };
  for (let i = 0; i < runs; i++) {
    for (const [fn, out] of i % 2 === 0
      ? ([
          [a, ta],
          [b, tb],
        ] as const)
      : ([
          [b, tb],
          [a, ta],
        ] as const)) {
      const c = cpuMs();
      const t = performance.now();
      await fn();
      out.wall.push(performance.now() - t);
      out.cpu.push(cpuMs() - c);
    }
  }
  return [ta, tb];
}

/** Two rows (tool alone, Tessera) of wall and CPU time with Tessera's ratios. */
function rowsOf(label: string, alone: string, ours: string, d: Timed, o: Timed, digits: number): (string | number)[][] {
  const p50 = (x: number[]) => percentile(x, 50);
  return [
    [
      `${label}${alone}`,
      fmt(Math.min(...d.wall), digits),
      fmt(p50(d.wall), digits),
      fmt(p50(d.cpu), digits),
      '1.00',
      '1.00',
      '1.00',
    ],
    [
      `${label}${ours}`,
      fmt(Math.min(...o.wall), digits),
      fmt(p50(o.wall), digits),
      fmt(p50(o.cpu), digits),
      fmt(Math.min(...o.wall) / Math.min(...d.wall)),
      fmt(p50(o.wall) / p50(d.wall)),
      fmt(p50(o.cpu) / p50(d.cpu)),
    ],
  ];
}
const HEADER = ['path', 'min ms', 'p50 ms', 'CPU p50 ms', 'ratio (min)', 'ratio (p50)', 'ratio (CPU)'];

// ---- PDF ----------------------------------------------------------------------------------------
if (only.includes('pdf')) {
  const lines = (p: number) =>
    Array.from(
      { length: 28 },
      (_, l) => `Page ${p + 1} line ${l + 1}: the harbour report continues with figures ${p * 100 + l}`,
    ).join('\n');
  const file = join(dir, 'hundred.pdf');
  writeFileSync(
    file,
    makePdf(
      Array.from({ length: 100 }, (_, p) => lines(p)),
      { Title: 'Bench' },
    ),
  );
  const BOX = 3000; // the largest image rendition (mezzaninePreview): what the asset job renders page 1 at
  const PAGE_BOX = 700; // GET /v1/asset/{id}/page/{n} default size

  /** MuPDF alone, in this thread: the same calls the worker makes. */
  const direct = (box: number, text: boolean) => {
    const doc = mupdf.Document.openDocument(readFileSync(file), 'application/pdf');
    const pageCount = doc.countPages();
    for (const key of ['info:Title', 'info:Author', 'format', 'encryption']) doc.getMetaData(key);
    if (text)
      for (let i = 0; i < pageCount; i++) {
        const page = doc.loadPage(i);
        const st = page.toStructuredText('preserve-whitespace');
        st.asText();
        st.destroy();
        page.destroy();
      }
    const page = doc.loadPage(0);
    const [x0, y0, x1, y1] = page.getBounds();
    const scale = box / Math.max(x1 - x0, y1 - y0);
    const pix = page.toPixmap(mupdf.Matrix.scale(scale, scale), mupdf.ColorSpace.DeviceRGB, false, true);
    Buffer.from(pix.getPixels());
    pix.destroy();
    page.destroy();
    doc.destroy();
    return Promise.resolve();
  };
  const [fullDirect, fullOurs] = await paired(
    PDF_RUNS,
    () => direct(BOX, true),
    () => convertPdf(media, file, BOX),
  );
  const [pageDirect, pageOurs] = await paired(
    PDF_RUNS,
    () => direct(PAGE_BOX, false),
    () => analysePdf(media, file, { page: 0, box: PAGE_BOX, text: false }),
  );
  const rows = [
    ...rowsOf(
      `text of 100 pages + page 1 at ${BOX} px (the asset job): `,
      'MuPDF called directly',
      'Tessera (kept-warm MuPDF thread)',
      fullDirect,
      fullOurs,
      1,
    ),
    ...rowsOf(
      `page 1 preview at ${PAGE_BOX} px (GET …/page/1): `,
      'MuPDF called directly',
      'Tessera (kept-warm MuPDF thread)',
      pageDirect,
      pageOurs,
      1,
    ),
  ];
  printTable(
    `A 100-page PDF (${(readFileSync(file).length / 1024).toFixed(0)} KiB), ${PDF_RUNS} runs each, MuPDF WebAssembly (npm mupdf); ${load()}`,
    HEADER,
    rows,
    ratioLegend,
  );
  await closePdfThreads();
}

// ---- Video --------------------------------------------------------------------------------------
if (only.includes('video')) {
  const ffmpeg = (createRequire(import.meta.url)('@ffmpeg-installer/ffmpeg') as { path: string }).path;
  const source = join(dir, 'clip.mp4');
  await promisify(execFile)(ffmpeg, [
    '-nostdin',
    '-v',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    `testsrc2=duration=${VIDEO_SECONDS}:size=1920x1080:rate=25`,
    '-f',
    'lavfi',
    '-i',
    `sine=frequency=440:duration=${VIDEO_SECONDS}`,
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-shortest',
    source,
  ]);
  const runDirect = (args: string[]) =>
    new Promise<void>((resolve, reject) => {
      const child = spawn(ffmpeg, args, { stdio: 'ignore' });
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`ffmpeg exit ${code}`))));
    });
  const outDirect = mkdtempSync(join(dir, 'direct-'));
  const outOurs = mkdtempSync(join(dir, 'ours-'));
  const c = videoCommands(source, outDirect, {
    width: 1920,
    height: 1080,
    duration: VIDEO_SECONDS,
    hasAudio: true,
    box: 3000,
  });
  const direct = async () => {
    await runDirect(c.poster.args);
    await runDirect(c.proxy.args);
    await runDirect(c.preview.args);
  };
  const ours = () =>
    convertAudioVideo({
      media,
      kind: 'audio-video',
      file: source,
      dir: outOurs,
      contentType: 'video/mp4',
      filename: 'clip.mp4',
      box: 3000,
      maxPixels: 268_402_689,
    });
  const [d, o] = await paired(VIDEO_RUNS, direct, ours);
  printTable(
    `A ${VIDEO_SECONDS} s 1080p25 H.264/AAC clip: poster + web proxy (H.264 veryfast, 1080p) + animated preview, ${VIDEO_RUNS} runs each after one untimed; ${load()}`,
    HEADER,
    rowsOf(
      '',
      'the same three ffmpeg commands run directly',
      'Tessera (ffprobe, then the three commands under time and memory bounds)',
      d,
      o,
      0,
    ),
    ratioLegend,
  );
}

// ---- Embedded metadata --------------------------------------------------------------------------
if (only.includes('embedded')) {
  const XMP = (i: number) =>
    `<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:photoshop="http://ns.adobe.com/photoshop/1.0/" xmlns:xmpRights="http://ns.adobe.com/xap/1.0/rights/" photoshop:Credit="ACME Photo" photoshop:City="Lyon"><dc:title><rdf:Alt><rdf:li xml:lang="x-default">Photo ${i}</rdf:li></rdf:Alt></dc:title><dc:description><rdf:Alt><rdf:li xml:lang="x-default">Waves at dusk &amp; more</rdf:li></rdf:Alt></dc:description><dc:subject><rdf:Bag><rdf:li>sea</rdf:li><rdf:li>dusk</rdf:li><rdf:li>k${i}</rdf:li></rdf:Bag></dc:subject><dc:creator><rdf:Seq><rdf:li>Ann Smith</rdf:li></rdf:Seq></dc:creator><dc:rights><rdf:Alt><rdf:li xml:lang="x-default">© 2026 Ann Smith</rdf:li></rdf:Alt></dc:rights></rdf:Description></rdf:RDF></x:xmpmeta><?xpacket end="w"?>`;
  const files: string[] = [];
  for (let i = 0; i < 20; i++) {
    const path = join(dir, `photo-${i}.jpg`);
    writeFileSync(
      path,
      await sharp({
        create: {
          width: 2000,
          height: 1500,
          channels: 3,
          background: { r: 40 + i * 9, g: 90, b: 140 },
          noise: { type: 'gaussian', mean: 128, sigma: 20 },
        },
      })
        .withExif({
          IFD0: {
            ImageDescription: `exif description ${i}`,
            Artist: 'Exif Artist',
            Copyright: 'Exif copyright',
            Make: 'Bench',
            Model: 'Camera',
          },
        })
        .withXmp(XMP(i))
        .jpeg({ quality: 85 })
        .toBuffer(),
    );
    files.push(path);
  }
  const rate = async (fn: (file: string) => Promise<unknown>) => {
    const t = performance.now();
    for (let i = 0; i < EMBEDDED_READS; i++) await fn(files[i % files.length]!);
    return EMBEDDED_READS / ((performance.now() - t) / 1000);
  };
  const alone = (f: string) => exifr.parse(f, EXIFR_OPTIONS);
  await rate(alone);
  await rate(readEmbedded);
  const a: number[] = [];
  const b: number[] = [];
  for (let round = 0; round < 5; round++) {
    a.push(await rate(alone));
    b.push(await rate(readEmbedded));
  }
  const sample = await readEmbedded(files[0]!);
  printTable(
    `Embedded metadata of 20 camera-size JPEGs (2000×1500, EXIF + XMP), read from disk ${EMBEDDED_READS} times per round, median of 5 rounds; ${Object.keys(sample).length} fields mapped per file; ${load()}`,
    ['path', 'files/s', 'vs reader alone'],
    [
      ['exifr.parse alone (same options)', fmt(percentile(a, 50), 0), '1.00'],
      ['Tessera readEmbedded (exifr + mapping)', fmt(percentile(b, 50), 0), fmt(percentile(b, 50) / percentile(a, 50))],
    ],
    {
      'files/s': 'files read per second (higher is better)',
      'vs reader alone': 'Tessera’s files/s divided by exifr alone, same run (target ≥ 0.8)',
    },
  );
}

rmSync(dir, { recursive: true, force: true });
