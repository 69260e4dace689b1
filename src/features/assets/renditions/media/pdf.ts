import { Worker } from 'node:worker_threads';
import type { MediaConfig } from '../../../../config.ts';
import { RenditionError } from '../rendition-error.ts';
import { keptText, type MediaResult, type RawRaster } from './media-types.ts';
import { ConversionAborted } from './run-tool.ts';

export interface PdfAnalysis {
  pageCount: number;
  properties: Record<string, string>;
  text?: string;
  truncated: boolean;
  pageSize?: { width: number; height: number };
  raster?: RawRaster;
}

/**
 * Runs MuPDF (WebAssembly) on one PDF in a worker thread: `page` (0-based) rendered to fit `box`
 * pixels, `text` extracted when asked. The thread is terminated after TESSERA_MEDIA_TIMEOUT_SECONDS,
 * when `signal` aborts, or when its heap passes TESSERA_MEDIA_MEMORY_MB; a file MuPDF cannot read
 * is a RenditionError with MuPDF's reason.
 */
export function analysePdf(
  media: MediaConfig,
  file: string,
  options: { page: number; box: number; text: boolean },
  signal?: AbortSignal,
): Promise<PdfAnalysis> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new ConversionAborted('the PDF conversion was cancelled'));
    const worker = new Worker(new URL('./pdf.worker.ts', import.meta.url), {
      workerData: { file, ...options, textMaxChars: media.textMaxChars },
      resourceLimits: { maxOldGenerationSizeMb: media.memoryMb },
      stderr: true,
      stdout: true,
    });
    let stderr = '';
    worker.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-4000);
    });
    worker.stdout.resume();
    let settled = false;
    const done = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      fn();
      void worker.terminate();
    };
    const timer = setTimeout(
      () =>
        done(() =>
          reject(
            new RenditionError(
              `the PDF took longer than ${media.timeoutSeconds} s to convert (TESSERA_MEDIA_TIMEOUT_SECONDS)`,
            ),
          ),
        ),
      media.timeoutSeconds * 1000,
    );
    const onAbort = () => done(() => reject(new ConversionAborted('the PDF conversion was cancelled')));
    signal?.addEventListener('abort', onAbort, { once: true });
    worker.on(
      'message',
      (
        msg:
          | {
              ok: true;
              result: Omit<PdfAnalysis, 'raster'> & { raster?: { data: Uint8Array; width: number; height: number } };
            }
          | { ok: false; message: string },
      ) => {
        if (!msg.ok) return done(() => reject(new RenditionError(`the PDF could not be read: ${msg.message}`)));
        const { raster, ...rest } = msg.result;
        done(() =>
          resolve({
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
        );
      },
    );
    worker.on('error', (error) => {
      const reason = /ERR_WORKER_OUT_OF_MEMORY/.test((error as NodeJS.ErrnoException).code ?? '')
        ? `it needs more than ${media.memoryMb} MiB (TESSERA_MEDIA_MEMORY_MB)`
        : error.message || stderr.trim().split('\n').pop() || 'unknown error';
      done(() => reject(new RenditionError(`the PDF could not be converted: ${reason}`)));
    });
    worker.on('exit', (code) =>
      done(() =>
        reject(
          new RenditionError(
            `the PDF converter stopped (exit code ${code})${stderr ? `: ${stderr.trim().split('\n').pop()}` : ''}`,
          ),
        ),
      ),
    );
  });
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
