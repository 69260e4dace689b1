import type { Deps } from '../../deps.ts';
import { requireAction } from '../../core/authz/permissions.ts';
import type { Principal } from '../../core/authz/principal.ts';
import { invalidField, notFound } from '../../core/http/errors.ts';
import { findZone } from './cdn.repo.ts';
import type { Stats } from './cdn.schemas.ts';
import { pushToEdges } from './edge-contract/control.ts';

const HOUR = 3_600_000;
const ratio = (a: number, b: number) => (b > 0 ? a / b : 0);

/** Statistics of one zone between two instants (whole UTC hours), after every edge has flushed its counters. */
export async function zoneStats(
  deps: Deps,
  principal: Principal,
  id: number,
  query: { dateFrom?: string; dateTo?: string },
): Promise<Stats> {
  requireAction(principal, 'cdn.manage');
  const zone = await findZone(deps.db, principal.orgId, id);
  if (!zone) throw notFound('Pull zone');
  const now = deps.clock.now();
  const to = query.dateTo ? Date.parse(query.dateTo) : now;
  const from = query.dateFrom ? Date.parse(query.dateFrom) : to - 30 * 24 * HOUR;
  if (Number.isNaN(to)) throw invalidField('query.dateTo', 'is not a date-time');
  if (Number.isNaN(from)) throw invalidField('query.dateFrom', 'is not a date-time');
  if (from > to) throw invalidField('query.dateFrom', 'must not be after dateTo');
  await pushToEdges(deps.db, deps.keys, now, { flushStats: true });
  const fromHour = Math.floor(from / HOUR) * HOUR;
  const rows = await deps.db
    .selectFrom('cdn_stats_hourly')
    .selectAll()
    .where('zone_id', '=', id)
    .where('hour', '>=', fromHour)
    .where('hour', '<=', to)
    .orderBy('hour')
    .execute();
  const geo = await deps.db
    .selectFrom('cdn_stats_geo')
    .select(['country', 'requests', 'bytes'])
    .where('zone_id', '=', id)
    .where('hour', '>=', fromHour)
    .where('hour', '<=', to)
    .execute();
  const n = (v: unknown) => Number(v);
  const sum = (k: keyof (typeof rows)[number]) => rows.reduce((acc, r) => acc + n(r[k]), 0);
  const served = sum('bytes_served');
  const origin = sum('bytes_origin');
  const requests = sum('requests');
  const fetches = sum('origin_fetches');
  const geoBytes: Record<string, number> = {};
  const geoRequests: Record<string, number> = {};
  for (const g of geo) {
    geoBytes[g.country] = (geoBytes[g.country] ?? 0) + n(g.bytes);
    geoRequests[g.country] = (geoRequests[g.country] ?? 0) + n(g.requests);
  }
  return {
    totalBandwidthUsed: served,
    totalOriginTraffic: origin,
    totalRequestsServed: requests,
    cacheHitRate: ratio(sum('hits'), requests),
    byteHitRate: Math.max(0, ratio(served - origin, served)),
    totalHits: sum('hits'),
    totalMisses: sum('misses'),
    originFetches: fetches,
    averageOriginResponseTime: ratio(sum('origin_ms'), fetches),
    status2xx: sum('status_2xx'),
    status3xx: sum('status_3xx'),
    status4xx: sum('status_4xx'),
    status5xx: sum('status_5xx'),
    hourly: rows.map((r) => ({
      hour: new Date(n(r.hour)).toISOString(),
      requests: n(r.requests),
      bytesServed: n(r.bytes_served),
      bytesFromOrigin: n(r.bytes_origin),
      hits: n(r.hits),
      misses: n(r.misses),
      cacheHitRate: ratio(n(r.hits), n(r.requests)),
      byteHitRate: Math.max(0, ratio(n(r.bytes_served) - n(r.bytes_origin), n(r.bytes_served))),
      originFetches: n(r.origin_fetches),
      averageOriginResponseTime: ratio(n(r.origin_ms), n(r.origin_fetches)),
      status2xx: n(r.status_2xx),
      status3xx: n(r.status_3xx),
      status4xx: n(r.status_4xx),
      status5xx: n(r.status_5xx),
    })),
    geoTrafficDistribution: geoBytes,
    geoRequestDistribution: geoRequests,
  };
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A small self-contained HTML dashboard: totals, an hourly bar chart (inline SVG) and the country table. */
export function statsDashboard(zoneName: string, stats: Stats): string {
  const max = Math.max(1, ...stats.hourly.map((h) => h.requests));
  const w = Math.max(1, stats.hourly.length);
  const bars = stats.hourly
    .map((h, i) => {
      const total = (h.requests / max) * 180;
      const hits = (h.hits / max) * 180;
      const x = (i * 720) / w;
      const bw = Math.max(1, 720 / w - 2);
      return (
        `<rect x="${x}" y="${200 - total}" width="${bw}" height="${total}" fill="#f0a"><title>${esc(h.hour)}: ${h.requests} requests</title></rect>` +
        `<rect x="${x}" y="${200 - hits}" width="${bw}" height="${hits}" fill="#0a6"><title>${esc(h.hour)}: ${h.hits} hits</title></rect>`
      );
    })
    .join('');
  const countries = Object.entries(stats.geoTrafficDistribution)
    .sort((a, b) => b[1] - a[1])
    .map(([c, b]) => `<tr><td>${esc(c)}</td><td>${stats.geoRequestDistribution[c] ?? 0}</td><td>${b}</td></tr>`)
    .join('');
  return `<!doctype html><html><head><meta charset="utf-8"><title>CDN statistics: ${esc(zoneName)}</title>
<style>body{font:14px system-ui,sans-serif;margin:2em}td,th{padding:2px 10px;text-align:right}</style></head><body>
<h1>Pull zone ${esc(zoneName)}</h1>
<p>Requests ${stats.totalRequestsServed} · bytes served ${stats.totalBandwidthUsed} · from origin ${stats.totalOriginTraffic} ·
request hit rate ${(stats.cacheHitRate * 100).toFixed(1)}% · byte hit rate ${(stats.byteHitRate * 100).toFixed(1)}% ·
origin response ${stats.averageOriginResponseTime.toFixed(1)} ms · 2xx ${stats.status2xx} 3xx ${stats.status3xx} 4xx ${stats.status4xx} 5xx ${stats.status5xx}</p>
<h2>Requests per hour (green: cache hits)</h2>
<svg width="720" height="200" role="img" aria-label="requests per hour">${bars}</svg>
<h2>By country</h2><table><tr><th>Country</th><th>Requests</th><th>Bytes</th></tr>${countries}</table>
</body></html>`;
}
