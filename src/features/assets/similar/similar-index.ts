import type { DbOrTrx } from '../../../core/db/connect.ts';
import { popcount } from '../renditions/visual-summary/visual-summary.ts';

/**
 * The perceptual hashes of one organization in memory (asset_visual_hashes, issue 25 item 5): a
 * scan of 100,000 hashes is about a millisecond, a read of them from the database is not. Each
 * search first reads the rows changed since the newest one held, less OVERLAP_MS (a row stamped
 * just before the newest but committed after this process read is still caught); the whole set is
 * read again every FULL_RELOAD_MS, dropping purged assets (which the visibility check drops
 * meanwhile anyway).
 */
interface OrgHashes {
  ids: string[];
  hi: Uint32Array;
  lo: Uint32Array;
  size: number;
  byId: Map<string, number>;
  newest: number;
  loadedAt: number;
}

const FULL_RELOAD_MS = 5 * 60_000;
const OVERLAP_MS = 5_000;
/** Organizations kept; the least recently searched one is dropped past it. */
const MAX_ORGS = 64;

export interface SimilarCandidate {
  assetId: string;
  distance: number;
}

export interface SimilarIndex {
  /** Every asset of the organization whose hash is within `threshold` bits of `hash`, nearest first (then by id). */
  near(
    db: DbOrTrx,
    orgId: string,
    hash: { hi: number; lo: number },
    threshold: number,
    now: number,
  ): Promise<SimilarCandidate[]>;
}

export function createSimilarIndex(): SimilarIndex {
  const orgs = new Map<string, OrgHashes>();
  const pending = new Map<string, Promise<OrgHashes>>();

  function put(set: OrgHashes, id: string, hi: number, lo: number): void {
    const at = set.byId.get(id);
    if (at !== undefined) {
      set.hi[at] = hi;
      set.lo[at] = lo;
      return;
    }
    if (set.size === set.hi.length) {
      const grow = (old: Uint32Array) => {
        const next = new Uint32Array(Math.max(1024, old.length * 2));
        next.set(old);
        return next;
      };
      set.hi = grow(set.hi);
      set.lo = grow(set.lo);
    }
    set.hi[set.size] = hi;
    set.lo[set.size] = lo;
    set.ids[set.size] = id;
    set.byId.set(id, set.size);
    set.size += 1;
  }

  async function refresh(db: DbOrTrx, orgId: string, now: number): Promise<OrgHashes> {
    let set = orgs.get(orgId);
    if (!set || now - set.loadedAt > FULL_RELOAD_MS)
      set = {
        ids: [],
        hi: new Uint32Array(0),
        lo: new Uint32Array(0),
        size: 0,
        byId: new Map(),
        newest: Number.MIN_SAFE_INTEGER / 2,
        loadedAt: now,
      };
    const rows = await db
      .selectFrom('asset_visual_hashes')
      .select(['asset_id', 'hash_hi', 'hash_lo', 'updated_at'])
      .where('org_id', '=', orgId)
      .where('updated_at', '>', set.newest - OVERLAP_MS)
      .execute();
    for (const row of rows) {
      put(set, row.asset_id, Number(row.hash_hi) >>> 0, Number(row.hash_lo) >>> 0);
      if (Number(row.updated_at) > set.newest) set.newest = Number(row.updated_at);
    }
    orgs.delete(orgId);
    orgs.set(orgId, set);
    if (orgs.size > MAX_ORGS) orgs.delete(orgs.keys().next().value!);
    return set;
  }

  return {
    async near(db, orgId, hash, threshold, now) {
      // One refresh at a time per organization; searches arriving meanwhile share it.
      let loading = pending.get(orgId);
      if (!loading) {
        loading = refresh(db, orgId, now).finally(() => pending.delete(orgId));
        pending.set(orgId, loading);
      }
      const set = await loading;
      const out: SimilarCandidate[] = [];
      const qhi = hash.hi >>> 0;
      const qlo = hash.lo >>> 0;
      const { hi, lo } = set;
      for (let i = 0; i < set.size; i++) {
        const distance = popcount((qhi ^ hi[i]!) >>> 0) + popcount((qlo ^ lo[i]!) >>> 0);
        if (distance <= threshold) out.push({ assetId: set.ids[i]!, distance });
      }
      return out.sort(
        (a, b) => a.distance - b.distance || (a.assetId < b.assetId ? -1 : a.assetId > b.assetId ? 1 : 0),
      );
    },
  };
}
