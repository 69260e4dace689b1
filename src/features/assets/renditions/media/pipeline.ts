import type { Metadata } from 'sharp';
import type { Deps } from '../../../../deps.ts';
import { loadSharp } from '../../../../core/sharp.ts';
import { RenditionError } from '../rendition-error.ts';
import type { MediaResult } from './media-types.ts';

/** How often a long conversion checks that its asset still holds the same content (purged or replaced: stop). */
const WATCH_MS = 2000;

/**
 * An AbortSignal for one conversion: aborted when the job's own signal aborts (the worker stops or
 * lost the lease) and when the asset is purged or its content replaced while converting, so the
 * child process (ffmpeg, LibreOffice) or the PDF thread is killed at once.
 */
export function watchJob(
  deps: Deps,
  assetId: string,
  sha256: string,
  jobSignal?: AbortSignal,
): { signal: AbortSignal; stop(): void } {
  const controller = new AbortController();
  const onJob = () => controller.abort(jobSignal?.reason ?? new Error('cancelled'));
  if (jobSignal?.aborted) onJob();
  jobSignal?.addEventListener('abort', onJob, { once: true });
  const timer = setInterval(() => {
    deps.db
      .selectFrom('assets')
      .select(['sha256', 'deleted_at'])
      .where('id', '=', assetId)
      .executeTakeFirst()
      .then((row) => {
        if (!row) controller.abort(new Error('the asset was purged'));
        else if (row.sha256 !== sha256) controller.abort(new Error('the asset content was replaced'));
      })
      .catch(() => undefined);
  }, WATCH_MS);
  timer.unref();
  return {
    signal: controller.signal,
    stop: () => {
      clearInterval(timer);
      jobSignal?.removeEventListener('abort', onJob);
    },
  };
}

/** An animated GIF or WebP (more than one frame): its previews stay animated. */
export function isAnimated(info: { format: string; meta: Metadata }): boolean {
  return (info.format === 'gif' || info.format === 'webp') && (info.meta.pages ?? 1) > 1;
}

interface Spec {
  name: string;
  size: number;
}
interface Rendered {
  name: string;
  data: Buffer;
  width: number;
  height: number;
  contentType: string;
}

/**
 * Every frame resized (sharp `animated: true`), encoded in the source's format (GIF stays GIF,
 * WebP stays WebP) with its delays and loop count; never upscaled.
 */
export async function renderAnimated(
  file: string,
  specs: readonly Spec[],
  info: { format: string; width: number; height: number },
  maxPixels: number,
  timeoutSeconds: number,
): Promise<Rendered[]> {
  const sharp = await loadSharp();
  return Promise.all(
    specs.map(async (spec) => {
      const scale = Math.min(1, spec.size / Math.max(info.width, info.height));
      const width = Math.max(1, Math.round(info.width * scale));
      let img = sharp(file, { animated: true, limitInputPixels: maxPixels, failOn: 'error' })
        .timeout({ seconds: timeoutSeconds })
        .resize(width, undefined, { fit: 'inside', withoutEnlargement: true });
      img = info.format === 'gif' ? img.gif() : img.webp({ quality: 80 });
      try {
        const { data, info: out } = await img.toBuffer({ resolveWithObject: true });
        return {
          name: spec.name,
          data,
          width: out.width,
          height: out.pageHeight ?? out.height,
          contentType: `image/${info.format}`,
        };
      } catch (error) {
        throw new RenditionError(`the animated image could not be rendered: ${(error as Error).message}`);
      }
    }),
  );
}

/**
 * What a converter found, merged into technical metadata: its own sections (document_metadata,
 * video_metadata, audio_metadata, image_metadata merged key by key), the extracted text the search
 * index reads (`extractedText`, the `content` keyword field) and a note when there is no preview.
 */
export function mergeMediaTechnical(tech: Record<string, unknown>, media: MediaResult): void {
  for (const [section, value] of Object.entries(media.technical)) {
    const before = tech[section];
    tech[section] =
      before && typeof before === 'object' && value && typeof value === 'object'
        ? { ...(before as object), ...(value as object) }
        : value;
  }
  if (media.text !== undefined && media.text !== '') tech.extractedText = media.text;
  if (media.note) tech.previewNote = media.note;
}

/** The asset's width and height: the video's frame, an image's pixels; none for documents and audio. */
export function mediaDimensions(
  media: MediaResult | undefined,
  info: { width: number; height: number } | undefined,
): { width: number; height: number } | undefined {
  if (!media) return undefined;
  const video = media.technical.video_metadata as { width?: number | null; height?: number | null } | undefined;
  if (video?.width && video.height) return { width: video.width, height: video.height };
  if (media.technical.image_metadata && info) {
    const img = media.technical.image_metadata as { imageWidth?: number; imageHeight?: number };
    return img.imageWidth && img.imageHeight ? { width: img.imageWidth, height: img.imageHeight } : info;
  }
  return undefined;
}
