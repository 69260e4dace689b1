import { join } from 'node:path';
import { RenditionError } from '../../rendition-error.ts';
import type { ConvertInput } from '../media.ts';
import type { ExtraRendition, MediaResult } from '../media-types.ts';
import { ffmpegPath, ffprobePath, runTool } from '../run-tool.ts';

interface ProbeStream {
  codec_type?: string;
  codec_name?: string;
  codec_long_name?: string;
  profile?: string;
  width?: number;
  height?: number;
  r_frame_rate?: string;
  avg_frame_rate?: string;
  pix_fmt?: string;
  bit_rate?: string;
  sample_rate?: string;
  channels?: number;
  channel_layout?: string;
  duration?: string;
  tags?: Record<string, string>;
  side_data_list?: { rotation?: number }[];
  disposition?: { attached_pic?: number };
}
interface Probe {
  streams?: ProbeStream[];
  format?: {
    format_name?: string;
    format_long_name?: string;
    duration?: string;
    bit_rate?: string;
    size?: string;
    tags?: Record<string, string>;
  };
}

/** The video proxy's longest side is at most 1920 and its shortest at most 1080 (1080p). */
const PROXY_W = 1920;
const PROXY_H = 1080;
/** The animated preview: a few seconds, small, muted, looping WebP. */
const PREVIEW_SECONDS = 4;
const PREVIEW_WIDTH = 320;

function num(value: string | number | undefined): number | null {
  const n = Number(value);
  return value !== undefined && Number.isFinite(n) ? n : null;
}

function rate(value: string | undefined): number | null {
  if (!value) return null;
  const [a, b] = value.split('/').map(Number);
  if (!a || !b || !Number.isFinite(a / b)) return null;
  return Math.round((a / b) * 1000) / 1000;
}

/** Reads streams and container with ffprobe (JSON); a file it cannot read is a RenditionError. */
export async function probe(input: ConvertInput): Promise<Probe> {
  const run = await runTool(
    input.media,
    ffprobePath(input.media),
    ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', input.file],
    input.signal,
    { cwd: input.dir, label: 'ffprobe' },
  );
  try {
    return JSON.parse(run.stdout.toString('utf8')) as Probe;
  } catch {
    throw new RenditionError('ffprobe gave no readable description of the file');
  }
}

/** Duration, container, codecs, frame rate, bit rates and dimensions, in technical metadata. */
export function describe(p: Probe) {
  const video = p.streams?.find((s) => s.codec_type === 'video' && !s.disposition?.attached_pic);
  const audio = p.streams?.find((s) => s.codec_type === 'audio');
  const rotation =
    Math.abs(
      num(video?.tags?.rotate) ?? num(video?.side_data_list?.find((d) => d.rotation !== undefined)?.rotation) ?? 0,
    ) %
      180 ===
    90;
  const duration = num(p.format?.duration) ?? num(video?.duration) ?? num(audio?.duration);
  return {
    video,
    audio,
    width: video?.width ? (rotation ? video.height! : video.width) : null,
    height: video?.height ? (rotation ? video.width! : video.height) : null,
    metadata: {
      container: p.format?.format_name ?? null,
      containerName: p.format?.format_long_name ?? null,
      durationSeconds: duration !== null ? Math.round(duration * 1000) / 1000 : null,
      bitRate: num(p.format?.bit_rate),
      ...(video
        ? {
            videoCodec: video.codec_name ?? null,
            videoCodecName: video.codec_long_name ?? null,
            videoProfile: video.profile ?? null,
            width: rotation ? (video.height ?? null) : (video.width ?? null),
            height: rotation ? (video.width ?? null) : (video.height ?? null),
            frameRate: rate(video.avg_frame_rate) ?? rate(video.r_frame_rate),
            pixelFormat: video.pix_fmt ?? null,
            videoBitRate: num(video.bit_rate),
            rotated: rotation,
          }
        : {}),
      ...(audio
        ? {
            audioCodec: audio.codec_name ?? null,
            audioCodecName: audio.codec_long_name ?? null,
            sampleRate: num(audio.sample_rate),
            audioChannels: audio.channels ?? null,
            channelLayout: audio.channel_layout ?? null,
            audioBitRate: num(audio.bit_rate),
          }
        : {}),
      probedBy: 'ffprobe',
    },
  };
}

/** An even size inside the box (H.264 with yuv420p needs even dimensions). */
function proxySize(width: number, height: number): { width: number; height: number } {
  const landscape = width >= height;
  const scale = Math.min(1, (landscape ? PROXY_W : PROXY_H) / width, (landscape ? PROXY_H : PROXY_W) / height);
  const even = (n: number) => Math.max(2, Math.round((n * scale) / 2) * 2);
  return { width: even(width), height: even(height) };
}

