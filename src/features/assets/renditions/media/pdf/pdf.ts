import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { MediaConfig } from '../../../../../config.ts';
import { RenditionError } from '../../rendition-error.ts';
import { keptText, type MediaResult, type RawRaster } from '../media-types.ts';
import { ConversionAborted } from '../run-tool.ts';

export interface PdfAnalysis {
  pageCount: number;
  properties: Record<string, string>;
  text?: string;
  truncated: boolean;
  pageSize?: { width: number; height: number };
  raster?: RawRaster;
}

type PdfRequest = { page: number; box: number; text: boolean };
type WorkerReply =
  | {
      id: number;
      ok: true;
      result: Omit<PdfAnalysis, 'raster'> & { raster?: { data: Uint8Array; width: number; height: number } };
    }
  | { id: number; ok: false; message: string }
  /** What the thread wrote to stderr (pdf.worker.ts forwards it): its tail is the reason of a crash. */
  | { stderr: string };

interface Job {
  file: string;
  options: PdfRequest;
  media: MediaConfig;
  signal?: AbortSignal;
  resolve(value: PdfAnalysis): void;
  reject(error: Error): void;
  /** Leaves the queue when its signal aborts before a thread takes it. */
  onQueuedAbort(): void;
}

interface Thread {
  worker: Worker;
  memoryMb: number;
  jobs: number;
  stderr: string;
  current?: { id: number; job: Job; finish(fn: () => void, fatal: boolean): void };
  idleTimer?: NodeJS.Timeout;
  dead: boolean;
}

/** At most this many MuPDF threads at once; further PDF jobs wait for one to be free. */
export const PDF_THREADS = Math.max(1, Math.min(2, availableParallelism()));
/** A thread is replaced after this many jobs, so a WebAssembly heap grown by one large file is given back. */
const JOBS_PER_THREAD = 100;
/** A thread with nothing to do for this long ends (a server idle on PDFs holds no MuPDF heap). */
const IDLE_MS = 60_000;

/** The young generation of a MuPDF thread: the text of a long document is many short-lived strings. */
const YOUNG_MB = 48;

const threads: Thread[] = [];
const queue: Job[] = [];
let nextId = 1;

function startThread(memoryMb: number): Thread {
  const worker = new Worker(new URL('./pdf.worker.ts', import.meta.url), {
    resourceLimits: { maxOldGenerationSizeMb: memoryMb, maxYoungGenerationSizeMb: YOUNG_MB },
    // Not piped: a worker whose piped stdio has been read holds the event loop open even after unref(), so an
    // idle thread kept a finished process (a test file, a CLI command) alive until its idle timer ended it.
    // The worker sends its stderr as messages instead, and discards its stdout.
  });
  const thread: Thread = { worker, memoryMb, jobs: 0, stderr: '', dead: false };
  worker.on('message', (msg: WorkerReply) => {
    if ('stderr' in msg) {
      thread.stderr = (thread.stderr + msg.stderr).slice(-4000);
      return;
    }
    const current = thread.current;
    if (!current || msg.id !== current.id) return;
    if (!msg.ok)
      return current.finish(
        () => current.job.reject(new RenditionError(`the PDF could not be read: ${msg.message}`)),
        false,
      );
    const { raster, ...rest } = msg.result;
    current.finish(
      () =>
        current.job.resolve({
          ...rest,
          ...(raster
            ? {
                raster: {
                  data: Buffer.from(raster.data.buffer, raster.data.byteOffset, raster.data.byteLength),
                  width: raster.width,
                  height: raster.height,
                  channels: 3,
                },
              }
            : {}),
        }),
      false,
    );
  });
  worker.on('error', (error) => {
    const reason = /ERR_WORKER_OUT_OF_MEMORY/.test((error as NodeJS.ErrnoException).code ?? '')
      ? `it needs more than ${memoryMb} MiB (TESSERA_MEDIA_MEMORY_MB)`
      : error.message || thread.stderr.trim().split('\n').pop() || 'unknown error';
    const current = thread.current;
    retire(thread);
    current?.finish(() => current.job.reject(new RenditionError(`the PDF could not be converted: ${reason}`)), true);
  });
  worker.on('exit', (code) => {
    const current = thread.current;
    retire(thread);
    current?.finish(
      () =>
        current.job.reject(
          new RenditionError(
            `the PDF converter stopped (exit code ${code})${thread.stderr ? `: ${thread.stderr.trim().split('\n').pop()}` : ''}`,
          ),
        ),
      true,
    );
  });
  threads.push(thread);
  return thread;
}

/** Takes a thread out of the pool and ends it (its current job, if any, is settled by the caller). */
function retire(thread: Thread): void {
  if (thread.dead) return;
  thread.dead = true;
  clearTimeout(thread.idleTimer);
  const i = threads.indexOf(thread);
  if (i >= 0) threads.splice(i, 1);
  void thread.worker.terminate();
  pump();
}

