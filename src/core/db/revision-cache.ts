import type { Clock } from '../clock.ts';
import { revisionFeed, type RevisionFeed } from './revision.ts';

/** What a loader returns: the value and until when (epoch ms, by the injected clock) it may be served. */
export interface Loaded<V> {
  value: V;
  validUntil: number;
}

interface Entry<V> {
  value: V;
  validUntil: number;
  generation: number;
}

export interface RevisionCacheStats {
  hits: number;
  misses: number;
  size: number;
}

/**
 * A bounded in-process cache of values derived only from identity tables (see core/db/revision.ts):
 * an entry is served only while the identity generation it was loaded at is still current and its
 * own deadline (token or key expiry) has not passed. A load that raced with a change is returned
 * to its caller but not kept. Concurrent misses on one key share one load.
 */
export class RevisionCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly loading = new Map<string, { generation: number; promise: Promise<Loaded<V> | null> }>();
  private readonly feed: RevisionFeed;
  private readonly clock: Clock;
  private readonly max: number;
  readonly stats = { hits: 0, misses: 0 };

  constructor(feed: RevisionFeed, clock: Clock, max = 10_000) {
    this.feed = feed;
    this.clock = clock;
    this.max = max;
  }

  /** The cached value, or the loader's (null: nothing to cache, e.g. a bad credential). Loader errors propagate. */
  async get(key: string, load: (key: string) => Promise<Loaded<V> | null>): Promise<V | null> {
    const generation = this.feed.generation;
    const entry = this.entries.get(key);
    if (entry !== undefined) {
      if (entry.generation === generation && this.clock.now() < entry.validUntil) {
        this.stats.hits += 1;
        return entry.value;
      }
      this.entries.delete(key);
    }
    this.stats.misses += 1;
    let pending = this.loading.get(key);
    if (pending === undefined || pending.generation !== generation) {
      pending = { generation, promise: load(key) };
      const mine = pending;
      this.loading.set(key, mine);
      void mine.promise.then((loaded) => {
        if (this.loading.get(key) === mine) this.loading.delete(key);
        // Kept only if nothing identity-related changed while it loaded.
        if (loaded && this.feed.generation === generation) this.remember(key, { ...loaded, generation });
      }, () => {
        if (this.loading.get(key) === mine) this.loading.delete(key);
      });
    }
    const loaded = await pending.promise;
    return loaded ? loaded.value : null;
  }

  private remember(key: string, entry: Entry<V>): void {
    if (this.entries.size >= this.max) {
      // Oldest first; stale entries go when met, so the bound holds without a sweep.
      this.entries.delete(this.entries.keys().next().value!);
    }
    this.entries.set(key, entry);
  }

  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
  }
}

const caches = new WeakMap<object, Map<string, RevisionCache<unknown>>>();

/**
 * The cache named `name` (e.g. 'principal:token') of one Deps-like owner: its database handle
 * (made by connectDb) supplies the revision feed, its clock the deadlines.
 */
export function revisionCache<V>(owner: { readonly db: object; readonly clock: Clock }, name: string, max?: number): RevisionCache<V> {
  let byName = caches.get(owner);
  if (!byName) {
    byName = new Map();
    caches.set(owner, byName);
  }
  let cache = byName.get(name) as RevisionCache<V> | undefined;
  if (!cache) {
    cache = new RevisionCache<V>(revisionFeed(owner.db), owner.clock, max);
    byName.set(name, cache as RevisionCache<unknown>);
  }
  return cache;
}
