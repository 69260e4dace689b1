import { buffer } from 'node:stream/consumers';
import type { DbOrTrx } from '../../../../core/db/connect.ts';
import type { Deps } from '../../../../deps.ts';
import { type Lane, summaryInRenderProcess } from '../render/render-process.ts';
import type { VisualHash, VisualSummary } from './visual-summary.ts';

/**
 * The placeholder and perceptual hash of an asset from its thumbnail rendition: the bytes just
 * rendered, or the stored file when the rendition was reused. A thumbnail that cannot be read
 * leaves the asset without them (the renditions themselves are fine). Computed in the render
 * process's `lane` (sharp's work off the server's threads, which its uploads' writes and fsyncs need).
 */
export async function summaryOfThumbnail(
  deps: Deps,
  key: string,
  rendered: Buffer | null,
  lane: Lane = 'rest',
): Promise<VisualSummary | undefined> {
  try {
    let data = rendered;
    if (!data) {
      const stream = await deps.blobs.get(key);
      if (!stream) return undefined;
      data = await buffer(stream);
    }
    return await summaryInRenderProcess(lane, data);
  } catch (error) {
    deps.log.warn({ err: error, key }, 'thumbnail placeholder could not be computed');
    return undefined;
  }
}

/** Records (or removes, with no hash) the asset's perceptual hash for near-duplicate search. */
export async function writeVisualSummary(
  trx: DbOrTrx,
  orgId: string,
  assetId: string,
  hash: VisualHash | undefined,
  now: number,
): Promise<void> {
  await trx.deleteFrom('asset_visual_hashes').where('asset_id', '=', assetId).execute();
  if (hash)
    await trx
      .insertInto('asset_visual_hashes')
      .values({ asset_id: assetId, org_id: orgId, hash_hi: hash.hi, hash_lo: hash.lo, updated_at: now })
      .execute();
}
