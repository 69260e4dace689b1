import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { RenditionError } from '../../rendition-error.ts';
import type { RawRaster } from '../media-types.ts';

const CHILD = fileURLToPath(new URL('./svg-raster.child.ts', import.meta.url));
/** What the child writes first, once it is about to draw. */
const READY = Buffer.from('ready\n');
const STARTUP_MS = 60_000;

/**
 * Rasterises an SVG (fit inside `box`, RGBA) in a child process that is killed (SIGKILL) once it
 * runs past `timeoutSeconds` or `signal` aborts (issue 23, defect 7): a filter bomb blocks inside
 * one librsvg call, which neither sharp's timeout nor terminating a worker thread can interrupt,
 * and would hold a thread of the shared pool for as long as it runs. The failure names the setting.
 */
export function rasteriseSvg(
  svg: Buffer,
  box: number,
  maxPixels: number,
  timeoutSeconds: number,
  signal?: AbortSignal,
): Promise<RawRaster> {
  return new Promise<RawRaster>((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, JSON.stringify({ box, maxPixels })], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    let outBytes = 0;
    let err = '';
    let failure: RenditionError | undefined;
    const stop = (reason: RenditionError) => {
      failure ??= reason;
      child.kill('SIGKILL');
    };
    const tooLong = () =>
      stop(
        new RenditionError(
          `the image took longer than ${timeoutSeconds} s to render (TESSERA_RENDITION_TIMEOUT_SECONDS)`,
        ),
      );
    // The limit runs from when the child starts drawing; its start-up (a process, libvips) has a bound of its own.
    let timer = setTimeout(() => stop(new RenditionError('the SVG rasteriser did not start')), STARTUP_MS);
    let drawing = false;
    const onAbort = () => stop(new RenditionError('the rendition was stopped'));
    signal?.addEventListener('abort', onAbort, { once: true });
    // At most the header line and box × box RGBA pixels: anything more is a broken child.
    const limit = box * box * 4 + 1024 + READY.length;
    child.stdout.on('data', (chunk: Buffer) => {
      if (!drawing && outBytes + chunk.length >= READY.length) {
        drawing = true;
        clearTimeout(timer);
        timer = setTimeout(tooLong, timeoutSeconds * 1000);
      }
      outBytes += chunk.length;
      if (outBytes > limit) return stop(new RenditionError('the SVG rasteriser answered more than it may'));
      out.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      err = (err + chunk.toString('utf8')).slice(-1000);
    });
    child.stdin.on('error', () => {}); // a child killed before reading everything
    child.stdin.end(svg);
    child.on('error', (error) => stop(new RenditionError(`the SVG rasteriser could not start: ${error.message}`)));
    child.on('close', (code) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (failure) return reject(failure);
      if (code !== 0)
        return reject(new RenditionError(`the image could not be decoded: ${err.trim() || `exit code ${code}`}`));
      const all = Buffer.concat(out, outBytes).subarray(READY.length);
      const nl = all.indexOf(10);
      try {
        const head = JSON.parse(all.subarray(0, nl).toString('utf8')) as { width: number; height: number; channels: 4 };
        const data = all.subarray(nl + 1);
        if (data.length !== head.width * head.height * head.channels) throw new Error('short pixel data');
        resolve({ data, width: head.width, height: head.height, channels: head.channels });
      } catch (error) {
        reject(new RenditionError(`the SVG rasteriser answered badly: ${(error as Error).message}`));
      }
    });
  });
}
