import { createHash } from 'node:crypto';
import { buffer } from 'node:stream/consumers';
import type { Principal } from '../../../core/authz/principal.ts';
import { AppError, conflict, invalidField, notFound } from '../../../core/http/errors.ts';
import { loadSharp } from '../../../core/sharp.ts';
import type { Deps } from '../../../deps.ts';
import { loadAssetFor } from '../access.ts';
import { requireArrivedContent } from '../download/download.service.ts';
import type { Servable } from '../download/serve.ts';
import { mediaKind } from '../renditions/media/media.ts';
import { turn } from '../renditions/pages.service.ts';
import { renditionKey } from '../renditions/job/renditions.ts';
import { isImage } from '../upload/content-types.ts';
import { storedRenditions } from '../views/present.ts';
import type { AssetRow } from '../assets.repo.ts';
import { type DeliveryParams, deliveryParams, type PresetInput, presetByName } from './presets.service.ts';

/** Changes whenever the same parameters would give other bytes: part of every cache key. */
const RECIPE = 'd1';
const EXT = { jpeg: 'jpg', png: 'png', webp: 'webp', avif: 'avif' } as const;

export interface DeliveryQuery extends PresetInput {
  preset?: string;
}

/**
 * GET /v1/asset/{id}/delivery: an image rendition on request, by parameters (width, height, fit,
 * format, quality) or by a named preset, with View and Download on the asset. Made from the
 * original for images sharp reads, else from the asset's largest rendition (a PDF page, a video
 * poster…), once: the file is stored beside the renditions under a key of its parameters (a preset
 * and the same parameters share it), so later requests, any caller's, are served from storage.
 */
export async function deliver(deps: Deps, principal: Principal, id: string, query: DeliveryQuery): Promise<Servable> {
  const { asset } = await loadAssetFor(deps.db, principal, id, 'asset.deliver');
  const params = await resolveParams(deps, principal.orgId, query, 'querystring');
  return deliverAsset(deps, asset, params);
}

/** A preset's parameters, or the given ones, checked (`at` prefixes field names in errors). */
async function resolveParams(
  deps: Pick<Deps, 'db'>,
  orgId: string,
  query: DeliveryQuery,
  at: string,
): Promise<DeliveryParams> {
  if (query.preset !== undefined) {
    const others = (['width', 'height', 'fit', 'format', 'quality'] as const).filter((k) => query[k] !== undefined);
    if (others.length > 0) throw invalidField(`${at}.${others[0]}`, 'give either a preset or parameters, not both');
    const preset = await presetByName(deps.db, orgId, query.preset);
    if (!preset) throw invalidField(`${at}.preset`, `no delivery preset is named ${JSON.stringify(query.preset)}`);
    return deliveryParams({}, at, preset as DeliveryParams);
  }
  return deliveryParams(query, at);
}

const DELIVERY_KEYS = new Set(['preset', 'width', 'height', 'fit', 'format', 'quality']);

/** Does a CDN URL's query ask for a delivery rendition (any of preset, width, height, fit, format, quality)? */
export function asksForDelivery(query: URLSearchParams): boolean {
  for (const k of query.keys()) if (DELIVERY_KEYS.has(k)) return true;
  return false;
}

/**
 * For the CDN's asset-store origin (features/cdn): the same rendition on request for an asset
 * published to a zone, by a preset or parameters in the URL's query. Publishing needed View and
 * Download on the asset, and made its bytes public; its renditions on request follow. Bad
 * parameters throw the same 400s as GET /v1/asset/{id}/delivery, naming `query.<field>`.
 */
export async function deliverPublished(
  deps: Deps,
  orgId: string,
  assetId: string,
  query: URLSearchParams,
): Promise<Servable> {
  const asset = await deps.db
    .selectFrom('assets')
    .selectAll()
    .where('id', '=', assetId)
    .where('org_id', '=', orgId)
    .executeTakeFirst();
  if (!asset) throw notFound('Asset');
  const int = (k: string) => {
    const v = query.get(k);
    if (v === null) return undefined;
    if (!/^\d{1,5}$/.test(v)) throw invalidField(`query.${k}`, 'must be a whole number');
    return Number(v);
  };
  const text = (k: string) => query.get(k) ?? undefined;
  const input: DeliveryQuery = {};
  for (const [k, v] of [
    ['preset', text('preset')],
    ['width', int('width')],
    ['height', int('height')],
    ['fit', text('fit')],
    ['format', text('format')],
    ['quality', int('quality')],
  ] as const)
    if (v !== undefined) (input as Record<string, unknown>)[k] = v;
  return deliverAsset(deps, asset, await resolveParams(deps, orgId, input, 'query'));
}

/** Makes (once) and describes the rendition of `params` for a loaded asset. */
async function deliverAsset(deps: Deps, asset: AssetRow, params: DeliveryParams): Promise<Servable> {
  requireArrivedContent(asset);
  if (asset.content_state !== 'available' || !asset.blob_key || !asset.sha256) throw notFound('Content');
  // An SVG is delivered from its rendition: rasterising it again here would bypass the bounded
  // child process the renditions job draws it in.
  const fromOriginal =
    isImage(asset.content_type) &&
    asset.content_type !== 'image/svg+xml' &&
    !mediaKind(asset.content_type, asset.filename);
  const rendition = storedRenditions(asset).mezzaninePreview;
  if (!fromOriginal && !rendition)
    throw conflict(
      asset.renditions_state === 'failed'
        ? 'The asset has no picture to deliver: its renditions failed (see technicalMetadata.renditionError)'
        : asset.renditions_state === 'pending' || asset.renditions_state === 'none'
          ? 'The asset has no renditions yet (renditionsState is not ready): try again shortly'
          : 'The asset has no picture to deliver (renditionsState: placeholder)',
    );
  const sourceKey = fromOriginal ? asset.blob_key : rendition!.key;
  const digest = createHash('sha256')
    .update(JSON.stringify([RECIPE, sourceKey, params]))
    .digest('hex')
    .slice(0, 20);
  const key = renditionKey(asset.org_id, asset.sha256, `delivery-${digest}`, EXT[params.format]);
  const servable = (size: number): Servable => ({
    key,
    size,
    contentType: `image/${params.format}`,
    etag: `"${digest}"`,
    lastModified: asset.updated_at,
    cacheControl: 'private, max-age=86400',
  });
  const head = await deps.blobs.head(key);
  if (head) return servable(head.size);
  return turn(async () => {
    const again = await deps.blobs.head(key);
    if (again) return servable(again.size);
    const stream = await deps.blobs.get(sourceKey);
    if (!stream) throw notFound('Content');
    const source = await buffer(stream);
    const sharp = await loadSharp();
    let data: Buffer;
    try {
      let img = sharp(source, { limitInputPixels: deps.config.renditionMaxPixels, failOn: 'error' })
        .timeout({ seconds: deps.config.renditionTimeoutSeconds })
        .autoOrient();
      if (params.width !== null || params.height !== null)
        img = img.resize(params.width, params.height, { fit: params.fit, withoutEnlargement: true });
      img = img.toColourspace('srgb');
      data = await (params.format === 'png'
        ? img.png({ compressionLevel: 6 })
        : img.toFormat(params.format, { quality: params.quality })
      ).toBuffer();
    } catch (error) {
      throw new AppError('conflict', `The rendition could not be made: ${(error as Error).message}`);
    }
    await deps.blobs.put(key, data, { contentType: `image/${params.format}` });
    return servable(data.length);
  });
}
