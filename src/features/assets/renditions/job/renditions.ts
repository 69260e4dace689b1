import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Metadata } from 'sharp';
import type { JobPayload } from '../../../../core/jobs/catalog.ts';
import type { Deps } from '../../../../deps.ts';
import { loadSharp } from '../../../../core/sharp.ts';
import { fromJson, toJson } from '../../../../core/db/json.ts';
import { publishEvent } from '../../../../core/events/index.ts';
import { FatalJobError } from '../../../../core/jobs/queue.ts';
import { type AssetRow, contentHeld, securityOf, templateNames } from '../../assets.repo.ts';
import { isImage } from '../../upload/content-types.ts';
import { humanSize, parseExif, parseIptc, parseXmp } from '../image-metadata/image-metadata.ts';
import {
  eventAsset,
  renditionUrl,
  SHORT_NAMES,
  type RenditionName,
  type StoredRendition,
} from '../../views/present.ts';
import { recordedError } from '../../../../core/recorded-error.ts';
import { exiftoolKeys } from '../image-metadata/exiftool-keys.ts';
import { RenditionError } from '../rendition-error.ts';
import { convertMedia, mediaKind } from '../media/media.ts';
import type { MediaResult, RawRaster } from '../media/media-types.ts';
import { rasteriseSvg } from '../media/images/svg-raster.ts';
import { isAnimated, mediaDimensions, mergeMediaTechnical, renderAnimated, watchJob } from '../media/pipeline.ts';
import { summaryOfThumbnail, writeVisualSummary } from '../visual-summary/visual-summary.service.ts';
import {
  fitInside,
  type ImageInput,
  type RenderedImage,
  renderImage,
  type RenditionSpec,
  source,
  type SourceInfo,
} from '../render/render-image.ts';
import { renderInRenderProcess } from '../render/render-process.ts';

export const RENDITION_SPECS: readonly RenditionSpec[] = [
  { name: 'imageThumb', size: 200 },
  { name: 'imagePreview', size: 700 },
  { name: 'imagePreviewLarge', size: 1000 },
  { name: 'mezzaninePreview', size: 3000 },
];

/** Changes whenever the output of a recipe would: part of every rendition's storage key. */
export const RECIPE_VERSION = createHash('sha256')
  .update(JSON.stringify({ RENDITION_SPECS, jpeg: { quality: 80 }, png: { compressionLevel: 6 }, v: 2 }))
  .digest('hex')
  .slice(0, 12);

export { RenditionError };
export { fitInside, renderImage, type ImageInput, type RenderedImage, type RenditionSpec, type SourceInfo };

/** Header only: dimensions (after EXIF orientation), format, and the pixel limit. */
export async function inspect(input: ImageInput, maxPixels: number): Promise<SourceInfo> {
  const sharp = await loadSharp();
  let meta: Metadata;
  try {
    meta = await source(sharp, input, { limitInputPixels: false }).metadata();
  } catch (error) {
    throw new RenditionError(`not a readable image: ${(error as Error).message}`);
  }
  if (!meta.width || !meta.height || !meta.format)
    throw new RenditionError('not a readable image: no dimensions in its header');
  if (meta.width * meta.height > maxPixels)
    throw new RenditionError(`the image has ${meta.width * meta.height} pixels, more than the limit of ${maxPixels}`);
  const swap = (meta.orientation ?? 1) >= 5;
  return {
    format: meta.format,
    width: swap ? meta.height : meta.width,
    height: swap ? meta.width : meta.height,
    hasAlpha: Boolean(meta.hasAlpha),
    meta,
  };
}

/**
 * An SVG is drawn in a child process the time limit can kill (a filter bomb blocks inside one
 * librsvg call); its pixels then take the ordinary path.
 */
async function svgRaster(
  input: ImageInput,
  specs: readonly RenditionSpec[],
  maxPixels: number,
  timeoutSeconds: number,
  signal?: AbortSignal,
): Promise<RawRaster> {
  if (typeof input !== 'string' && !Buffer.isBuffer(input)) return input;
  const bytes = typeof input === 'string' ? await readFile(input) : input;
  return rasteriseSvg(bytes, Math.max(...specs.map((s) => s.size)), maxPixels, timeoutSeconds, signal);
}

