import type { Permission } from '../../../core/authz/catalog.ts';
import { permitted } from '../../../core/authz/permissions.ts';
import type { Deps } from '../../../deps.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import type { Db } from '../../../core/db/connect.ts';
import { AppError } from '../../../core/http/errors.ts';
import type { BlobStore } from '../../../core/storage/index.ts';
import {
  asksForDelivery,
  deliverPublished,
  loadAsset,
  objectIdsByAnyId,
  refusalOutOfRights,
  servedContentOf,
} from '../../assets/index.ts';
import type { Servable } from '../../assets/index.ts';
import type { AssetOrigin, OriginResponse } from '../edge-contract/contract.ts';

/**
 * Publishing assets to a zone makes them public at the edge, so the caller must see each asset
 * (404 naming it otherwise, as for a missing one) and hold Download on it (403).
 * Returns the assets' objectIds (a fileId is resolved to its version's objectId).
 */
export async function checkPublishable(deps: Deps, principal: Principal, assetIds: string[]): Promise<string[]> {
  const byAnyId = await objectIdsByAnyId(deps.db, principal.orgId, assetIds);
  const out: string[] = [];
  for (const [i, given] of assetIds.entries()) {
    const id = byAnyId.get(given);
    // The one visibility rule (View and an open metadata template), as every asset read.
    const loaded = id
      ? await loadAsset(deps.db, principal, id).catch((error: unknown) => {
          if (error instanceof AppError && error.code === 'not_found') return undefined;
          throw error;
        })
      : undefined;
    if (!id || !loaded)
      throw new AppError('not_found', `Asset ${given} not found`, {
        details: [{ field: `body.assets[${i}]`, message: 'not found' }],
      });
    if (!permitted(loaded.permissions as Set<Permission>, 'cdn.publish'))
      throw new AppError('forbidden', `Missing permission Download on asset ${given}`, {
        details: [{ field: `body.assets[${i}]`, message: 'Download permission needed to publish' }],
      });
    out.push(id);
  }
  return [...new Set(out)];
}

/**
 * The edge's origin for asset-store zones: `/<objectId>` or `/<objectId>/<any file name>`.
 * Only assets published to the zone, with stored content and not in the recycle bin, are served;
 * anything else is a 404 exactly like a missing asset.
 */
export function assetOriginFor(deps: {
  db: Db;
  blobs: BlobStore;
  clock?: { now(): number };
  /**
   * Image renditions on request (`?preset=<name>` or `?width=&height=&fit=&format=&quality=`):
   * features/assets' deliverPublished, wired by the edge program. Without it such a query is a 404.
   */
  delivery?: (orgId: string, assetId: string, query: URLSearchParams) => Promise<Servable>;
}): AssetOrigin {
  const notFound = (started: number): OriginResponse => ({
    status: 404,
    headers: { 'content-type': 'application/json', 'cache-control': 'max-age=10' },
    body: Buffer.from('{"message":"Asset not found"}'),
    ms: performance.now() - started,
  });
  return {
    async fetch(zone, path, headers, options) {
      const started = performance.now();
      const m = /^\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(\/[^/]*)?$/i.exec(path);
      if (!m) return notFound(started);
      const assetId = m[1]!.toLowerCase();
      const published = await deps.db
        .selectFrom('cdn_published_assets')
        .select('asset_id')
        .where('zone_id', '=', zone.id)
        .where('asset_id', '=', assetId)
        .where('org_id', '=', zone.orgId)
        .executeTakeFirst();
      const row = published ? await servedContentOf(deps.db, zone.orgId, assetId) : undefined;
      if (!row || row.content_state !== 'available' || row.deleted_at !== null || !row.blob_key)
        return notFound(started);
      // Out of rights (docs/usage-rights.md): checked on every fetch and revalidation, before any 304,
      // and never cached, so a renewed right serves again at the next request.
      const refusal = await refusalOutOfRights(deps.db, zone.orgId, row, deps.clock?.now() ?? Date.now());
      if (refusal)
        return {
          status: refusal.status,
          headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
          body: Buffer.from(JSON.stringify({ status: 'error', code: refusal.code, message: refusal.message })),
          ms: performance.now() - started,
        };
      // A delivery preset or parameters: the rendition on request instead of the original.
      const query = new URLSearchParams(options?.query ?? '');
      let served: Servable | undefined;
      if (asksForDelivery(query)) {
        if (!deps.delivery) return notFound(started);
        try {
          served = await deps.delivery(zone.orgId, assetId, query);
        } catch (error) {
          if (!(error instanceof AppError) || error.status >= 500) throw error;
          return {
            status: error.status,
            headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
            body: Buffer.from(
              JSON.stringify({
                status: 'error',
                code: error.code,
                message: error.message,
                ...(error.details ? { details: error.details } : {}),
              }),
            ),
            ms: performance.now() - started,
          };
        }
      }
      const blobKey = served?.key ?? row.blob_key;
      const etag = served ? served.etag : `"${row.sha256 ?? row.updated_at}"`;
      const base: Record<string, string> = {
        'content-type': served?.contentType ?? row.content_type ?? 'application/octet-stream',
        etag,
        'last-modified': new Date(row.updated_at).toUTCString(),
        // Short and must-revalidate: a deleted or replaced asset leaves every edge within a minute
        // (revalidation is one indexed lookup and a 304); unpublish and purges act at once.
        'cache-control': 'public, max-age=60, must-revalidate',
        'cdn-tag': `asset-${assetId}`,
      };
      if (headers['if-none-match'] === etag)
        return { status: 304, headers: base, body: Buffer.alloc(0), ms: performance.now() - started };
      // Never read a big object whole (issue 23, defect 8): the edge streams it to disk or the client.
      const size = (await deps.blobs.head(blobKey))?.size;
      const stream = size === undefined ? null : await deps.blobs.get(blobKey);
      if (!stream || size === undefined) return notFound(started);
      if (size > (options?.inlineMaxBytes ?? 1024 * 1024)) {
        return {
          status: 200,
          headers: { ...base, 'content-length': String(size) },
          body: Buffer.alloc(0),
          stream,
          size,
          ms: performance.now() - started,
        };
      }
      const chunks: Buffer[] = [];
      let read = 0;
      for await (const chunk of stream) {
        read += (chunk as Buffer).length;
        chunks.push(chunk as Buffer);
      }
      const body = Buffer.concat(chunks, read);
      return {
        status: 200,
        headers: { ...base, 'content-length': String(body.length) },
        body,
        ms: performance.now() - started,
      };
    },
  };
}

/** The asset-store origin with renditions on request (presets and parameters in CDN URLs), as the edge program runs it. */
export function deliveringAssetOrigin(deps: Deps): AssetOrigin {
  return assetOriginFor({
    db: deps.db,
    blobs: deps.blobs,
    clock: deps.clock,
    delivery: (orgId, assetId, query) => deliverPublished(deps, orgId, assetId, query),
  });
}
