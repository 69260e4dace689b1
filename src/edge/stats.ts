import type { Db } from '../core/db/connect.ts';
import { sql } from 'kysely';

const HOUR = 3_600_000;

interface Counters {
  requests: number;
  bytes_served: number;
  bytes_origin: number;
  hits: number;
  misses: number;
  hit_bytes: number;
  origin_fetches: number;
  origin_ms: number;
  status_2xx: number;
  status_3xx: number;
  status_4xx: number;
  status_5xx: number;
}
const zero = (): Counters => ({
  requests: 0,
  bytes_served: 0,
  bytes_origin: 0,
  hits: 0,
  misses: 0,
  hit_bytes: 0,
  origin_fetches: 0,
  origin_ms: 0,
  status_2xx: 0,
  status_3xx: 0,
  status_4xx: 0,
  status_5xx: 0,
});

export type CacheStatus = 'HIT' | 'STALE' | 'REVALIDATED' | 'MISS' | 'EXPIRED' | 'BYPASS' | 'REFUSED';

/**
 * Exact (unsampled) counters, buffered in memory per zone and hour and added to the database by
 * flush(). Flushes swap the buffers first, so no request is counted twice or lost.
 */
export class EdgeStats {
  private hourly = new Map<string, Counters>();
  private geo = new Map<string, { requests: number; bytes: number }>();
  /** Bytes served per zone since the last flush (for monthly caps between syncs). */
  readonly unflushedBytes = new Map<number, number>();
  private flushing: Promise<void> = Promise.resolve();
  /** Since this process started, never flushed (GET /metrics on the control port: edge-metrics.ts). */
  readonly totals = { requests: 0, hits: 0, misses: 0, bytesServed: 0, hitBytes: 0, originFetches: 0, originBytes: 0 };

  /** Per zone: the counters of the hour last written (saves building map keys on every request). */
  private last = new Map<
    number,
    { hour: number; c: Counters; geo: Map<string, { requests: number; bytes: number }> }
  >();

  request(zoneId: number, now: number, status: number, bytes: number, cache: CacheStatus, country: string): void {
    const hour = now - (now % HOUR);
    let cur = this.last.get(zoneId);
    if (cur === undefined || cur.hour !== hour) {
      const k = `${zoneId}:${hour}`;
      let counters = this.hourly.get(k);
      if (!counters) this.hourly.set(k, (counters = zero()));
      cur = { hour, c: counters, geo: new Map() };
      this.last.set(zoneId, cur);
    }
    const c = cur.c;
    const t = this.totals;
    c.requests++;
    c.bytes_served += bytes;
    t.requests++;
    t.bytesServed += bytes;
    if (cache === 'HIT' || cache === 'STALE' || cache === 'REVALIDATED') {
      c.hits++;
      c.hit_bytes += bytes;
      t.hits++;
      t.hitBytes += bytes;
    } else if (cache === 'MISS' || cache === 'EXPIRED' || cache === 'BYPASS') {
      c.misses++;
      t.misses++;
    }
    if (status < 300) c.status_2xx++;
    else if (status < 400) c.status_3xx++;
    else if (status < 500) c.status_4xx++;
    else c.status_5xx++;
    let gc = cur.geo.get(country);
    if (!gc) {
      const g = `${zoneId}:${hour}:${country}`;
      gc = this.geo.get(g);
      if (!gc) this.geo.set(g, (gc = { requests: 0, bytes: 0 }));
      cur.geo.set(country, gc);
    }
    gc.requests++;
    gc.bytes += bytes;
    this.unflushedBytes.set(zoneId, (this.unflushedBytes.get(zoneId) ?? 0) + bytes);
  }

  origin(zoneId: number, now: number, bytes: number, ms: number): void {
    const hour = Math.floor(now / HOUR) * HOUR;
    const k = `${zoneId}:${hour}`;
    let c = this.hourly.get(k);
    if (!c) this.hourly.set(k, (c = zero()));
    c.origin_fetches++;
    c.bytes_origin += bytes;
    this.totals.originFetches++;
    this.totals.originBytes += bytes;
    c.origin_ms += Math.round(ms);
  }

  flush(db: Db, liveZones: ReadonlySet<number>): Promise<void> {
    this.flushing = this.flushing.then(
      () => this.flushNow(db, liveZones),
      () => this.flushNow(db, liveZones),
    );
    return this.flushing;
  }

  private async flushNow(db: Db, liveZones: ReadonlySet<number>): Promise<void> {
    const hourly = this.hourly;
    const geo = this.geo;
    if (hourly.size === 0 && geo.size === 0) return;
    this.hourly = new Map();
    this.geo = new Map();
    this.last = new Map();
    const unflushed = new Map(this.unflushedBytes);
    try {
      await db.transaction().execute(async (trx) => {
        for (const [k, c] of hourly) {
          const [zone, hour] = k.split(':').map(Number) as [number, number];
          if (!liveZones.has(zone)) continue;
          await trx
            .insertInto('cdn_stats_hourly')
            .values({ zone_id: zone, hour, ...c })
            .onConflict((oc) =>
              oc
                .columns(['zone_id', 'hour'])
                .doUpdateSet(
                  Object.fromEntries(
                    Object.keys(c).map((name) => [
                      name,
                      sql`cdn_stats_hourly.${sql.ref(name)} + excluded.${sql.ref(name)}`,
                    ]),
                  ) as never,
                ),
            )
            .execute();
        }
        for (const [k, c] of geo) {
          const [zone, hour, country] = k.split(':') as [string, string, string];
          if (!liveZones.has(Number(zone))) continue;
          await trx
            .insertInto('cdn_stats_geo')
            .values({ zone_id: Number(zone), hour: Number(hour), country, requests: c.requests, bytes: c.bytes })
            .onConflict((oc) =>
              oc.columns(['zone_id', 'hour', 'country']).doUpdateSet({
                requests: sql`cdn_stats_geo.requests + excluded.requests`,
                bytes: sql`cdn_stats_geo.bytes + excluded.bytes`,
              } as never),
            )
            .execute();
        }
      });
      for (const [zone, bytes] of unflushed) {
        const left = (this.unflushedBytes.get(zone) ?? 0) - bytes;
        if (left <= 0) this.unflushedBytes.delete(zone);
        else this.unflushedBytes.set(zone, left);
      }
    } catch (error) {
      // Put the counters back so the next flush retries them.
      for (const [k, c] of hourly) {
        const cur = this.hourly.get(k) ?? zero();
        for (const name of Object.keys(c) as (keyof Counters)[]) cur[name] += c[name];
        this.hourly.set(k, cur);
      }
      for (const [k, c] of geo) {
        const cur = this.geo.get(k) ?? { requests: 0, bytes: 0 };
        cur.requests += c.requests;
        cur.bytes += c.bytes;
        this.geo.set(k, cur);
      }
      throw error;
    }
  }
}
