import { createHash } from 'node:crypto';
import { createWriteStream, mkdirSync, rmSync } from 'node:fs';
import { open, readFile, stat, unlink, writeFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { PreparedHit } from '../http/http1.ts';

/** One stored response (one variant of one URL). */
export interface CacheEntry {
  key: string;
  zoneId: number;
  /** Path inside the zone (without query), for URL and prefix purges. */
  path: string;
  tags: string[];
  status: number;
  headers: Record<string, string>;
  size: number;
  storedAt: number;
  ttlMs: number;
  swrMs: number;
  sieMs: number;
  alwaysRevalidate: boolean;
  initialAgeMs: number;
  etag: string | undefined;
  lastModified: string | undefined;
  /** Body in memory (hot tier), or null when only on disk. */
  body: Buffer | null;
  file: string | null;
  /** Derived representations (optimizer): format → body and headers. */
  variants: Map<string, { body: Buffer; headers: Record<string, string> }>;
  /** Set when removed: a reader holding the entry must not serve it. */
  dead: boolean;
  /** The hit answer prepared for the fast path (per zone version and CORS decision); holds the body, so dropped with it. */
  fast?: { version: number; cors: boolean; hit: PreparedHit } | undefined;
}

export interface CacheStoreOptions {
  dir: string;
  maxBytes: number;
  memoryMaxBytes: number;
}

/**
 * The edge's cache: an index in memory; bodies on local disk (size-bounded, LRU eviction) with a
 * hot tier of bodies kept in memory (its own bound, LRU). Started empty (the directory is wiped),
 * so a restarted edge can never serve something purged while it was down.
 */
export class CacheStore {
  /** key → variants (vary key → entry). Map order is the LRU order (oldest first). */
  private readonly entries = new Map<string, CacheEntry>();
  private readonly groups = new Map<string, Map<string, CacheEntry>>();
  /** Per base key: the request headers its stored responses vary on. */
  readonly varies = new Map<string, string[]>();
  private readonly hot = new Map<string, CacheEntry>();
  /** The entry last moved to the end of both `entries` and `hot` by lookup(); any other change of the orders clears it. */
  private mru: CacheEntry | null = null;
  private diskBytes = 0;
  private memoryBytes = 0;
  /**
   * The largest object held whole in memory since start, read from a cache file (here) or from an
   * origin (the edge records those): at most the memory tier's per-object bound, except a URL
   * origin's answer without a Content-Length. Shown by the control GET /health.
   */
  largestWholeRead = 0;
  private readonly opts: CacheStoreOptions;

  constructor(opts: CacheStoreOptions) {
    this.opts = opts;
    rmSync(opts.dir, { recursive: true, force: true });
    mkdirSync(opts.dir, { recursive: true });
  }

  get size(): number {
    return this.entries.size;
  }

  get bytes(): { disk: number; memory: number } {
    return { disk: this.diskBytes, memory: this.memoryBytes };
  }

  lookup(baseKey: string, variant: string): CacheEntry | undefined {
    const entry = this.groups.get(baseKey)?.get(variant);
    if (!entry) return undefined;
    // Already the most recently used in both orders: nothing to move (a hot object hit again and again).
    if (entry === this.mru) return entry;
    // LRU touch (cheap: Map delete + set).
    this.entries.delete(entry.key);
    this.entries.set(entry.key, entry);
    if (entry.body) {
      this.hot.delete(entry.key);
      this.hot.set(entry.key, entry);
    }
    this.mru = entry.body ? entry : null;
    return entry;
  }

  /**
   * The entry's bytes in memory: from the memory tier, or its file read whole — only for objects
   * within the memory tier's per-object bound (issue 23, defect 8); a bigger one is sent from its
   * file in chunks (`open`), and asking for it whole answers null.
   */
  async body(entry: CacheEntry): Promise<Buffer | null> {
    if (entry.body) return entry.body;
    if (!entry.file || entry.size > this.opts.memoryMaxBytes / 4) return null;
    try {
      const data = await readFile(entry.file);
      if (data.length > this.largestWholeRead) this.largestWholeRead = data.length;
      if (entry.dead) return null;
      this.keepHot(entry, data);
      return data;
    } catch {
      return null;
    }
  }

  /** Whether `entry` is sent from its file in chunks: too big for the memory tier, so never read whole. */
  streams(entry: CacheEntry): boolean {
    return entry.body === null && entry.file !== null && entry.size > this.opts.memoryMaxBytes / 4;
  }

  /** The entry's file opened for reading, or null when it was removed (purged or evicted) or is unreadable. */
  async open(entry: CacheEntry): Promise<FileHandle | null> {
    if (entry.dead || !entry.file) return null;
    try {
      const file = await open(entry.file, 'r');
      if (!entry.dead) return file;
      await file.close();
    } catch {
      // unlinked meanwhile
    }
    return null;
  }

  async put(
    baseKey: string,
    variant: string,
    entry: Omit<CacheEntry, 'key' | 'body' | 'file' | 'dead' | 'variants'>,
    body: Buffer,
  ): Promise<CacheEntry> {
    const key = `${baseKey}\u0000${variant}`;
    this.mru = null;
    const old = this.entries.get(key);
    if (old) this.remove(old);
    const file = join(this.opts.dir, createHash('sha1').update(key).update(String(entry.storedAt)).digest('hex'));
    const full: CacheEntry = { ...entry, key, body: null, file, dead: false, variants: new Map(), fast: undefined };
    this.entries.set(key, full);
    let group = this.groups.get(baseKey);
    if (!group) this.groups.set(baseKey, (group = new Map()));
    group.set(variant, full);
    this.keepHot(full, body);
    this.diskBytes += body.length;
    this.evictDisk();
    try {
      await writeFile(file, body);
    } catch {
      full.file = null;
    }
    if (full.dead && full.file) await unlink(full.file).catch(() => {});
    return full;
  }

  /**
   * Stores an object read from `stream` straight into its file (never in memory whole), then indexes
   * it as a disk-only entry. Throws (keeping nothing) when the stream fails or brings other than
   * `entry.size` bytes.
   */
  async putStream(
    baseKey: string,
    variant: string,
    entry: Omit<CacheEntry, 'key' | 'body' | 'file' | 'dead' | 'variants'>,
    stream: Readable,
  ): Promise<CacheEntry> {
    const key = `${baseKey}\u0000${variant}`;
    const file = join(
      this.opts.dir,
      createHash('sha1').update(key).update(String(entry.storedAt)).update('\u0000stream').digest('hex'),
    );
    try {
      await pipeline(stream, createWriteStream(file));
      const written = (await stat(file)).size;
      if (written !== entry.size) throw new Error(`origin sent ${written} bytes, not the ${entry.size} it declared`);
    } catch (error) {
      await unlink(file).catch(() => {});
      throw error;
    }
    this.mru = null;
    const old = this.entries.get(key);
    if (old) this.remove(old);
    const full: CacheEntry = { ...entry, key, body: null, file, dead: false, variants: new Map(), fast: undefined };
    this.entries.set(key, full);
    let group = this.groups.get(baseKey);
    if (!group) this.groups.set(baseKey, (group = new Map()));
    group.set(variant, full);
    this.diskBytes += entry.size;
    this.evictDisk();
    return full;
  }

  addVariant(entry: CacheEntry, name: string, body: Buffer, headers: Record<string, string>): void {
    if (entry.dead) return;
    entry.variants.set(name, { body, headers });
    this.memoryBytes += body.length;
    this.evictMemory();
  }

  private keepHot(entry: CacheEntry, body: Buffer): void {
    if (body.length > this.opts.memoryMaxBytes / 4) return;
    this.mru = null;
    if (!entry.body) {
      entry.body = body;
      this.memoryBytes += body.length;
    }
    this.hot.delete(entry.key);
    this.hot.set(entry.key, entry);
    this.evictMemory();
  }

  private evictMemory(): void {
    for (const entry of this.hot.values()) {
      if (this.memoryBytes <= this.opts.memoryMaxBytes) break;
      this.hot.delete(entry.key);
      if (this.mru === entry) this.mru = null;
      if (entry.body) this.memoryBytes -= entry.body.length;
      for (const v of entry.variants.values()) this.memoryBytes -= v.body.length;
      entry.variants.clear();
      entry.body = null;
      entry.fast = undefined;
      // Only on disk now; if it never reached the disk, it is gone.
      if (!entry.file) this.remove(entry);
    }
  }

  private evictDisk(): void {
    for (const entry of this.entries.values()) {
      if (this.diskBytes <= this.opts.maxBytes) break;
      this.remove(entry);
    }
  }

  remove(entry: CacheEntry): void {
    if (entry.dead) return;
    entry.dead = true;
    if (this.mru === entry) this.mru = null;
    this.entries.delete(entry.key);
    const base = entry.key.slice(0, entry.key.indexOf('\u0000'));
    const group = this.groups.get(base);
    if (group) {
      for (const [v, e] of group) if (e === entry) group.delete(v);
      if (group.size === 0) {
        this.groups.delete(base);
        this.varies.delete(base);
      }
    }
    this.diskBytes -= entry.size;
    if (this.hot.delete(entry.key) || entry.body) {
      if (entry.body) this.memoryBytes -= entry.body.length;
    }
    for (const v of entry.variants.values()) this.memoryBytes -= v.body.length;
    entry.body = null;
    entry.fast = undefined;
    entry.variants.clear();
    if (entry.file) void unlink(entry.file).catch(() => {});
  }

  /** Removes every entry of `zoneId` matching `predicate`; returns how many. */
  purge(zoneId: number | null, predicate: (e: CacheEntry) => boolean): number {
    let n = 0;
    for (const entry of [...this.entries.values()]) {
      if ((zoneId === null || entry.zoneId === zoneId) && predicate(entry)) {
        this.remove(entry);
        n++;
      }
    }
    return n;
  }
}
