import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { MediaConfig } from '../../../../../config.ts';
import { RenditionError } from '../../rendition-error.ts';
import { makePdf } from '../media.fixtures.ts';
import { analysePdf, closePdfThreads, PDF_THREADS } from './pdf.ts';
import { ConversionAborted } from '../run-tool.ts';

const media: MediaConfig = {
  ffmpegPath: undefined,
  ffprobePath: undefined,
  sofficePath: undefined,
  timeoutSeconds: 60,
  memoryMb: 512,
  textMaxChars: 100_000,
};

describe('PDF threads: kept warm, one job each, replaced when a job fails them', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-pdf-threads-'));
  });
  after(async () => {
    await closePdfThreads();
    await rm(dir, { recursive: true, force: true });
  });
  const file = async (name: string, bytes: Buffer) => {
    const path = join(dir, name);
    await writeFile(path, bytes);
    return path;
  };

  it('answers more jobs at once than there are threads, each with its own file', async () => {
    const files = await Promise.all(
      Array.from({ length: PDF_THREADS * 3 }, (_, i) =>
        file(`many-${i}.pdf`, makePdf(Array.from({ length: i + 1 }, (_p, n) => `file${i} page${n}`))),
      ),
    );
    const results = await Promise.all(files.map((f) => analysePdf(media, f, { page: 0, box: 100, text: true })));
    results.forEach((r, i) => {
      assert.equal(r.pageCount, i + 1);
      assert.match(r.text ?? '', new RegExp(`file${i} page0`));
      assert.equal(r.raster?.height, 100);
    });
  });

  it('a file MuPDF cannot read is a RenditionError, and the next file is converted', async () => {
    const good = makePdf(['after the broken one']);
    const broken = await file('broken.pdf', Buffer.concat([good.subarray(0, 40), Buffer.alloc(300, 0x41)]));
    await assert.rejects(analysePdf(media, broken, { page: 0, box: 100, text: true }), RenditionError);
    const ok = await analysePdf(media, await file('good.pdf', good), { page: 0, box: 100, text: true });
    assert.match(ok.text ?? '', /after the broken one/);
  });

  it('a cancelled job (queued or running) rejects as ConversionAborted and later jobs still run', async () => {
    const big = await file('big.pdf', makePdf(Array.from({ length: 200 }, (_, i) => `long page ${i}`)));
    const controllers = Array.from({ length: PDF_THREADS + 2 }, () => new AbortController());
    const runs = controllers.map((c) => analysePdf(media, big, { page: 0, box: 1500, text: true }, c.signal));
    for (const c of controllers) c.abort(new Error('stop'));
    for (const run of runs) await assert.rejects(run, ConversionAborted);
    const aborted = new AbortController();
    aborted.abort();
    await assert.rejects(analysePdf(media, big, { page: 0, box: 10, text: false }, aborted.signal), ConversionAborted);
    const ok = await analysePdf(media, big, { page: 1, box: 50, text: false });
    assert.equal(ok.pageCount, 200);
    assert.equal(ok.raster?.height, 50);
  });

  it('an idle thread does not hold the process open: a process that converted a PDF ends on its own', async () => {
    // The idle thread lives 60 s; a process with nothing else to do must not wait for it. (Reading a worker's
    // piped stdio held the event loop open after unref(): every test file that rendered a PDF or an office
    // document ran a minute longer than its tests.)
    const pdf = await file('exit.pdf', makePdf(['exit promptly']));
    const script = `
      const { analysePdf } = await import(${JSON.stringify(new URL('./pdf.ts', import.meta.url).href)});
      const r = await analysePdf(${JSON.stringify(media)}, ${JSON.stringify(pdf)}, { page: 0, box: 50, text: true });
      console.log(r.pageCount);`;
    const scriptFile = join(dir, 'convert-and-exit.mjs');
    await writeFile(scriptFile, script);
    const child = spawn(process.execPath, [scriptFile], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += String(chunk);
    });
    const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.once('exit', (c, s) => resolve([c, s])),
    );
    clearTimeout(killer);
    assert.equal(signal, null, 'the process was still running 30 s after its PDF was converted');
    assert.equal(code, 0);
    assert.equal(out.trim(), '1');
  });
});
