import type { Permission } from '../../core/authz/catalog.ts';
import { permitted } from '../../core/authz/permissions.ts';
import type { Deps } from '../../deps.ts';
import type { Principal } from '../../core/authz/principal.ts';
import type { Db } from '../../core/db/connect.ts';
import { AppError } from '../../core/http/errors.ts';
import type { BlobStore } from '../../core/storage/index.ts';
import { callerPermissions, securityOf } from '../assets/index.ts';
import type { AssetOrigin, OriginResponse } from './contract.ts';

/**
 * Publishing assets to a zone makes them public at the edge, so the caller must see each asset
 * (404 naming it otherwise, as for a missing one) and hold Download on it (403).
 * Returns the assets' objectIds (a fileId is resolved to its version's objectId).
 */
export async function checkPublishable(deps: Deps, principal: Principal, assetIds: string[]): Promise<string[]> {
  const rows = await deps.db.selectFrom('assets').select(['id', 'file_id'])
    .where('org_id', '=', principal.orgId)
    .where((eb) => eb.or([eb('id', 'in', assetIds), eb('file_id', 'in', assetIds)])).execute();
  const byAnyId = new Map<string, string>();
  for (const row of rows) {
    byAnyId.set(row.id, row.id);
    byAnyId.set(row.file_id, row.id);
  }
  const security = await securityOf(deps.db, principal.orgId, [...new Set(byAnyId.values())]);
  const out: string[] = [];
  for (const [i, given] of assetIds.entries()) {
    const id = byAnyId.get(given);
    const permissions = id ? callerPermissions(principal, security.get(id)!) : new Set<string>();
    if (!id || !permissions.has('view')) throw new AppError('not_found', `Asset ${given} not found`, { details: [{ field: `body.assets[${i}]`, message: 'not found' }] });
    if (!permitted(permissions as Set<Permission>, 'cdn.publish')) throw new AppError('forbidden', `Missing permission Download on asset ${given}`, { details: [{ field: `body.assets[${i}]`, message: 'Download permission needed to publish' }] });
    out.push(id);
  }
  return [...new Set(out)];
}

/**
 * The edge's origin for asset-store zones: `/<objectId>` or `/<objectId>/<any file name>`.
 * Only assets published to the zone, with stored content and not in the recycle bin, are served;
 * anything else is a 404 exactly like a missing asset.
 */
export function assetOriginFor(deps: { db: Db; blobs: BlobStore }): AssetOrigin {
  const notFound = (started: number): OriginResponse => ({ status: 404, headers: { 'content-type': 'application/json', 'cache-control': 'max-age=10' }, body: Buffer.from('{"message":"Asset not found"}'), ms: performance.now() - started });
  return {
    async fetch(zone, path, headers) {
      const started = performance.now();
      const m = /^\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(\/[^/]*)?$/i.exec(path);
      if (!m) return notFound(started);
      const assetId = m[1]!.toLowerCase();
      const row = await deps.db.selectFrom('cdn_published_assets as p')
        .innerJoin('assets as a', (j) => j.onRef('a.id', '=', 'p.asset_id').onRef('a.org_id', '=', 'p.org_id'))
        .select(['a.blob_key', 'a.content_type', 'a.sha256', 'a.size', 'a.updated_at', 'a.filename', 'a.content_state', 'a.deleted_at'])
        .where('p.zone_id', '=', zone.id).where('p.asset_id', '=', assetId).where('p.org_id', '=', zone.orgId)
        .executeTakeFirst();
      if (!row || row.content_state !== 'available' || row.deleted_at !== null || !row.blob_key) return notFound(started);
      const etag = `"${row.sha256 ?? row.updated_at}"`;
      const base: Record<string, string> = {
        'content-type': row.content_type ?? 'application/octet-stream',
        etag,
        'last-modified': new Date(row.updated_at).toUTCString(),
        // Short and must-revalidate: a deleted or replaced asset leaves every edge within a minute
        // (revalidation is one indexed lookup and a 304); unpublish and purges act at once.
        'cache-control': 'public, max-age=60, must-revalidate',
        'cdn-tag': `asset-${assetId}`,
      };
      if (headers['if-none-match'] === etag) return { status: 304, headers: base, body: Buffer.alloc(0), ms: performance.now() - started };
      const stream = await deps.blobs.get(row.blob_key);
      if (!stream) return notFound(started);
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks);
      return { status: 200, headers: { ...base, 'content-length': String(body.length) }, body, ms: performance.now() - started };
    },
  };
}