function run(thread: Thread, job: Job): void {
  clearTimeout(thread.idleTimer);
  thread.worker.ref();
  const id = nextId++;
  let settled = false;
  const finish = (fn: () => void, fatal: boolean) => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    job.signal?.removeEventListener('abort', onAbort);
    thread.current = undefined;
    thread.jobs += 1;
    // A timed-out or cancelled job leaves MuPDF mid-page: its thread is ended, never reused.
    if (fatal || thread.jobs >= JOBS_PER_THREAD) retire(thread);
    else {
      thread.worker.unref();
      thread.idleTimer = setTimeout(() => retire(thread), IDLE_MS);
      thread.idleTimer.unref();
    }
    fn();
    pump();
  };
  const timer = setTimeout(
    () =>
      finish(
        () =>
          job.reject(
            new RenditionError(
              `the PDF took longer than ${job.media.timeoutSeconds} s to convert (TESSERA_MEDIA_TIMEOUT_SECONDS)`,
            ),
          ),
        true,
      ),
    job.media.timeoutSeconds * 1000,
  );
  const onAbort = () => finish(() => job.reject(new ConversionAborted('the PDF conversion was cancelled')), true);
  job.signal?.addEventListener('abort', onAbort, { once: true });
  thread.current = { id, job, finish };
  thread.worker.postMessage({
    id,
    req: { file: job.file, ...job.options, textMaxChars: job.media.textMaxChars },
  });
}

/** Gives waiting jobs to free threads, starting threads up to PDF_THREADS. */
function pump(): void {
  while (queue.length > 0) {
    const job = queue[0]!;
    let thread = threads.find((t) => !t.current && !t.dead && t.memoryMb === job.media.memoryMb);
    if (!thread) {
      if (threads.length >= PDF_THREADS) {
        // A free thread with another memory bound (a setting changed in tests) makes room.
        const spare = threads.find((t) => !t.current);
        if (!spare) return;
        retire(spare);
      }
      thread = startThread(job.media.memoryMb);
    }
    queue.shift();
    job.signal?.removeEventListener('abort', job.onQueuedAbort);
    run(thread, job);
  }
}

/**
 * Runs MuPDF (WebAssembly) on one PDF in a kept-warm worker thread: `page` (0-based) rendered to
 * fit `box` pixels, `text` extracted when asked. At most PDF_THREADS threads run, each doing one
 * job at a time, so loading MuPDF is paid once per thread rather than once per file. The thread is
 * terminated (and replaced on the next job) after TESSERA_MEDIA_TIMEOUT_SECONDS, when `signal`
 * aborts, or when its heap passes TESSERA_MEDIA_MEMORY_MB; a file MuPDF cannot read is a
 * RenditionError with MuPDF's reason, and the thread serves the next file.
 */
export function analysePdf(
  media: MediaConfig,
  file: string,
  options: PdfRequest,
  signal?: AbortSignal,
): Promise<PdfAnalysis> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new ConversionAborted('the PDF conversion was cancelled'));
    const job: Job = {
      file,
      options,
      media,
      signal,
      resolve,
      reject,
      onQueuedAbort: () => {
        const i = queue.indexOf(job);
        if (i < 0) return;
        queue.splice(i, 1);
        reject(new ConversionAborted('the PDF conversion was cancelled'));
      },
    };
    signal?.addEventListener('abort', job.onQueuedAbort, { once: true });
    queue.push(job);
    pump();
  });
}

/** Ends every idle MuPDF thread now (benchmarks and tests that want a clean exit; never needed in a server). */
export async function closePdfThreads(): Promise<void> {
  const idle = threads.filter((t) => !t.current);
  for (const t of idle) retire(t);
  await Promise.all(idle.map((t) => t.worker.terminate()));
}

/** PDF → page 1 as the visual of the image renditions, page count and properties, full text. */
export async function convertPdf(
  media: MediaConfig,
  file: string,
  box: number,
  signal?: AbortSignal,
): Promise<MediaResult> {
  const pdf = await analysePdf(media, file, { page: 0, box, text: true }, signal);
  const kept = keptText(pdf.text ?? '', media.textMaxChars);
  return {
    visual: pdf.raster ? { kind: 'raw', raster: pdf.raster } : undefined,
    extra: [],
    text: kept.text,
    technical: {
      document_metadata: {
        pageCount: pdf.pageCount,
        ...pdf.properties,
        ...(pdf.pageSize ? { pageWidthPt: pdf.pageSize.width, pageHeightPt: pdf.pageSize.height } : {}),
        textCharacters: kept.text.length,
        textTruncated: kept.truncated || pdf.truncated,
        extractedBy: 'MuPDF (mupdf WebAssembly)',
      },
    },
  };
}
