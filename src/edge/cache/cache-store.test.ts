import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { CacheStore } from './cache-store.ts';

const meta = (path: string, size: number) => ({
  zoneId: 1,
  path,
  tags: [],
  status: 200,
  headers: {},
  size,
  storedAt: Date.now(),
  ttlMs: 60_000,
  swrMs: 0,
  sieMs: 0,
  alwaysRevalidate: false,
  initialAgeMs: 0,
  etag: undefined,
  lastModified: undefined,
});

it('evicts least recently used objects beyond the disk bound, keeps bodies on disk past the memory bound', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'edge-cache-'));
  try {
    const store = new CacheStore({ dir, maxBytes: 3000, memoryMaxBytes: 4000 });
    for (const p of ['/a', '/b', '/c']) await store.put(p, '', meta(p, 1000), Buffer.alloc(1000, p.charCodeAt(1)));
    assert.ok(store.lookup('/a', '')); // touch /a: /b is now the oldest
    await store.put('/d', '', meta('/d', 1000), Buffer.alloc(1000, 100));
    assert.equal(store.lookup('/b', ''), undefined);
    assert.ok(store.lookup('/a', ''));
    assert.ok(store.lookup('/c', ''));
    assert.equal(store.size, 3);
    // The evicted file is unlinked in the background: wait for it (bounded) before counting.
    for (let i = 0; i < 500 && readdirSync(dir).length > 3; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(readdirSync(dir).length, 3);
    assert.equal(store.bytes.disk, 3000);

    // Objects above a quarter of the memory bound are served from disk.
    const small = new CacheStore({ dir: join(dir, 'small'), maxBytes: 100_000, memoryMaxBytes: 1000 });
    const e = await small.put('/big', '', meta('/big', 2000), Buffer.alloc(2000, 1));
    assert.equal(e.body, null);
    // Never read whole (issue 23, defect 8): such an object is sent from its file in chunks.
    assert.equal(await small.body(e), null);
    assert.ok(small.streams(e));
    const file = await small.open(e);
    assert.ok(file);
    assert.equal((await file.stat()).size, 2000);
    await file.close();
    assert.equal(small.largestWholeRead, 0);
    assert.equal(small.bytes.memory, 0);
    assert.equal(
      small.purge(1, (x) => x.path === '/big'),
      1,
    );
    assert.equal(await small.open(e), null);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

it('a hit on the most recently used object moves nothing, yet eviction stays exactly least recently used', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'edge-cache-'));
  try {
    // /x (1500 bytes) is above a quarter of the memory bound: on disk only.
    const store = new CacheStore({ dir, maxBytes: 3000, memoryMaxBytes: 4000 });
    await store.put('/a', '', meta('/a', 1000), Buffer.alloc(1000, 97));
    await store.put('/x', '', meta('/x', 1500), Buffer.alloc(1500, 120));
    assert.ok(store.lookup('/a', '')!.body); // order x, a
    assert.ok(store.lookup('/a', '')); // already the most recent: nothing moves
    assert.equal(store.lookup('/x', '')!.body, null); // order a, x
    assert.ok(store.lookup('/a', '')); // must move again: order x, a
    await store.put('/d', '', meta('/d', 1000), Buffer.alloc(1000, 100)); // 3500 > 3000: the oldest goes
    assert.equal(store.lookup('/x', ''), undefined);
    assert.ok(store.lookup('/a', ''));
    assert.ok(store.lookup('/d', ''));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
