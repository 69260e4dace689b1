import type { Principal } from '../../../core/authz/principal.ts';
import { conflict, invalidField } from '../../../core/http/errors.ts';
import type { Deps } from '../../../deps.ts';
import { loadAsset, visibleAmong } from '../access.ts';
import { securityOf, type AssetWithOrg } from '../assets.repo.ts';
import { dHash, type VisualHash } from '../renditions/visual-summary/visual-summary.ts';
import { placeholderOf, renditionUrls } from '../views/present.ts';

export interface SimilarQuery {
  /** An asset the caller may view: its perceptual hash is the query. */
  assetId?: string;
  /** An uploaded picture: its perceptual hash is the query. */
  image?: Buffer;
  /** The most bits (of 64) a match may differ by. */
  threshold: number;
  limit: number;
  offset: number;
}

/** Candidates checked for visibility at a time. */
const CHUNK = 250;

/**
 * Near-duplicates (POST /v1/search/similar): current, live assets of the caller's organization
 * whose perceptual hash (dHash of the thumbnail) is within `threshold` bits of the query's, nearest
 * first, only those the caller may view (the one visibility rule), the query asset itself left out.
 * Pages by offset; `nextOffset` is null on the last page.
 */
export async function findSimilar(deps: Deps, principal: Principal, query: SimilarQuery) {
  let hash: VisualHash;
  let self: string | undefined;
  if (query.assetId !== undefined) {
    const { asset } = await loadAsset(deps.db, principal, query.assetId);
    const row = await deps.db
      .selectFrom('asset_visual_hashes')
      .select(['hash_hi', 'hash_lo'])
      .where('org_id', '=', principal.orgId)
      .where('asset_id', '=', asset.id)
      .executeTakeFirst();
    if (!row)
      throw conflict(
        'The asset has no perceptual hash: its renditions are not ready, failed, or it has no picture of its own',
        'assetId',
      );
    hash = { hi: Number(row.hash_hi), lo: Number(row.hash_lo) };
    self = asset.id;
  } else {
    try {
      hash = await dHash(query.image!);
    } catch (error) {
      throw invalidField('body.file', `is not an image Tessera can read (${(error as Error).message})`);
    }
  }
  const candidates = (
    await deps.runtime.assets.similar.near(deps.db, principal.orgId, hash, query.threshold, deps.clock.now())
  ).filter((c) => c.assetId !== self);
  const wanted = query.offset + query.limit + 1;
  const found: { asset: AssetWithOrg; distance: number }[] = [];
  for (let i = 0; i < candidates.length && found.length < wanted; i += CHUNK) {
    const chunk = candidates.slice(i, i + CHUNK);
    // By primary key alone (an org_id condition lets SQLite pick the organization's index and walk
    // its every asset); the organization, recycle bin and current version are checked on the rows.
    const rows = (
      (await deps.db
        .selectFrom('assets')
        .selectAll()
        .where(
          'id',
          'in',
          chunk.map((c) => c.assetId),
        )
        .execute()) as AssetWithOrg[]
    ).filter((r) => r.org_id === principal.orgId && r.deleted_at === null && r.is_current === 1);
    const security = await securityOf(
      deps.db,
      principal.orgId,
      rows.map((r) => r.id),
    );
    const visible = new Map((await visibleAmong(deps.db, principal, rows, security)).map((r) => [r.id, r]));
    for (const c of chunk) {
      const asset = visible.get(c.assetId);
      if (asset) found.push({ asset, distance: c.distance });
    }
  }
  const page = found.slice(query.offset, query.offset + query.limit);
  return {
    hash: hex(hash),
    threshold: query.threshold,
    offset: query.offset,
    limit: query.limit,
    nextOffset: found.length > query.offset + query.limit ? query.offset + query.limit : null,
    results: page.map(({ asset, distance }) => ({
      objectId: asset.id,
      filename: asset.filename,
      contentType: asset.content_type,
      distance,
      similarity: Math.round((1 - distance / 64) * 1000) / 1000,
      renditions: renditionUrls(deps, asset),
      ...placeholderOf(asset),
    })),
  };
}

const hex = (h: VisualHash) => h.hi.toString(16).padStart(8, '0') + h.lo.toString(16).padStart(8, '0');
