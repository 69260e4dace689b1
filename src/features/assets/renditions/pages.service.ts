import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Deps } from '../../../deps.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import { fromJson } from '../../../core/db/json.ts';
import { AppError, notFound } from '../../../core/http/errors.ts';
import { loadSharp } from '../../../core/sharp.ts';
import { loadAssetFor } from '../access.ts';
import type { AssetWithOrg } from '../assets.repo.ts';
import { requireArrivedContent } from '../download/download.service.ts';
import type { Servable } from '../download/serve.ts';
import { analysePdf } from './media/pdf/pdf.ts';
import { RenditionError } from './rendition-error.ts';
import { RENDITION_SPECS, renditionKey } from './job/renditions.ts';
import { exemptPrincipal, rightsGate } from '../rights/gate.ts';

/** `?size=` of a page preview: the image rendition sizes by their short names. */
export const PAGE_SIZES = {
  thumbnail: 'imageThumb',
  preview: 'imagePreview',
  large: 'imagePreviewLarge',
  mezzanine: 'mezzaninePreview',
} as const;
export type PageSize = keyof typeof PAGE_SIZES;

/** At most this many pages are rendered at once by one process; others wait their turn. */
const PARALLEL = 2;
let running = 0;
const waiting: (() => void)[] = [];

export async function turn<T>(fn: () => Promise<T>): Promise<T> {
  if (running >= PARALLEL) await new Promise<void>((resolve) => waiting.push(resolve));
  running += 1;
  try {
    return await fn();
  } finally {
    running -= 1;
    waiting.shift()?.();
  }
}

/**
 * GET /v1/asset/{id}/page/{n}: page `n` (1-based) of a PDF as a JPEG of a rendition size, rendered
 * by MuPDF on the first request and stored beside the renditions (by content hash), so later
 * requests are served from storage. View permission, like renditions.
 */
export async function pagePreview(
  deps: Deps,
  principal: Principal,
  id: string,
  page: number,
  size: PageSize,
): Promise<Servable> {
  const { asset } = await loadAssetFor(deps.db, principal, id, 'asset.view');
  // Out of rights (docs/usage-rights.md): pages above preview size are refused (a document: not
  // watermarked); signed page links are checked by the content route.
  await rightsGate(deps, asset, PAGE_SIZES[size], exemptPrincipal(principal));
  return renderPage(deps, asset, page, size);
}

/** `page-{n}-{size}`: the component name of a page preview in a signed URL (POST /v1/asset/rendition-urls). */
export const PAGE_COMPONENT = /^page-([1-9]\d{0,4})-(thumbnail|preview|large|mezzanine)$/;

/** The page count of an analysed PDF (technicalMetadata.document_metadata.pageCount), or 0. */
export function pageCountOf(asset: Pick<AssetWithOrg, 'content_type' | 'technical_metadata'>): number {
  if (asset.content_type !== 'application/pdf') return 0;
  const doc = fromJson<{ document_metadata?: { pageCount?: number } }>(asset.technical_metadata, {}).document_metadata;
  return typeof doc?.pageCount === 'number' ? doc.pageCount : 0;
}

/** Page `page` of an asset already loaded for the caller (or reached through a signed URL). */
export async function renderPage(deps: Deps, asset: AssetWithOrg, page: number, size: PageSize): Promise<Servable> {
  requireArrivedContent(asset);
  if (
    asset.content_type !== 'application/pdf' ||
    asset.content_state !== 'available' ||
    !asset.blob_key ||
    !asset.sha256
  )
    throw notFound('Page');
  const doc = fromJson<{ document_metadata?: { pageCount?: number } }>(asset.technical_metadata, {}).document_metadata;
  if (!doc?.pageCount) {
    const failed = asset.renditions_state === 'failed';
    throw new AppError(
      'conflict',
      failed
        ? 'The document could not be read (see technicalMetadata.renditionError)'
        : 'The document has not been analysed yet (renditionsState is not ready): try again shortly',
    );
  }
  if (page > doc.pageCount) throw notFound('Page');
  const spec = RENDITION_SPECS.find((s) => s.name === PAGE_SIZES[size])!;
  const key = renditionKey(asset.org_id, asset.sha256, `page-${page}-${size}`, 'jpg');
  const etag = `"${createHash('sha256').update(key).digest('hex').slice(0, 32)}"`;
  const servable = (bytes: number): Servable => ({
    key,
    size: bytes,
    contentType: 'image/jpeg',
    etag,
    lastModified: asset.updated_at,
    cacheControl: 'private, max-age=86400',
  });
  const head = await deps.blobs.head(key);
  if (head) return servable(head.size);
  return turn(async () => {
    const dir = await deps.temp.mkdtemp('rend-');
    try {
      const stream = await deps.blobs.get(asset.blob_key!);
      if (!stream) throw notFound('Content');
      await pipeline(stream, createWriteStream(join(dir, 'source.pdf')));
      let jpeg: Buffer;
      try {
        const pdf = await analysePdf(deps.config.media, join(dir, 'source.pdf'), {
          page: page - 1,
          box: spec.size,
          text: false,
        });
        if (!pdf.raster) throw notFound('Page');
        const sharp = await loadSharp();
        jpeg = await sharp(pdf.raster.data, {
          raw: { width: pdf.raster.width, height: pdf.raster.height, channels: pdf.raster.channels },
        })
          .jpeg({ quality: 80 })
          .toBuffer();
      } catch (error) {
        if (error instanceof RenditionError)
          throw new AppError('conflict', `The page could not be rendered: ${error.message}`);
        throw error;
      }
      await deps.blobs.put(key, jpeg, { contentType: 'image/jpeg' });
      return servable(jpeg.length);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
}
