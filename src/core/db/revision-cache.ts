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
  weight: number;
}

export interface RevisionCacheOptions<V> {
  /**
   * Which revision the values derive from: 'identity' (principals, permission decisions) or
   * 'content' (asset views: stale when either the content or the identity revision moves).
   */
  revision?: 'identity' | 'content';
  /** A second bound, for values of very different sizes: entries are dropped (oldest first) until the weights fit. */
  maxWeight?: number;
  weigh?: (value: V) => number;
}

export interface RevisionCacheStats {
  hits: number;
  misses: number;
  size: number;
}

/**
 * A bounded in-process cache of values derived only from identity tables (see core/db/revision.ts),
 * or, with `revision: 'content'`, from identity and content tables (asset views):
 * an entry is served only while the generation it was loaded at is still current and its
 * own deadline (token or key expiry) has not passed. A load that raced with a change is returned
 * to its caller but not kept. Concurrent misses on one key share one load.
 */
export class RevisionCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly loading = new Map<string, { generation: number; promise: Promise<Loaded<V> | null> }>();
  private readonly feed: RevisionFeed;
  private readonly clock: Clock;
  private readonly max: number;
  private readonly maxWeight: number;
  private readonly weigh: ((value: V) => number) | undefined;
  private readonly content: boolean;
  private weight = 0;
  readonly stats = { hits: 0, misses: 0 };

  constructor(feed: RevisionFeed, clock: Clock, max = 10_000, options: RevisionCacheOptions<V> = {}) {
    this.feed = feed;
    this.clock = clock;
    this.max = max;
    this.content = options.revision === 'content';
    this.maxWeight = options.maxWeight ?? Infinity;
    this.weigh = options.weigh;
  }

  private get generation(): number {
    return this.content ? this.feed.contentGeneration : this.feed.generation;
  }

  /**
   * The cached value if there is a current one, else undefined (then call `get`). Synchronous, so a
   * hot path that hits needs no promise; the same checks as `get`.
   */
  peek(key: string): V | undefined {
    // Fails closed: nothing is served (or loaded) while the database cannot confirm it is current.
    this.feed.assertFresh();
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.generation === this.generation && this.clock.now() < entry.validUntil) {
      this.stats.hits += 1;
      return entry.value;
    }
    this.drop(key, entry);
    return undefined;
  }

  /** The cached value, or the loader's (null: nothing to cache, e.g. a bad credential). Loader errors propagate. */
  async get(key: string, load: (key: string) => Promise<Loaded<V> | null>): Promise<V | null> {
    const cached = this.peek(key);
    if (cached !== undefined) return cached;
    const generation = this.generation;
    this.stats.misses += 1;
    let pending = this.loading.get(key);
    if (pending === undefined || pending.generation !== generation) {
      pending = { generation, promise: load(key) };
      const mine = pending;
      this.loading.set(key, mine);
      void mine.promise.then(
        (loaded) => {
          if (this.loading.get(key) === mine) this.loading.delete(key);
          // Kept only if nothing it is derived from changed while it loaded.
          if (loaded && this.generation === generation)
            this.remember(key, { ...loaded, generation, weight: this.weigh?.(loaded.value) ?? 0 });
        },
        () => {
          if (this.loading.get(key) === mine) this.loading.delete(key);
        },
      );
    }
    const loaded = await pending.promise;
    return loaded ? loaded.value : null;
  }

  private remember(key: string, entry: Entry<V>): void {
    if (entry.weight > this.maxWeight) return;
    const previous = this.entries.get(key);
    if (previous !== undefined) this.drop(key, previous);
    // Oldest first; stale entries go when met, so the bounds hold without a sweep.
    while (this.entries.size > 0 && (this.entries.size >= this.max || this.weight + entry.weight > this.maxWeight)) {
      const [oldestKey, oldest] = this.entries.entries().next().value!;
      this.drop(oldestKey, oldest);
    }
    this.entries.set(key, entry);
    this.weight += entry.weight;
  }

  private drop(key: string, entry: Entry<V>): void {
    this.entries.delete(key);
    this.weight -= entry.weight;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The sum of the entries' weights (0 without `weigh`). */
  get totalWeight(): number {
    return this.weight;
  }

  clear(): void {
    this.entries.clear();
    this.weight = 0;
  }
}

/**
 * A revision cache of one Deps-like owner: its database handle (made by connectDb) supplies the
 * revision feed, its clock the deadlines. Built once per process by the runtime (src/runtime.ts).
 */
export function createRevisionCache<V>(
  owner: { readonly db: object; readonly clock: Clock },
  max?: number,
  options?: RevisionCacheOptions<V>,
): RevisionCache<V> {
  return new RevisionCache<V>(revisionFeed(owner.db), owner.clock, max, options);
}