/** A labelled placeholder for content no converter handles yet (PDF, video, …). */
export async function placeholder(label: string): Promise<Buffer> {
  const text = label
    .replace(/[^A-Za-z0-9 ./+-]/g, '')
    .slice(0, 20)
    .toUpperCase();
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="200" height="200"><rect width="200" height="200" fill="#e4e7eb"/><text x="100" y="108" font-family="sans-serif" font-size="22" text-anchor="middle" fill="#52606d">${text}</text></svg>`;
  return (await loadSharp())(Buffer.from(svg)).png().toBuffer();
}

function technical(
  filename: string,
  size: number,
  md5: string,
  sha256: string,
  contentType: string,
  info?: SourceInfo,
): Record<string, unknown> {
  const tenovos_metadata = {
    fileName: filename,
    fileSize: humanSize(size),
    fileSizeInBytes: size,
    MD5Checksum: md5,
    SHA256Checksum: sha256,
  };
  if (!info) return { tenovos_metadata, image_metadata: { mimeType: contentType } };
  const m = info.meta;
  return {
    tenovos_metadata,
    image_metadata: {
      fileType: info.format.toUpperCase(),
      fileTypeExtension: info.format === 'jpeg' ? 'jpg' : info.format,
      mimeType: contentType,
      imageWidth: info.width,
      imageHeight: info.height,
      megapixels: Math.round((info.width * info.height) / 10_000) / 100,
      interpretation: m.space ?? null,
      channels: m.channels ?? null,
      bitDepth: m.depth ?? null,
      xResolution: m.density ?? null,
      hasAlpha: info.hasAlpha,
      orientation: m.orientation ?? 1,
      hasProfile: Boolean(m.hasProfile),
      pages: m.pages ?? 1,
      // The reference's ExifTool-style keys (bitsPerSample, imageSize, yResolution, the ICC profile's profile… keys, …).
      ...exiftoolKeys(m),
      exif: parseExif(m.exif),
      iptc: parseIptc(m.iptc),
      xmp: parseXmp(m.xmpAsString ?? m.xmp),
    },
  };
}

export const renditionKey = (orgId: string, sha256: string, name: string, ext: string) =>
  `${renditionPrefix(orgId, sha256)}/${RECIPE_VERSION}/${name}.${ext}`;

/** Every rendition of one content (all recipe versions), as a blob-store prefix. */
export const renditionPrefix = (orgId: string, sha256: string) => `renditions/${orgId}/${sha256.slice(0, 2)}/${sha256}`;

/** The payload of `assets.renditions` (core/jobs/catalog.ts). */
export type RenditionJob = JobPayload<'assets.renditions'>;

function storedRendition(
  key: string,
  r: { width: number; height: number; contentType: string; size: number },
): StoredRendition {
  return {
    key,
    width: r.width,
    height: r.height,
    contentType: r.contentType,
    size: r.size,
    etag: `"${createHash('sha256').update(key).digest('hex').slice(0, 32)}"`,
  };
}

/** The MD5 of a file, read in one pass (hex). */
async function md5OfFile(path: string): Promise<string> {
  const md5 = createHash('md5');
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) md5.update(chunk as Buffer);
  return md5.digest('hex');
}

/**
 * Whether the thumbnail is drawn, committed and announced on its own before the larger renditions:
 * every still raster image's content (not a replacement preview, not an animation, not an SVG,
 * which is rasterised once for all sizes, nor a converted medium).
 */
function thumbnailFirst(
  job: RenditionJob,
  kind: unknown,
  animated: boolean,
  info: SourceInfo,
  specs: readonly RenditionSpec[],
): boolean {
  return (
    !job.previewKey &&
    !kind &&
    !animated &&
    info.format !== 'svg' &&
    specs[0]?.name === 'imageThumb' &&
    specs.length > 1
  );
}

/**
 * The thumbnail made the asset's before the other renditions (its row, its placeholder) and
 * `asset.thumbnail.created` published, in one transaction; nothing when the content changed meanwhile.
 */
async function publishThumbnail(
  deps: Deps,
  asset: AssetRow,
  thumb: StoredRendition,
  summary: Awaited<ReturnType<typeof summaryOfThumbnail>> | undefined,
): Promise<void> {
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    const current = await trx
      .selectFrom('assets')
      .select(['sha256', 'renditions'])
      .where('id', '=', asset.id)
      .executeTakeFirst();
    if (!current || current.sha256 !== asset.sha256) return;
    await trx
      .updateTable('assets')
      .set({
        renditions: toJson({ ...fromJson<Record<string, StoredRendition>>(current.renditions, {}), imageThumb: thumb }),
        ...(summary ? { placeholder: toJson(summary.placeholder) } : {}),
        updated_at: now,
      })
      .where('id', '=', asset.id)
      .execute();
    const security = (await securityOf(trx, asset.org_id, [asset.id])).get(asset.id)!;
    const urls = { [SHORT_NAMES.imageThumb]: renditionUrl(deps, asset.id, 'imageThumb') };
    await publishEvent(trx, now, {
      orgId: asset.org_id,
      type: 'asset.thumbnail.created',
      actor: null,
      data: {
        asset: { ...eventAsset(asset, await templateNames(trx, asset.org_id, security.templateIds)), renditions: urls },
        renditions: urls,
      },
    });
  });
}

/**
 * The background job after content arrives: technical metadata, then renditions written
 * atomically before the asset row points at them. A corrupt or hostile image fails the job and
 * marks the asset's renditions failed; no partial rendition is ever referenced.
 */
export async function runRenditions(deps: Deps, job: RenditionJob, signal?: AbortSignal): Promise<void> {
  const asset = await deps.db.selectFrom('assets').selectAll().where('id', '=', job.assetId).executeTakeFirst();
  if (!asset || asset.content_state !== 'available' || !asset.blob_key || !asset.sha256) return;
  const sourceKey = job.previewKey ?? asset.blob_key;
  const sourceType = job.previewKey ? 'image/*' : asset.content_type;
  // PDFs, office files, text, video, audio, HEIC, RAW and PSD go through their converter first
  // (renditions/media/); what it yields as a picture then takes the image path below.
  const kind = job.previewKey ? undefined : mediaKind(asset.content_type, asset.filename);
  // On local disk a picture is read where it is stored (objects are renamed into place, never
  // rewritten there): copying 3 MB through the server's event loop first took 10–260 ms of a 12 MP
  // JPEG's first thumbnail on a loaded machine. Converters, and S3, get a copy in a folder of the job's.
  // The stored file is pinned (a hard link, no copy): a purge or a new version while this job reads it
  // leaves its bytes readable until the job ends.
  const pinned = kind ? undefined : await deps.blobs.pin?.(sourceKey);
  if (pinned === null) throw new FatalJobError(`content ${sourceKey} is missing from storage`);
  const dir = pinned ? undefined : await deps.temp.mkdtemp('rend-');
  const file = pinned?.path ?? join(dir!, 'source');
  try {
    if (!pinned) {
      const stream = await deps.blobs.get(sourceKey);
      if (!stream) throw new FatalJobError(`content ${sourceKey} is missing from storage`);
      // A plain copy: the MD5 (technical metadata) is read from it after the thumbnail is out, so the
      // thumbnail does not wait for a hash of the whole source (tens of ms for 12 MP on a busy machine).
      await pipeline(stream, createWriteStream(file));
    }
    const max = deps.config.renditionMaxPixels;
    const renditions = fromJson<Record<string, StoredRendition>>(asset.renditions, {});
    let info: SourceInfo | undefined;
    let state: 'ready' | 'placeholder' | 'failed' = 'ready';
    let failure: string | undefined;
    let media: MediaResult | undefined;
    let thumbData: Buffer | null = null;
    /** The thumbnail's placeholder and hash, when the thumbnail went first (computed then). */
    let early: Awaited<ReturnType<typeof summaryOfThumbnail>> | undefined;
    const watch = kind ? watchJob(deps, asset.id, asset.sha256, signal) : undefined;
    if (kind || isImage(sourceType) || job.previewKey) {
      try {
        let input: ImageInput = file;
        if (kind) {
          media = await convertMedia({
            media: deps.config.media,
            kind,
            file,
            dir: dir!,
            contentType: asset.content_type ?? '',
            filename: asset.filename,
            box: Math.max(...RENDITION_SPECS.map((s) => s.size)),
            maxPixels: max,
            signal: watch!.signal,
          });
          if (media.visual) input = media.visual.kind === 'file' ? media.visual.path : media.visual.raster;
        } else if (sourceType === 'image/svg+xml') {
          // Bytes, not a path: librsvg then has no base location and resolves no external reference.
          input = await readFile(file);
        }
        if (!kind || media?.visual) {
          info = await inspect(input, max);
          const specs = job.previewKey ? RENDITION_SPECS.filter((s) => s.name === 'imagePreview') : RENDITION_SPECS;
          const animated = !kind && !job.previewKey && isAnimated(info);
          const ext = animated ? info.format : info.hasAlpha ? 'png' : 'jpg';
          const outType = animated ? `image/${info.format}` : info.hasAlpha ? 'image/png' : 'image/jpeg';
          const sha = job.previewKey ? createHash('sha256').update(sourceKey).digest('hex') : asset.sha256;
          const keys = specs.map((s) => renditionKey(asset.org_id, sha, s.name, ext));
          const heads = job.force || kind ? [] : await Promise.all(keys.map((k) => deps.blobs.head(k)));
          const timeout = deps.config.renditionTimeoutSeconds;
          const draw = async (subset: readonly RenditionSpec[]) =>
            animated
              ? renderAnimated(file, subset, info!, max, timeout)
              : renderInRenderProcess(
                  'rest',
                  info!.format === 'svg' ? await svgRaster(input, subset, max, timeout, signal) : input,
                  subset,
                  { hasAlpha: info!.hasAlpha },
                  max,
                  timeout,
                );
          let rendered: {
            name: string;
            size: number;
            width: number;
            height: number;
            contentType: string;
            data: Buffer | null;
          }[];
          if (heads.length === keys.length && heads.every(Boolean)) {
            rendered = specs.map((s, i) => ({
              name: s.name,
              size: heads[i]!.size,
              ...fitInside(info!.width, info!.height, s.size),
              contentType: outType,
              data: null as Buffer | null,
            }));
          } else if (thumbnailFirst(job, kind, animated, info, specs)) {
            // What a person waits for comes first: the thumbnail from a decode of its own (JPEG
            // shrink-on-load makes it a fraction of the larger ones'), stored, committed and announced
            // (asset.thumbnail.created) before the larger renditions are drawn.
            let thumb: (typeof rendered)[number];
            if (heads[0]) {
              thumb = {
                name: 'imageThumb',
                size: heads[0].size,
                ...fitInside(info.width, info.height, specs[0]!.size),
                contentType: outType,
                data: null,
              };
              early = await summaryOfThumbnail(deps, keys[0]!, null, 'first');
            } else {
              const [image] = await renderInRenderProcess(
                'first',
                input,
                specs.slice(0, 1),
                { hasAlpha: info.hasAlpha },
                max,
                timeout,
              );
              thumb = { ...image!, size: image!.data.length };
              thumbData = image!.data;
              // Stored (fsynced) while its placeholder and hash are computed (in the thumbnail's render
              // process): each took 15–70 ms on a loaded machine, one after the other before.
              [, early] = await Promise.all([
                deps.blobs.put(keys[0]!, image!.data, { contentType: image!.contentType }),
                summaryOfThumbnail(deps, keys[0]!, thumbData, 'first'),
              ]);
            }
            renditions.imageThumb = storedRendition(keys[0]!, thumb);
            await publishThumbnail(deps, asset, renditions.imageThumb, early);
            rendered = [
              { ...thumb, data: null },
              ...(await draw(specs.slice(1))).map((r) => ({ ...r, size: r.data.length })),
            ];
          } else {
            rendered = (await draw(specs)).map((r) => ({ ...r, size: r.data.length }));
          }
          for (const [i, r] of rendered.entries()) {
            const key = keys[i]!;
            if (r.name === 'imageThumb') thumbData = r.data;
            if (r.data) await deps.blobs.put(key, r.data, { contentType: r.contentType });
            renditions[r.name] = storedRendition(key, r);
          }
        }
        for (const extra of media?.extra ?? []) {
          const key = renditionKey(asset.org_id, asset.sha256, extra.name, extra.ext);
          const size = (await stat(extra.path)).size;
          await deps.blobs.put(key, createReadStream(extra.path), { contentType: extra.contentType });
          renditions[extra.name] = {
            key,
            width: extra.width,
            height: extra.height,
            contentType: extra.contentType,
            size,
            etag: `"${createHash('sha256').update(key).digest('hex').slice(0, 32)}"`,
          };
        }
        // The reference's `fpo` (for placement only): the 1000-pixel rendition under its name, no second encode.
        if (!job.previewKey && renditions.imagePreviewLarge) renditions.fpo = { ...renditions.imagePreviewLarge };
      } catch (error) {
        if (!(error instanceof RenditionError)) throw error;
        state = 'failed';
        failure = recordedError(error, 500);
      } finally {
        watch?.stop();
      }
    }
    if ((!kind && !isImage(sourceType) && !job.previewKey) || (kind && state !== 'failed' && !renditions.imageThumb)) {
      const label = kind
        ? asset.filename.includes('.')
          ? asset.filename.split('.').pop()!
          : kind
        : ((asset.content_type ?? 'file').split('/')[1] ?? 'file');
      const data = await placeholder(label);
      const key = `renditions/${asset.org_id}/placeholder/${RECIPE_VERSION}/${createHash('sha256')
        .update(kind ? `label:${label.toLowerCase()}` : (asset.content_type ?? ''))
        .digest('hex')
        .slice(0, 16)}.png`;
      await deps.blobs.put(key, data, { contentType: 'image/png' });
      renditions.imageThumb = {
        key,
        width: 200,
        height: 200,
        contentType: 'image/png',
        size: data.length,
        etag: `"${createHash('sha256').update(data).digest('hex').slice(0, 32)}"`,
        placeholder: true,
      };
      state = 'placeholder';
    }
    // Every visual asset (image, video poster, PDF page…): a placeholder to paint and a perceptual hash.
    const summary =
      !job.previewKey && state === 'ready' && renditions.imageThumb
        ? (early ?? (await summaryOfThumbnail(deps, renditions.imageThumb.key, thumbData)))
        : undefined;
    const md5 = job.previewKey ? '' : await md5OfFile(file);
    const now = deps.clock.now();
    const gone = await deps.db.transaction().execute(async (trx) => {
      // The content may have been replaced meanwhile: only the bytes this job read get their renditions.
      const current = await trx
        .selectFrom('assets')
        .select(['sha256', 'technical_metadata'])
        .where('id', '=', asset.id)
        .executeTakeFirst();
      if (!current) return true;
      if (current.sha256 !== asset.sha256) return false;
      const tech = job.previewKey
        ? fromJson<Record<string, unknown>>(current.technical_metadata, {})
        : technical(
            asset.filename,
            asset.size ?? 0,
            md5,
            asset.sha256!,
            asset.content_type ?? 'application/octet-stream',
            kind ? undefined : info,
          );
      if (media) mergeMediaTechnical(tech, media);
      if (failure) tech.renditionError = failure;
      const dims = kind ? mediaDimensions(media, info) : info;
      await trx
        .updateTable('assets')
        .set({
          renditions: toJson(state === 'failed' && !job.previewKey ? {} : renditions),
          renditions_state: job.previewKey ? 'ready' : state,
          technical_metadata: toJson(tech),
          md5: job.previewKey ? undefined : (tech.tenovos_metadata as { MD5Checksum: string }).MD5Checksum,
          ...(dims && !job.previewKey ? { width: dims.width, height: dims.height } : {}),
          updated_at: now,
          ...(job.previewKey ? {} : { placeholder: summary ? toJson(summary.placeholder) : null }),
        })
        .where('id', '=', asset.id)
        .execute();
      if (!job.previewKey) await writeVisualSummary(trx, asset.org_id, asset.id, summary?.hash, now);
      if (state !== 'failed') {
        const security = (await securityOf(trx, asset.org_id, [asset.id])).get(asset.id)!;
        const urls: Record<string, string> = {};
        for (const name of Object.keys(renditions))
          urls[SHORT_NAMES[name as RenditionName] ?? name] = renditionUrl(deps, asset.id, name);
        await publishEvent(trx, now, {
          orgId: asset.org_id,
          type: 'asset.renditions.created',
          actor: null,
          // The live reference page puts them in asset.renditions, its repository schema at the top level: both.
          data: {
            asset: {
              ...eventAsset(asset, await templateNames(trx, asset.org_id, security.templateIds)),
              renditions: urls,
            },
            renditions: urls,
          },
        });
      }
      return false;
    });
    // Purged while this job rendered: the purge may have swept the folder before these files
    // landed, so they go now unless another asset of the organization holds the same bytes.
    if (gone && !job.previewKey && !(await contentHeld(deps.db, asset.org_id, asset.sha256!)))
      await deps.blobs.deletePrefix(renditionPrefix(asset.org_id, asset.sha256!));
    if (failure) throw new FatalJobError(`renditions failed: ${failure}`);
  } finally {
    if (dir) await rm(dir, { recursive: true, force: true });
    await pinned?.release();
  }
}
