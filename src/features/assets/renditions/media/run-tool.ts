import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import type { MediaConfig } from '../../../../config.ts';
import { RenditionError } from '../rendition-error.ts';

/** Why a conversion stopped early that is not the file's fault: the job is retried, not failed. */
export class ConversionAborted extends Error {}

export interface ToolRun {
  stdout: Buffer;
  stderr: string;
}

const STDOUT_MAX = 64 * 1024 * 1024;
const STDERR_KEEP = 64 * 1024;

/**
 * Runs a converter (ffmpeg, ffprobe, soffice) as a child process with bounds: its address space is
 * limited (`ulimit -v`, TESSERA_MEDIA_MEMORY_MB), it is killed after TESSERA_MEDIA_TIMEOUT_SECONDS
 * and when `signal` aborts (the worker stops or loses the job). A non-zero exit is a RenditionError
 * carrying the tool's last error line, so the asset records why.
 */
export function runTool(
  media: MediaConfig,
  binary: string,
  args: readonly string[],
  signal?: AbortSignal,
  options: { cwd?: string; env?: NodeJS.ProcessEnv; label?: string } = {},
): Promise<ToolRun> {
  const label = options.label ?? binary.split('/').pop() ?? binary;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new ConversionAborted(`${label} was not started: ${(signal.reason as Error)?.message ?? 'cancelled'}`));
      return;
    }
    // `sh -c 'ulimit -v N; exec "$0" "$@"'`: the limit applies to the converter itself, with no shell left behind.
    const child = spawn(
      '/bin/sh',
      ['-c', `ulimit -v ${media.memoryMb * 1024} 2>/dev/null; exec "$0" "$@"`, binary, ...args],
      {
        cwd: options.cwd,
        env: options.env ?? { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: options.cwd ?? '/tmp' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const out: Buffer[] = [];
    let outBytes = 0;
    let err = '';
    let ended: string | undefined;
    child.stdout.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > STDOUT_MAX) stop(`${label} wrote more than ${STDOUT_MAX} bytes`);
      else out.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      err = (err + chunk.toString('utf8')).slice(-STDERR_KEEP);
    });
    const stop = (why: string) => {
      if (ended) return;
      ended = why;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => stop('timeout'), media.timeoutSeconds * 1000);
    const onAbort = () => stop('abort');
    signal?.addEventListener('abort', onAbort, { once: true });
    child.on('error', (error) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      reject(new RenditionError(`${label} could not be started: ${error.message}`));
    });
    child.on('close', (code, killedBy) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (ended === 'abort')
        return reject(
          new ConversionAborted(`${label} was stopped: ${(signal?.reason as Error)?.message ?? 'cancelled'}`),
        );
      if (ended === 'timeout')
        return reject(
          new RenditionError(`${label} took longer than ${media.timeoutSeconds} s (TESSERA_MEDIA_TIMEOUT_SECONDS)`),
        );
      if (ended) return reject(new RenditionError(ended));
      if (code !== 0) {
        const line = lastErrorLine(err) ?? (killedBy ? `killed by ${killedBy}` : `exit code ${code}`);
        return reject(new RenditionError(`${label} failed: ${line}`));
      }
      resolve({ stdout: Buffer.concat(out), stderr: err });
    });
  });
}

/** The most telling line of a tool's stderr (the last non-empty one, without paths of our temp files). */
function lastErrorLine(stderr: string): string | undefined {
  const lines = stderr
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  const line = lines.reverse().find((l) => !/^(Conversion failed!|frame=|size=)/.test(l)) ?? lines[0];
  return line?.replace(/\/[^\s:]*tessera-rend-[^\s:]*/g, '<file>').slice(0, 500);
}

const require = createRequire(import.meta.url);

function installed(pkg: string): string | undefined {
  try {
    return (require(pkg) as { path: string }).path;
  } catch {
    return undefined;
  }
}

/** ffmpeg: TESSERA_FFMPEG_PATH, else the binary @ffmpeg-installer/ffmpeg brought with npm. */
export function ffmpegPath(media: MediaConfig): string {
  const path = media.ffmpegPath ?? installed('@ffmpeg-installer/ffmpeg');
  if (!path)
    throw new RenditionError(
      'no ffmpeg: @ffmpeg-installer/ffmpeg is not installed for this platform and TESSERA_FFMPEG_PATH is not set',
    );
  return path;
}

/** ffprobe: TESSERA_FFPROBE_PATH, else the binary @ffprobe-installer/ffprobe brought with npm. */
export function ffprobePath(media: MediaConfig): string {
  const path = media.ffprobePath ?? installed('@ffprobe-installer/ffprobe');
  if (!path)
    throw new RenditionError(
      'no ffprobe: @ffprobe-installer/ffprobe is not installed for this platform and TESSERA_FFPROBE_PATH is not set',
    );
  return path;
}

/** LibreOffice: TESSERA_SOFFICE_PATH, else `soffice` or `libreoffice` found on PATH at start (config); undefined when there is none. */
export function sofficePath(media: MediaConfig): string | undefined {
  return media.sofficePath;
}
