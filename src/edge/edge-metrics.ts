import { Counter, Gauge } from 'prom-client';
import { scrapeAllowed, type Metrics } from '../core/metrics.ts';
import type { EdgeStats } from './stats.ts';

interface EdgeNumbers {
  totals: EdgeStats['totals'];
  cache: { objects: number; memory: number; disk: number };
}
const registered = new WeakSet<Metrics>();

/**
 * GET /metrics on an edge's control port (one per edge process, EDGE_CONTROL_PORT + index): the
 * process metrics of core/metrics.ts and the edge's own since it started — requests by cache result
 * (hit, miss, other), bytes served (and from the cache), origin fetches and bytes, and the cache's
 * size. Bearer TESSERA_METRICS_TOKEN, as on the API; 404 when it is not set.
 */
export async function edgeScrape(
  on: { metrics: Metrics; token: string } | undefined,
  authorization: string | string[] | undefined,
  read: () => EdgeNumbers,
): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const json = { 'content-type': 'application/json; charset=utf-8' };
  if (!on)
    return {
      status: 404,
      headers: json,
      body: '{"error":"not_found","message":"Metrics are off: set TESSERA_METRICS_TOKEN"}',
    };
  if (!scrapeAllowed(on.token, authorization))
    return {
      status: 401,
      headers: { ...json, 'www-authenticate': 'Bearer realm="metrics"' },
      body: '{"error":"unauthorized","message":"Authorization: Bearer <TESSERA_METRICS_TOKEN>"}',
    };
  if (!registered.has(on.metrics)) {
    registered.add(on.metrics);
    registerEdgeSeries(on.metrics, read);
  }
  const { contentType, body } = await on.metrics.render();
  return { status: 200, headers: { 'content-type': contentType, 'cache-control': 'no-store' }, body };
}

/** Series read from the edge's own tallies when scraped (the hot path only adds to plain numbers). */
function registerEdgeSeries(metrics: Metrics, read: () => EdgeNumbers): void {
  const registers = [metrics.registry];
  const counter = (name: string, help: string, pick: (t: EdgeNumbers['totals']) => number) =>
    new Counter({
      name,
      help,
      registers,
      collect() {
        this.reset();
        this.inc(pick(read().totals));
      },
    });
  new Counter({
    name: 'tessera_edge_requests_total',
    help: 'Requests served by this edge process, by cache result (hit: fresh, stale or revalidated; miss: miss, expired or bypass; other: refused and errors)',
    labelNames: ['cache'] as const,
    registers,
    collect() {
      this.reset();
      const t = read().totals;
      this.inc({ cache: 'hit' }, t.hits);
      this.inc({ cache: 'miss' }, t.misses);
      this.inc({ cache: 'other' }, t.requests - t.hits - t.misses);
    },
  });
  counter('tessera_edge_bytes_served_total', 'Body bytes sent to clients', (t) => t.bytesServed);
  counter('tessera_edge_hit_bytes_total', 'Body bytes sent from the cache', (t) => t.hitBytes);
  counter('tessera_edge_origin_fetches_total', 'Fetches from the origin', (t) => t.originFetches);
  counter('tessera_edge_origin_bytes_total', 'Bytes fetched from the origin', (t) => t.originBytes);
  new Gauge({
    name: 'tessera_edge_cache_objects',
    help: 'Objects in this edge process cache',
    registers,
    collect() {
      this.set(read().cache.objects);
    },
  });
  new Gauge({
    name: 'tessera_edge_cache_bytes',
    help: 'Bytes in this edge process cache, by tier (memory, disk)',
    labelNames: ['tier'] as const,
    registers,
    collect() {
      const { memory, disk } = read().cache;
      this.set({ tier: 'memory' }, memory);
      this.set({ tier: 'disk' }, disk);
    },
  });
}