/** The ffmpeg arguments of each output (the benchmark runs the same ones directly). */
export function videoCommands(
  file: string,
  dir: string,
  d: { width: number; height: number; duration: number | null; hasAudio: boolean; box: number },
) {
  const at = d.duration && d.duration > 2 ? Math.min(1, d.duration / 10) : 0;
  const proxy = proxySize(d.width, d.height);
  const posterScale = Math.min(1, d.box / Math.max(d.width, d.height));
  const poster = {
    width: Math.max(1, Math.round(d.width * posterScale)),
    height: Math.max(1, Math.round(d.height * posterScale)),
  };
  const previewHeight = Math.max(2, Math.round((PREVIEW_WIDTH * d.height) / d.width / 2) * 2);
  return {
    poster: {
      path: join(dir, 'poster.png'),
      size: poster,
      args: [
        '-nostdin',
        '-v',
        'error',
        '-y',
        '-ss',
        String(at),
        '-i',
        file,
        '-frames:v',
        '1',
        '-vf',
        `scale=${poster.width}:${poster.height}`,
        '-f',
        'image2',
        '-c:v',
        'png',
        join(dir, 'poster.png'),
      ],
    },
    proxy: {
      path: join(dir, 'proxy.mp4'),
      size: proxy,
      args: [
        '-nostdin',
        '-v',
        'error',
        '-y',
        '-i',
        file,
        '-map',
        '0:v:0',
        ...(d.hasAudio ? ['-map', '0:a:0'] : []),
        '-vf',
        `scale=${proxy.width}:${proxy.height}`,
        '-c:v',
        'libx264',
        '-preset',
        'veryfast',
        '-crf',
        '23',
        '-pix_fmt',
        'yuv420p',
        '-profile:v',
        'high',
        ...(d.hasAudio ? ['-c:a', 'aac', '-b:a', '128k', '-ac', '2'] : []),
        '-movflags',
        '+faststart',
        '-f',
        'mp4',
        join(dir, 'proxy.mp4'),
      ],
    },
    preview: {
      path: join(dir, 'preview.webp'),
      size: { width: PREVIEW_WIDTH, height: previewHeight },
      args: [
        '-nostdin',
        '-v',
        'error',
        '-y',
        '-ss',
        String(at),
        '-t',
        String(PREVIEW_SECONDS),
        '-i',
        file,
        '-an',
        '-vf',
        `fps=8,scale=${PREVIEW_WIDTH}:${previewHeight}`,
        '-c:v',
        'libwebp_anim',
        '-loop',
        '0',
        '-q:v',
        '60',
        '-f',
        'webp',
        join(dir, 'preview.webp'),
      ],
    },
  };
}

/** The ffmpeg arguments for an audio file: a waveform picture and an AAC proxy. */
export function audioCommands(file: string, dir: string) {
  return {
    waveform: {
      path: join(dir, 'waveform.png'),
      args: [
        '-nostdin',
        '-v',
        'error',
        '-y',
        '-i',
        file,
        '-filter_complex',
        'aformat=channel_layouts=mono,showwavespic=s=1800x400:colors=0x2f6fab',
        '-frames:v',
        '1',
        '-f',
        'image2',
        '-c:v',
        'png',
        join(dir, 'waveform.png'),
      ],
    },
    proxy: {
      path: join(dir, 'proxy.m4a'),
      args: [
        '-nostdin',
        '-v',
        'error',
        '-y',
        '-i',
        file,
        '-vn',
        '-map',
        '0:a:0',
        '-c:a',
        'aac',
        '-b:a',
        '160k',
        '-ac',
        '2',
        '-movflags',
        '+faststart',
        '-f',
        'mp4',
        join(dir, 'proxy.m4a'),
      ],
    },
  };
}

/**
 * Video: a poster frame (the source of the image renditions), a web proxy (H.264/AAC MP4, at most
 * 1080p, `videoProxy`) and a short animated WebP (`videoPreview`). Audio: a waveform picture (the
 * image renditions) and an AAC proxy (`audioProxy`). All by ffmpeg, bounded by runTool.
 */
export async function convertAudioVideo(input: ConvertInput): Promise<MediaResult> {
  const described = describe(await probe(input));
  const ffmpeg = ffmpegPath(input.media);
  const run = (args: string[], label: string) =>
    runTool(input.media, ffmpeg, args, input.signal, { cwd: input.dir, label });
  if (described.video && described.width && described.height) {
    const c = videoCommands(input.file, input.dir, {
      width: described.width,
      height: described.height,
      duration: described.metadata.durationSeconds,
      hasAudio: Boolean(described.audio),
      box: input.box,
    });
    await run(c.poster.args, 'ffmpeg (poster frame)');
    await run(c.proxy.args, 'ffmpeg (web proxy)');
    await run(c.preview.args, 'ffmpeg (animated preview)');
    const extra: ExtraRendition[] = [
      { name: 'videoProxy', path: c.proxy.path, ext: 'mp4', contentType: 'video/mp4', ...c.proxy.size },
      { name: 'videoPreview', path: c.preview.path, ext: 'webp', contentType: 'image/webp', ...c.preview.size },
    ];
    return { visual: { kind: 'file', path: c.poster.path }, extra, technical: { video_metadata: described.metadata } };
  }
  if (described.audio) {
    const c = audioCommands(input.file, input.dir);
    await run(c.waveform.args, 'ffmpeg (waveform)');
    await run(c.proxy.args, 'ffmpeg (audio proxy)');
    return {
      visual: { kind: 'file', path: c.waveform.path },
      extra: [{ name: 'audioProxy', path: c.proxy.path, ext: 'm4a', contentType: 'audio/mp4', width: 0, height: 0 }],
      technical: { audio_metadata: described.metadata },
    };
  }
  throw new RenditionError('the file has no video or audio stream ffmpeg can read');
}
