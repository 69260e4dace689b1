import cluster from 'node:cluster';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import {
  createEdgeHttpServer,
  PreparedHit,
  type EdgeHttpServer,
  type EdgeRequest,
  type EdgeResponse,
} from './http/http1.ts';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { EdgeConfig } from '../config.ts';
import type { Db } from '../core/db/connect.ts';
import type { Keyring } from '../core/keyring.ts';
import type { Log } from '../core/log.ts';
import { newId } from '../core/ids.ts';
import {
  checkControlAuth,
  DELIVERY_QUERY_KEYS,
  EDGE_LIVENESS_MS,
  ipMatcher,
  REGION_GEO_ZONE,
  referrerMatches,
  verifyToken,
  zoneConfigFromRow,
  type AssetOrigin,
  type ControlMessage,
  type IpMatcher,
  type PurgeMessage,
  type ZoneConfig,
} from '../features/cdn/edge-contract/contract.ts';
import { CacheStore, type CacheEntry } from './cache/cache-store.ts';
import { freshness, notModified, parseRange, parseVary, storedHeaders, varyKey } from './cache/http-cache.ts';
import { openGeo, type Geo } from './geo.ts';
import {
  acceptedFormats,
  encodeImage,
  isOptimizableImage,
  minify,
  variantEtag,
  type ImageFormat,
} from './origin/optimizer.ts';
import { createUrlOrigin, type OriginFetcher, type OriginResponse } from './origin/origin.ts';
import { EdgeStats, type CacheStatus } from './stats.ts';
import { edgeScrape } from './edge-metrics.ts';
import type { Metrics } from '../core/metrics.ts';
import { bufferSource, sendFileRange, sendRange, sendStream } from './http/file-body.ts';
import type { Readable } from 'node:stream';

export interface EdgeDeps {
  config: EdgeConfig;
  db: Db;
  keys: Keyring;
  log: Log;
  allowPrivateTargets: boolean;
  /** GET /metrics on the control port (edge-metrics.ts), with the token that opens it; absent: off (404). */
  metrics?: { metrics: Metrics; token: string };
  /** Origin for asset-store zones (published assets only); absent until the assets feature is wired. */
  assetOrigin?: AssetOrigin;
}

export type { AssetOrigin };

interface ZoneRuntime {
  zone: ZoneConfig;
  /** `<zone id>:`, the start of every cache key of the zone. */
  keyPrefix: string;
  blockedIps: IpMatcher;
  blockedCountries: Set<string>;
  corsExt: Set<string>;
  /** The geo zone of this edge's region when the zone disables it, else null. */
  geoBlocked: string | null;
  /** Any access rule to check (disabled, geo zone, IPs, countries, referrers). */
  accessRules: boolean;
  /** Token authentication, a request rate or a monthly cap to check. */
  limits: boolean;
}

/** Per connection (EdgePeer.memo): the peer's country, and the route of the last Host header seen on it. */
interface PeerMemo {
  country: string;
  host: string | undefined;
  route: ZoneRuntime | null;
  /** `routesVersion` when `route` was looked up: a zone reload invalidates it. */
  routes: number;
}

/** What handle() hands serve() for everything that is not a fresh in-memory hit. */
interface Pending {
  now: number;
  rt: ZoneRuntime;
  path: string;
  query: string;
  country: string;
  cors: boolean;
  base: string;
  variant: string;
  acceptClass: string;
  bypass: boolean;
  entry: CacheEntry | undefined;
}

const INVALID_PATH = /(^|\/)\.\.?(\/|$)|\\|%2e%2e|%5c/i;

interface Fetched {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  entry: CacheEntry | null;
  revalidated: boolean;
  /** Written from the origin's stream straight to the entry's file: sent from there. */
  streamed?: boolean;
  /** Passed through uncached (too big to store, or not storable): `size` bytes for one client only. */
  stream?: Readable;
  size?: number;
  /** The pass-through stream was taken by the first of the coalesced requests. */
  taken?: boolean;
}

const EMPTY = Buffer.alloc(0);

const TOKEN_PARAMS = new Set(['token', 'expires']);
/** Client headers not passed to the origin: hop-by-hop, credentials, and what the edge decides itself. */
const NOT_FORWARDED = new Set([
  'host',
  'connection',
  'keep-alive',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'proxy-authorization',
  'proxy-connection',
  'cookie',
  'authorization',
  'range',
  'if-range',
  'if-none-match',
  'if-modified-since',
  'if-match',
  'if-unmodified-since',
  'content-length',
  'expect',
  'accept-encoding',
]);
const STRIP_TO_CLIENT = new Set(['cdn-tag', 'surrogate-key', 'cache-tag', 'surrogate-control']);

/** One edge process: its own cache, counters and limits; configuration and purges from the database and the API. */
export class Edge {
  readonly id = newId();
  private readonly deps: EdgeDeps;
  private readonly cache: CacheStore;
  readonly stats = new EdgeStats();
  private readonly geo: Geo;
  private readonly origin: OriginFetcher;
  private zones = new Map<number, ZoneRuntime>();
  private byHost = new Map<string, ZoneRuntime>();
  private byName = new Map<string, ZoneRuntime>();
  /** Raw Host header → zone (null: none), rebuilt with the zones. */
  private hostRoutes = new Map<string, ZoneRuntime | null>();
  /** Bumped by every zone reload (connections' remembered routes are then looked up again). */
  private routesVersion = 0;
  private readonly countries = new Map<string, string>();
  private readonly inflight = new Map<string, Promise<Fetched>>();
  private readonly variantJobs = new Map<string, Promise<void>>();
  private readonly epochs = new Map<number, number>();
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly monthlyUsed = new Map<number, number>();
  private readonly applied = new Map<string, number>();
  private readonly trusted: IpMatcher;
  private lastSyncOk = 0;
  private server: EdgeHttpServer | undefined;
  private control: Server | undefined;
  private timer: NodeJS.Timeout | undefined;
  private syncing: Promise<void> = Promise.resolve();
  controlUrl = '';
  /** Origin fetches made by this process (tests and benches read it). */
  originFetches = 0;

  constructor(deps: EdgeDeps) {
    this.deps = deps;
    this.cache = new CacheStore({
      dir: join(deps.config.cacheDir, this.id),
      maxBytes: deps.config.cacheMaxBytes,
      memoryMaxBytes: deps.config.memoryMaxBytes,
    });
    this.geo = openGeo(deps.config.geoipDb);
    this.origin = createUrlOrigin({
      allowPrivate: deps.allowPrivateTargets,
      maxObjectBytes: deps.config.maxObjectBytes,
    });
    const proxies = deps.config.trustedProxies.flatMap((p) => (p === 'loopback' ? ['127.0.0.0/8', '::1'] : [p]));
    this.trusted = ipMatcher(proxies);
  }

  async start(): Promise<{ port: number; controlUrl: string }> {
    await this.loadZones();
    this.lastSyncOk = Date.now();
    this.control = createServer((req, res) => void this.handleControl(req, res));
    // EDGE_WORKERS=n: worker i (0-based) uses EDGE_CONTROL_PORT + i when a port is set.
    const controlPort =
      this.deps.config.controlPort === 0
        ? 0
        : this.deps.config.controlPort + Number(process.env.EDGE_WORKER_INDEX ?? 0);
    // exclusive: in a node:cluster worker a shared control port would hand a purge to just one of the workers.
    await new Promise<void>((resolve) =>
      this.control!.listen({ port: controlPort, host: this.deps.config.controlHost, exclusive: true }, resolve),
    );
    const cport = (this.control.address() as AddressInfo).port;
    const chost = this.deps.config.controlHost.includes(':')
      ? `[${this.deps.config.controlHost}]`
      : this.deps.config.controlHost;
    this.controlUrl = this.deps.config.controlUrl ?? `http://${chost === '0.0.0.0' ? '127.0.0.1' : chost}:${cport}`;
    await this.register();
    this.server = createEdgeHttpServer(
      (req, res) => this.handle(req, res),
      (error, res) => {
        this.deps.log.error({ err: error }, 'edge request failed');
        if (!res.headersSent) this.plain(res, 502, 'Bad gateway');
        else res.destroy();
      },
      {
        headersMs: this.deps.config.http.headersTimeoutMs,
        requestMs: this.deps.config.http.requestTimeoutMs,
        idleMs: this.deps.config.http.idleTimeoutMs,
      },
    );
    const listening = this.server.server;
    // Workers of `EDGE_WORKERS=n` each bind the port with SO_REUSEPORT, so the kernel spreads
    // connections evenly (node:cluster's hand-off from the primary left one worker doing most of the work).
    const reusePort = cluster.isWorker && this.deps.config.port !== 0;
    await new Promise<void>((resolve) =>
      listening.listen(
        { port: this.deps.config.port, host: this.deps.config.host, exclusive: reusePort, reusePort },
        resolve,
      ),
    );
    this.timer = setInterval(() => void this.heartbeat(), this.deps.config.heartbeatMs);
    this.timer.unref();
    return { port: (listening.address() as AddressInfo).port, controlUrl: this.controlUrl };
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    const control = this.control;
    await Promise.all([
      this.server?.close(),
      control &&
        new Promise<void>((r) => {
          control.close(() => r());
          control.closeAllConnections();
        }),
    ]);
    await this.syncing.catch(() => {});
    await this.stats.flush(this.deps.db, new Set(this.zones.keys())).catch(() => {});
    await this.deps.db
      .deleteFrom('cdn_edges')
      .where('id', '=', this.id)
      .execute()
      .catch(() => {});
    await this.origin.close();
  }

  // --- configuration, purges, heartbeat ---

  private async register(): Promise<void> {
    const now = Date.now();
    await this.deps.db
      .insertInto('cdn_edges')
      .values({
        id: this.id,
        control_url: this.controlUrl,
        region: this.deps.config.region,
        started_at: now,
        last_seen_at: now,
      })
      .onConflict((oc) => oc.column('id').doUpdateSet({ last_seen_at: now, control_url: this.controlUrl }))
      .execute();
  }

  private async heartbeat(): Promise<void> {
    try {
      const now = Date.now();
      const updated = await this.deps.db
        .updateTable('cdn_edges')
        .set({ last_seen_at: now })
        .where('id', '=', this.id)
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) === 0) {
        // The API deregistered us (we missed a push): nothing cached may be trusted any more.
        this.cache.purge(null, () => true);
        for (const zone of this.zones.keys()) this.bumpEpoch(zone);
        await this.register();
      }
      await this.sync({ flushStats: true });
    } catch (error) {
      this.deps.log.warn({ err: error }, 'edge heartbeat failed');
    }
  }

  /** Applies pushed purges, reloads zones, pulls missed purges and (optionally) flushes counters. */
  sync(message: ControlMessage): Promise<void> {
    for (const purge of message.purges ?? []) this.applyPurge(purge);
    const run = async () => {
      const started = Date.now();
      await this.loadZones();
      this.pruneBuckets(Date.now());
      await this.pollPurges(started);
      if (message.flushStats) await this.stats.flush(this.deps.db, new Set(this.zones.keys()));
      await this.loadMonthlyUsage();
      this.lastSyncOk = started;
    };
    this.syncing = this.syncing.then(run, run);
    return this.syncing;
  }

  private async loadZones(): Promise<void> {
    const rows = await this.deps.db.selectFrom('cdn_zones').selectAll().execute();
    const zones = new Map<number, ZoneRuntime>();
    const byHost = new Map<string, ZoneRuntime>();
    const byName = new Map<string, ZoneRuntime>();
    for (const row of rows) {
      const zone = zoneConfigFromRow(row);
      const old = this.zones.get(zone.id);
      const rt =
        old && old.zone.version === zone.version && old.zone.enabled === zone.enabled ? old : this.runtime(zone);
      zones.set(zone.id, rt);
      byName.set(zone.name.toLowerCase(), rt);
      for (const host of zone.settings.hostnames) byHost.set(host, rt);
    }
    for (const id of this.zones.keys()) {
      if (!zones.has(id)) {
        this.bumpEpoch(id);
        this.cache.purge(id, () => true);
      }
    }
    this.zones = zones;
    this.byHost = byHost;
    this.byName = byName;
    this.hostRoutes = new Map();
    this.routesVersion++;
  }

  private runtime(zone: ZoneConfig): ZoneRuntime {
    const s = zone.settings;
    const geoZone = REGION_GEO_ZONE[this.deps.config.region];
    const geoBlocked = geoZone && s[`enableGeoZone${geoZone}`] === false ? geoZone : null;
    return {
      zone,
      keyPrefix: `${zone.id}:`,
      blockedIps: ipMatcher(s.blockedIPs),
      blockedCountries: new Set(s.blockedCountries),
      corsExt: new Set(s.accessControlOriginHeaderExtensions),
      geoBlocked,
      accessRules:
        !zone.enabled ||
        geoBlocked !== null ||
        s.blockedIPs.length > 0 ||
        s.blockedCountries.length > 0 ||
        s.allowedReferrers.length > 0 ||
        s.blockedReferrers.length > 0,
      limits: s.zoneSecurityEnabled || s.requestLimit > 0 || s.monthlyBandwidthLimit > 0,
    };
  }

  private async pollPurges(now: number): Promise<void> {
    const since = now - 2 * EDGE_LIVENESS_MS;
    const rows = await this.deps.db
      .selectFrom('cdn_purges')
      .select(['id', 'zone_id', 'kind', 'value'])
      .where('created_at', '>=', since)
      .execute();
    for (const row of rows)
      this.applyPurge({ id: row.id, zoneId: Number(row.zone_id), kind: row.kind, value: row.value });
    for (const [id, at] of this.applied) if (at < since - 60_000) this.applied.delete(id);
  }

  private async loadMonthlyUsage(): Promise<void> {
    const capped = [...this.zones.values()]
      .filter((z) => z.zone.settings.monthlyBandwidthLimit > 0)
      .map((z) => z.zone.id);
    if (capped.length === 0) return;
    const d = new Date();
    const monthStart = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
    const rows = await this.deps.db
      .selectFrom('cdn_stats_hourly')
      .select(['zone_id', (eb) => eb.fn.sum<number>('bytes_served').as('bytes')])
      .where('zone_id', 'in', capped)
      .where('hour', '>=', monthStart)
      .groupBy('zone_id')
      .execute();
    this.monthlyUsed.clear();
    for (const row of rows) this.monthlyUsed.set(Number(row.zone_id), Number(row.bytes));
  }

  /**
   * Drops the request-rate buckets that have refilled to their cap: such a bucket is the same as none,
   * so the map holds only the IPs seen in the last few seconds, however many different ones come.
   */
  private pruneBuckets(now: number): void {
    for (const [key, b] of this.buckets) {
      const s = this.zones.get(Number(key.slice(0, key.indexOf('|'))))?.zone.settings;
      if (
        s === undefined ||
        s.requestLimit === 0 ||
        b.tokens + ((now - b.at) / 1000) * s.requestLimit >= s.requestLimit + s.burstSize
      )
        this.buckets.delete(key);
    }
  }

  private bumpEpoch(zoneId: number): void {
    this.epochs.set(zoneId, (this.epochs.get(zoneId) ?? 0) + 1);
  }

  applyPurge(p: PurgeMessage): void {
    if (this.applied.has(p.id)) return;
    this.applied.set(p.id, Date.now());
    this.bumpEpoch(p.zoneId);
    const value = p.value.split('?')[0]!;
    const match: (e: CacheEntry) => boolean =
      p.kind === 'all'
        ? () => true
        : p.kind === 'url'
          ? (e) => e.path === value
          : p.kind === 'prefix'
            ? (e) => e.path.startsWith(value)
            : p.kind === 'tag'
              ? (e) => e.tags.includes(p.value)
              : (e) => e.path === `/${p.value}` || e.path.startsWith(`/${p.value}/`);
    this.cache.purge(p.zoneId, match);
  }

  private async handleControl(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method === 'GET' && req.url === '/health') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: this.id,
          objects: this.cache.size,
          bytes: this.cache.bytes,
          rateBuckets: this.buckets.size,
          largestWholeRead: this.cache.largestWholeRead,
        }),
      );
      return;
    }
    if (req.method === 'GET' && req.url === '/metrics') {
      const scrape = await edgeScrape(this.deps.metrics, req.headers.authorization, () => ({
        totals: this.stats.totals,
        cache: { objects: this.cache.size, ...this.cache.bytes },
      }));
      res.writeHead(scrape.status, scrape.headers).end(scrape.body);
      return;
    }
    if (
      req.method !== 'POST' ||
      req.url !== '/sync' ||
      !checkControlAuth(this.deps.keys, req.headers['x-tessera-edge-auth'] as string | undefined, Date.now())
    ) {
      res.writeHead(404).end();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > 4_194_304) {
        res.writeHead(413).end();
        return;
      }
      chunks.push(chunk as Buffer);
    }
    try {
      const message = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as ControlMessage;
      await this.sync(message);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    } catch (error) {
      this.deps.log.warn({ err: error }, 'edge sync failed');
      res.writeHead(500).end();
    }
  }

  // --- serving ---

  private plain(res: EdgeResponse, status: number, message: string, headers: Record<string, string> = {}): number {
    const body = JSON.stringify({ message });
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      'cache-control': 'no-store',
      ...headers,
    });
    res.end(body);
    return Buffer.byteLength(body);
  }

  /** Answers a refused request (access rules, limits) and counts it. */
  private refuse(
    res: EdgeResponse,
    zoneId: number,
    now: number,
    country: string,
    status: number,
    message: string,
    headers?: Record<string, string>,
  ): void {
    const sent = this.plain(res, status, message, headers);
    this.stats.request(zoneId, now, status, sent, 'REFUSED', country);
  }

  /** The per-connection memo, made on the connection's first request. */
  private peerMemo(req: EdgeRequest): PeerMemo {
    let memo = req.socket.memo as PeerMemo | undefined;
    if (memo === undefined) {
      memo = { country: this.countryOf(req.socket.remoteAddress ?? ''), host: undefined, route: null, routes: -1 };
      req.socket.memo = memo;
    }
    return memo;
  }

  private clientIp(req: EdgeRequest): string {
    const remote = req.socket.remoteAddress ?? '';
    const xff = req.headers['x-forwarded-for'];
    if (xff === undefined || !this.trusted.matches(remote)) return remote;
    const chain = xff
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    for (let i = chain.length - 1; i >= 0; i--) if (!this.trusted.matches(chain[i]!) || i === 0) return chain[i]!;
    return remote;
  }

  /** Country of a client IP from the GeoIP database, remembered (bounded) so a repeat costs one Map lookup. */
  private countryOf(ip: string): string {
    let country = this.countries.get(ip);
    if (country === undefined) {
      if (this.countries.size >= 65_536) this.countries.clear();
      country = this.geo.country(ip);
      this.countries.set(ip, country);
    }
    return country;
  }

  /** The zone a request is for: by Host (remembered per raw Host value), else by the first path segment. */
  private route(req: EdgeRequest, rawPath: string, memo: PeerMemo): { rt: ZoneRuntime; path: string } | undefined {
    const hostHeader = req.headers.host ?? '';
    let rt: ZoneRuntime | null | undefined;
    // A keep-alive connection nearly always repeats its Host: comparing it to the last one saves hashing it.
    if (memo.routes === this.routesVersion && memo.host === hostHeader) rt = memo.route;
    else {
      rt = this.hostRoutes.get(hostHeader);
      if (rt === undefined) {
        rt = this.byHost.get(hostHeader.toLowerCase().replace(/:\d+$/, '')) ?? null;
        if (this.hostRoutes.size >= 4096) this.hostRoutes.clear();
        this.hostRoutes.set(hostHeader, rt);
      }
      memo.host = hostHeader;
      memo.route = rt;
      memo.routes = this.routesVersion;
    }
    if (rt !== null) return { rt, path: rawPath };
    const slash = rawPath.indexOf('/', 1);
    const name = slash < 0 ? rawPath.slice(1) : rawPath.slice(1, slash);
    const byName = this.byName.get(name) ?? this.byName.get(name.toLowerCase());
    return byName && { rt: byName, path: slash < 0 ? '/' : rawPath.slice(slash) };
  }

  /**
   * Serves one request. Everything up to a fresh in-memory hit is synchronous: a Map lookup for the
   * zone, rule checks only when the zone configures them, one for the object, one prebuilt header
   * block and one write. Anything else continues in serve().
   */
  handle(req: EdgeRequest, res: EdgeResponse): void | Promise<void> {
    const now = req.at;
    const url = req.url;
    const qi = url.indexOf('?');
    const memo = this.peerMemo(req);
    const routed = this.route(req, qi < 0 ? url : url.slice(0, qi), memo);
    if (routed === undefined) {
      this.plain(res, 404, 'No pull zone serves this host or path');
      return;
    }
    const { rt, path } = routed;
    const zone = rt.zone;
    const s = zone.settings;
    const ip = this.clientIp(req);
    const country = ip === req.socket.remoteAddress ? memo.country : this.countryOf(ip);
    const method = req.method;
    if (method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS')
      return this.refuse(res, zone.id, now, country, 405, 'Only GET, HEAD and OPTIONS', {
        allow: 'GET, HEAD, OPTIONS',
      });
    if (rt.accessRules) {
      if (!zone.enabled) return this.refuse(res, zone.id, now, country, 403, 'This pull zone is disabled');
      if (rt.geoBlocked !== null)
        return this.refuse(
          res,
          zone.id,
          now,
          country,
          403,
          `This pull zone is not served in geo zone ${rt.geoBlocked}`,
        );
      if (rt.blockedIps.matches(ip)) return this.refuse(res, zone.id, now, country, 403, 'Your IP address is blocked');
      if (rt.blockedCountries.has(country))
        return this.refuse(res, zone.id, now, country, 403, 'Access from your country is blocked');
      const referer = req.headers.referer;
      if (referer !== undefined && (s.allowedReferrers.length > 0 || s.blockedReferrers.length > 0)) {
        let refHost = '';
        try {
          refHost = new URL(referer).hostname.toLowerCase();
        } catch {
          refHost = '';
        }
        if (s.blockedReferrers.some((p) => referrerMatches(p, refHost)))
          return this.refuse(res, zone.id, now, country, 403, 'Referrer blocked');
        if (s.allowedReferrers.length > 0 && !s.allowedReferrers.some((p) => referrerMatches(p, refHost)))
          return this.refuse(res, zone.id, now, country, 403, 'Referrer not allowed');
      }
    }
    if (INVALID_PATH.test(path)) return this.refuse(res, zone.id, now, country, 400, 'Invalid path');

    // Query: drop token parameters; sort the rest (or drop all when the zone ignores query strings).
    let query = '';
    let token: string | undefined;
    let expires: string | undefined;
    if (qi >= 0) {
      const params = new URLSearchParams(url.slice(qi + 1));
      token = params.get('token') ?? undefined;
      expires = params.get('expires') ?? undefined;
      // An asset-store zone keeps its delivery parameters (presets, sizes, formats) whatever the setting.
      const deliveryOnly = s.ignoreQueryStrings && s.originType === 'assets';
      if (!s.ignoreQueryStrings || deliveryOnly) {
        const kept = [...params]
          .filter(([k]) => !TOKEN_PARAMS.has(k) && (!deliveryOnly || DELIVERY_QUERY_KEYS.has(k)))
          .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
        query = new URLSearchParams(kept).toString();
      }
    }
    const cors =
      s.enableAccessControlOriginHeader &&
      (rt.corsExt.size === 0 || rt.corsExt.has(path.slice(path.lastIndexOf('.') + 1).toLowerCase()));
    if (method === 'OPTIONS') {
      res.writeHead(
        204,
        cors
          ? {
              'access-control-allow-origin': '*',
              'access-control-allow-methods': 'GET, HEAD, OPTIONS',
              'access-control-allow-headers': String(req.headers['access-control-request-headers'] ?? '*'),
              'access-control-max-age': '86400',
            }
          : { allow: 'GET, HEAD, OPTIONS' },
      );
      res.end();
      this.stats.request(zone.id, now, 204, 0, 'BYPASS', country);
      return;
    }
    if (rt.limits) {
      if (s.zoneSecurityEnabled) {
        const ok =
          token !== undefined &&
          expires !== undefined &&
          verifyToken(
            s.zoneSecurityKey,
            path,
            token,
            expires,
            Math.floor(now / 1000),
            s.zoneSecurityIncludeHashRemoteIP ? ip : undefined,
          );
        if (!ok) return this.refuse(res, zone.id, now, country, 403, 'Missing, invalid or expired token');
      }
      if (s.requestLimit > 0) {
        const key = `${zone.id}|${ip}`;
        const cap = s.requestLimit + s.burstSize;
        const b = this.buckets.get(key) ?? { tokens: cap, at: now };
        b.tokens = Math.min(cap, b.tokens + ((now - b.at) / 1000) * s.requestLimit);
        b.at = now;
        this.buckets.set(key, b);
        if (b.tokens < 1)
          return this.refuse(res, zone.id, now, country, 429, 'Too many requests from your IP', {
            'retry-after': String(Math.max(1, Math.ceil((1 - b.tokens) / s.requestLimit))),
          });
        b.tokens -= 1;
      }
      if (s.monthlyBandwidthLimit > 0) {
        const used = (this.monthlyUsed.get(zone.id) ?? 0) + (this.stats.unflushedBytes.get(zone.id) ?? 0);
        if (used >= s.monthlyBandwidthLimit) {
          const d = new Date(now);
          const next = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
          return this.refuse(res, zone.id, now, country, 429, 'The pull zone reached its monthly bandwidth limit', {
            'retry-after': String(Math.ceil((next - now) / 1000)),
          });
        }
      }
    }
    // --- cache lookup ---
    const base = query ? `${rt.keyPrefix}${path}?${query}` : rt.keyPrefix + path;
    let acceptClass = '';
    if (s.enableAvifVary || s.enableWebpVary) {
      const accept = req.headers.accept ?? '';
      acceptClass = `|a=${s.enableAvifVary && accept.includes('image/avif') ? 'avif' : s.enableWebpVary && accept.includes('image/webp') ? 'webp' : '-'}`;
    }
    const bypass = now - this.lastSyncOk > EDGE_LIVENESS_MS;
    const varies = this.cache.varies.get(base);
    const variant =
      varies === undefined || varies.length === 0
        ? acceptClass
        : varyKey(varies, (name) => req.headers[name]) + acceptClass;
    const entry = bypass ? undefined : this.cache.lookup(base, variant);
    // Fast path: a fresh in-memory object, plain GET, nothing to negotiate, slice or throttle.
    if (
      entry !== undefined &&
      entry.body !== null &&
      method === 'GET' &&
      entry.status === 200 &&
      !entry.alwaysRevalidate
    ) {
      const age = now - entry.storedAt + entry.initialAgeMs;
      const body = entry.body;
      if (
        age < entry.ttlMs &&
        req.headers.range === undefined &&
        req.headers['if-none-match'] === undefined &&
        req.headers['if-modified-since'] === undefined &&
        (s.limitRatePerSecond === 0 || body.length <= s.limitRateAfter) &&
        !(s.optimizerEnabled && isOptimizableImage(entry.headers['content-type']))
      ) {
        let fast = entry.fast;
        if (fast === undefined || fast.version !== zone.version || fast.cors !== cors || fast.hit.body !== body) {
          const lines = this.clientHeaders(entry.headers, entry.headers['vary'], entry.etag, zone, cors);
          let head = '';
          for (let i = 0; i < lines.length; i += 2) head += `${lines[i]}: ${lines[i + 1]}\r\n`;
          fast = {
            version: zone.version,
            cors,
            hit: new PreparedHit(`${head}cdn-cache: HIT\r\ncontent-length: ${body.length}\r\n`, body),
          };
          entry.fast = fast;
        }
        res.sendHit(fast.hit, Math.floor(age / 1000));
        this.stats.request(zone.id, now, 200, body.length, 'HIT', country);
        return;
      }
    }
    return this.serve(req, res, { now, rt, path, query, country, cors, base, variant, acceptClass, bypass, entry });
  }

  /** Everything but a fresh in-memory hit: revalidation, misses, conditionals, ranges, HEAD, images, throttling. */
  private async serve(req: EdgeRequest, res: EdgeResponse, c: Pending): Promise<void> {
    const { now, rt, path, query, country, cors, base, acceptClass, bypass } = c;
    const zone = rt.zone;
    const s = zone.settings;
    let cacheStatus: CacheStatus = 'REFUSED';
    let sent = 0;
    let recorded = false;
    const record = (status: number) => {
      if (recorded) return;
      recorded = true;
      this.stats.request(zone.id, now, status, sent, cacheStatus, country);
    };
    const refuse = (status: number, message: string, headers?: Record<string, string>) => {
      sent = this.plain(res, status, message, headers);
      record(status);
    };
    const header = (name: string) => req.headers[name];
    const accept = header('accept') ?? '';
    let variant = c.variant;
    let entry = c.entry;
    let fetched: Fetched | undefined;
    const originHeaders = (): Record<string, string> => {
      const h: Record<string, string> = {};
      for (const name in req.headers) {
        const value = req.headers[name];
        if (value === undefined || NOT_FORWARDED.has(name)) continue;
        h[name] = value;
      }
      h['user-agent'] = 'Tessera-Edge/1';
      h['accept-encoding'] = 'identity';
      return h;
    };
    if (entry) {
      const cached = entry;
      const age = now - cached.storedAt + cached.initialAgeMs;
      if (!cached.alwaysRevalidate && age < cached.ttlMs) {
        cacheStatus = 'HIT';
      } else if (!entry.alwaysRevalidate && age < entry.ttlMs + entry.swrMs) {
        cacheStatus = 'STALE';
        void this.fetchCoalesced(rt, base, variant, path, query, originHeaders(), req.headers, entry).catch(() => {});
      } else {
        try {
          fetched = await this.fetchCoalesced(rt, base, variant, path, query, originHeaders(), req.headers, entry);
          if (fetched.status >= 500 && age < entry.ttlMs + entry.sieMs) {
            cacheStatus = 'STALE';
            fetched = undefined;
          } else {
            cacheStatus = fetched.revalidated ? 'REVALIDATED' : 'EXPIRED';
            entry = fetched.entry ?? undefined;
          }
        } catch (error) {
          if (age < cached.ttlMs + cached.sieMs) cacheStatus = 'STALE';
          else return refuse(502, `Origin unavailable: ${(error as Error).message}`);
        }
      }
    } else {
      try {
        fetched = await this.fetchCoalesced(
          rt,
          base,
          variant,
          path,
          query,
          originHeaders(),
          req.headers,
          undefined,
          bypass,
        );
      } catch (error) {
        cacheStatus = 'MISS';
        return refuse(502, `Origin unavailable: ${(error as Error).message}`);
      }
      cacheStatus = fetched.entry ? 'MISS' : 'BYPASS';
      entry = fetched.entry ?? undefined;
      variant = varyKey(this.cache.varies.get(base) ?? [], header) + acceptClass;
    }

    // --- choose the representation ---
    let status: number;
    let headers: Record<string, string>;
    /** null: sent from the entry's file in chunks (too big for the memory tier, never read whole). */
    let body: Buffer | null;
    let size: number;
    let etag: string | undefined;
    let lastModified: string | undefined;
    let ageSeconds = 0;
    /** An object too big to keep, streamed from the origin to this client (no ranges). */
    let passThrough: Readable | null = null;
    if (entry && !entry.dead && (!fetched || fetched.entry === entry)) {
      status = entry.status;
      headers = entry.headers;
      // An object beyond the memory tier's bound is sent from its file in chunks, never read whole — an
      // image too (it is served as stored, not optimized).
      if (fetched?.streamed || ((!fetched || fetched.revalidated) && this.cache.streams(entry))) {
        body = null;
        size = entry.size;
      } else {
        // A fresh fetch already holds the stored bytes; otherwise memory, or the file read whole.
        body = fetched && !fetched.revalidated ? fetched.body : await this.cache.body(entry);
        if (!body) return refuse(503, 'Cached object unavailable; retry');
        size = body.length;
      }
      etag = entry.etag;
      lastModified = entry.lastModified;
      ageSeconds = Math.floor(Math.max(0, now - entry.storedAt + entry.initialAgeMs) / 1000);
    } else if (fetched?.streamed) {
      return refuse(503, 'Cached object was purged; retry');
    } else if (fetched) {
      if (fetched.stream && fetched.taken) {
        // A pass-through stream serves one client: a coalesced request fetches its own.
        try {
          fetched = await this.fetchAndStore(
            rt,
            base,
            variant,
            path,
            query,
            originHeaders(),
            req.headers,
            undefined,
            this.epochs.get(zone.id) ?? 0,
            true,
          );
        } catch (error) {
          return refuse(502, `Origin unavailable: ${(error as Error).message}`);
        }
      }
      status = fetched.status;
      headers = storedHeaders(fetched.headers);
      if (fetched.stream) {
        fetched.taken = true;
        passThrough = fetched.stream;
        body = null;
        size = fetched.size ?? 0;
      } else {
        body = fetched.body;
        size = body.length;
      }
      etag = headers['etag'];
      lastModified = headers['last-modified'];
    } else {
      return refuse(503, 'Cached object was purged; retry');
    }
    let vary: string | undefined = headers['vary'];
    const source = entry;
    if (
      s.optimizerEnabled &&
      status === 200 &&
      source &&
      !source.dead &&
      body !== null &&
      isOptimizableImage(headers['content-type'])
    ) {
      const chosen = await this.pickImage(source, body, accept, zone);
      body = chosen.body;
      size = body.length;
      headers = chosen.headers;
      etag = headers['etag'];
      vary = vary ? `${vary}, Accept` : 'Accept';
    }

    // --- respond ---
    const out: Record<string, string | number> = {};
    const prepared = this.clientHeaders(headers, vary, etag, zone, cors);
    for (let i = 0; i < prepared.length; i += 2) out[prepared[i]!] = prepared[i + 1]!;
    out['age'] = ageSeconds;
    out['cdn-cache'] = cacheStatus;
    if (
      status === 200 &&
      notModified(
        { ifNoneMatch: header('if-none-match'), ifModifiedSince: header('if-modified-since') },
        etag,
        lastModified,
      )
    ) {
      passThrough?.destroy();
      delete out['content-type'];
      res.writeHead(304, out);
      res.end();
      return record(304);
    }
    let start = 0;
    let end = size - 1;
    let code = status;
    if (status === 200 && req.headers.range !== undefined && passThrough === null) {
      const ifRange = header('if-range');
      const rangeOk =
        ifRange === undefined ||
        (ifRange.startsWith('"') || ifRange.startsWith('W/') ? ifRange === etag : ifRange === lastModified);
      const range = rangeOk ? parseRange(header('range'), size) : { kind: 'full' as const };
      if (range.kind === 'unsatisfiable')
        return refuse(416, 'Range not satisfiable', { 'content-range': `bytes */${size}` });
      if (range.kind === 'partial') {
        start = range.start;
        end = range.end;
        code = 206;
        out['content-range'] = `bytes ${start}-${end}/${size}`;
      }
    }
    const length = end - start + 1;
    out['content-length'] = length;
    const throttle = s.limitRatePerSecond > 0 && length > s.limitRateAfter;
    if (passThrough !== null) {
      res.writeHead(code, out);
      if (req.method === 'HEAD' || length === 0) {
        passThrough.destroy();
        res.end();
        return record(code);
      }
      sent = await sendStream(
        res,
        passThrough,
        length,
        throttle ? { after: s.limitRateAfter, rate: s.limitRatePerSecond } : null,
      );
      return record(code);
    }
    if (body === null) {
      const file = req.method === 'HEAD' || length === 0 || !entry ? null : await this.cache.open(entry);
      if (file === null && req.method !== 'HEAD' && length > 0) return refuse(503, 'Cached object unavailable; retry');
      res.writeHead(code, out);
      if (file === null) {
        res.end();
        return record(code);
      }
      sent = await sendFileRange(
        res,
        file,
        start,
        end,
        throttle ? { after: s.limitRateAfter, rate: s.limitRatePerSecond } : null,
      );
      return record(code);
    }
    const slice = start === 0 && end === size - 1 ? body : body.subarray(start, end + 1);
    res.writeHead(code, out);
    if (req.method === 'HEAD') {
      res.end();
      return record(code);
    }
    if (throttle) {
      sent = await sendRange(res, bufferSource(slice), 0, slice.length - 1, {
        after: s.limitRateAfter,
        rate: s.limitRatePerSecond,
      });
      return record(code);
    }
    sent = slice.length;
    res.end(slice);
    record(code);
  }

  /** Response headers for clients (flat name/value list), without age, cache status and length. */
  private clientHeaders(
    headers: Record<string, string>,
    vary: string | undefined,
    etag: string | undefined,
    zone: ZoneConfig,
    cors: boolean,
  ): string[] {
    const s = zone.settings;
    const out: string[] = [];
    for (const k in headers)
      if (!STRIP_TO_CLIENT.has(k) && k !== 'vary' && k !== 'etag' && k !== 'cache-control') out.push(k, headers[k]!);
    // A list member, not a word: `Vary: Accept-Encoding` does not cover Accept (`\baccept\b` matched it).
    if ((s.enableAvifVary || s.enableWebpVary) && !parseVary(vary).includes('accept'))
      vary = vary ? `${vary}, Accept` : 'Accept';
    if (vary) out.push('vary', vary);
    if (etag) out.push('etag', etag);
    const cc =
      s.cacheControlPublicMaxAgeOverride !== null
        ? `public, max-age=${s.cacheControlPublicMaxAgeOverride}`
        : headers['cache-control'];
    if (cc) out.push('cache-control', cc);
    out.push('accept-ranges', 'bytes');
    if (cors) out.push('access-control-allow-origin', '*');
    // Active content (HTML, SVG, XML) must not run on the edge's host unless the zone opts in (issue 23, defect 11).
    if (headers['x-content-type-options'] === undefined) out.push('x-content-type-options', 'nosniff');
    if (!s.serveActiveContentInline && isActiveContent(headers['content-type'])) {
      out.push('content-security-policy', 'sandbox');
      const i = out.indexOf('content-disposition');
      const disposition = i >= 0 && i % 2 === 0 ? out[i + 1]! : '';
      const rest = disposition.replace(/^\s*(?:inline|attachment)\b\s*;?\s*/i, '');
      const attachment = rest ? `attachment; ${rest}` : 'attachment';
      if (i >= 0 && i % 2 === 0) out[i + 1] = attachment;
      else out.push('content-disposition', attachment);
    }
    return out;
  }

  /** AVIF > WebP > original by Accept; AVIF is made in the background, never awaited. */
  private async pickImage(
    entry: CacheEntry,
    source: Buffer,
    accept: string,
    zone: ZoneConfig,
  ): Promise<{ body: Buffer; headers: Record<string, string> }> {
    const formats = acceptedFormats(accept, zone.settings);
    for (const format of formats) {
      const have = entry.variants.get(format);
      if (have) return have;
      if (format === 'avif') {
        void this.makeVariant(entry, source, format, zone).catch(() => {});
        continue;
      }
      await this.makeVariant(entry, source, format, zone);
      const made = entry.variants.get(format);
      if (made) return made;
    }
    return { body: source, headers: entry.headers };
  }

  private makeVariant(entry: CacheEntry, source: Buffer, format: ImageFormat, zone: ZoneConfig): Promise<void> {
    const key = `${entry.key}\u0001${entry.storedAt}\u0001${format}`;
    let job = this.variantJobs.get(key);
    if (!job) {
      job = (async () => {
        try {
          const out = await encodeImage(source, format, zone.settings);
          this.cache.addVariant(entry, format, out.body, {
            ...entry.headers,
            'content-type': out.contentType,
            etag: variantEtag(entry.etag, source, format),
          });
        } finally {
          this.variantJobs.delete(key);
        }
      })();
      this.variantJobs.set(key, job);
    }
    return job;
  }

  /** One origin request per object at a time: concurrent misses wait for the same fetch. */
  private fetchCoalesced(
    rt: ZoneRuntime,
    base: string,
    variant: string,
    path: string,
    query: string,
    headers: Record<string, string>,
    clientHeaders: EdgeRequest['headers'],
    stale: CacheEntry | undefined,
    bypass = false,
  ): Promise<Fetched> {
    const epoch = this.epochs.get(rt.zone.id) ?? 0;
    const key = `${epoch}|${base}|${variant}`;
    let p = this.inflight.get(key);
    if (!p) {
      p = this.fetchAndStore(rt, base, variant, path, query, headers, clientHeaders, stale, epoch, bypass).finally(() =>
        this.inflight.delete(key),
      );
      this.inflight.set(key, p);
    }
    return p;
  }

  private async fetchAndStore(
    rt: ZoneRuntime,
    base: string,
    variant: string,
    path: string,
    query: string,
    headers: Record<string, string>,
    clientHeaders: EdgeRequest['headers'],
    stale: CacheEntry | undefined,
    epoch: number,
    bypass: boolean,
  ): Promise<Fetched> {
    const zone = rt.zone;
    const s = zone.settings;
    const h = { ...headers };
    if (stale?.etag) h['if-none-match'] = stale.etag;
    else if (stale?.lastModified) h['if-modified-since'] = stale.lastModified;
    const now = Date.now();
    this.originFetches++;
    let origin: OriginResponse;
    if (s.originType === 'assets') {
      if (!this.deps.assetOrigin) throw new Error('asset-store origin not available');
      // Objects beyond a quarter of the memory tier come as a stream, never read whole (defect 8).
      origin = await this.deps.assetOrigin.fetch(zone, path, h, {
        inlineMaxBytes: Math.floor(this.deps.config.memoryMaxBytes / 4),
        query,
      });
    } else {
      origin = await this.origin.fetch(zone, path, query, h, {
        inlineMaxBytes: Math.floor(this.deps.config.memoryMaxBytes / 4),
      });
    }
    // The largest object held whole in memory (control GET /health): within the memory tier's bound,
    // except a URL origin's answer of undeclared length (read whole up to EDGE_MAX_OBJECT_BYTES).
    if (!origin.stream && origin.body.length > this.cache.largestWholeRead)
      this.cache.largestWholeRead = origin.body.length;
    this.stats.origin(zone.id, now, origin.stream ? (origin.size ?? 0) : origin.body.length, origin.ms);
    const purged = (this.epochs.get(zone.id) ?? 0) !== epoch;
    const opts = {
      edgeTtl: s.cacheControlMaxAgeOverride,
      staleWhileUpdating: s.useStaleWhileUpdating,
      staleWhileOffline: s.useStaleWhileOffline,
      nowMs: now,
    };
    if (origin.status === 304 && stale && !stale.dead) {
      // Revalidated: the stored body stays; its metadata and freshness are renewed.
      const merged = { ...stale.headers, ...storedHeaders(origin.headers) };
      const f = freshness(stale.status, merged, opts);
      // Beyond EDGE_MAX_OBJECT_BYTES (a limit lowered since it was stored) it is not kept either.
      const tooBig = stale.size > this.deps.config.maxObjectBytes;
      if (purged || bypass || tooBig) {
        // Served to this client once, not kept. An object beyond the memory tier's bound goes from its
        // file in chunks, like a pass-through (issue 23, defect 8): never read whole.
        if (tooBig || this.cache.streams(stale)) {
          const file = await this.cache.open(stale);
          if (tooBig) this.cache.remove(stale);
          if (!file) throw new Error('the cached object was removed while it was revalidated');
          return {
            status: stale.status,
            headers: merged,
            body: EMPTY,
            entry: null,
            revalidated: true,
            stream: file.createReadStream({ highWaterMark: 64 * 1024 }),
            size: stale.size,
          };
        }
        const body = await this.cache.body(stale);
        if (!body) throw new Error('the cached object was removed while it was revalidated');
        return { status: stale.status, headers: merged, body, entry: null, revalidated: true };
      }
      stale.headers = merged;
      stale.fast = undefined;
      stale.storedAt = now;
      stale.ttlMs = f.ttlMs;
      stale.swrMs = f.swrMs;
      stale.sieMs = f.sieMs;
      stale.initialAgeMs = f.initialAgeMs;
      return { status: stale.status, headers: merged, body: Buffer.alloc(0), entry: stale, revalidated: true };
    }
    if (origin.status >= 500) {
      origin.stream?.destroy();
      return { status: origin.status, headers: origin.headers, body: origin.body, entry: null, revalidated: false };
    }
    let body = origin.body;
    const f = freshness(origin.status, origin.headers, opts);
    const stored = storedHeaders(origin.headers);
    const stream = origin.stream;
    const streamSize = origin.size ?? 0;
    if (stream) {
      // Kept on disk when the cache can hold it and it is within EDGE_MAX_OBJECT_BYTES; otherwise passed through.
      const keep =
        f.storable &&
        !purged &&
        !bypass &&
        streamSize <= this.deps.config.maxObjectBytes &&
        streamSize <= this.deps.config.cacheMaxBytes;
      if (!keep)
        return {
          status: origin.status,
          headers: stored,
          body: EMPTY,
          entry: null,
          revalidated: false,
          stream,
          size: streamSize,
        };
    } else if (s.optimizerEnabled && origin.status === 200) {
      const small = await minify(body, stored['content-type'], s);
      if (small) {
        body = small;
        if (stored['etag']) stored['etag'] = `W/${stored['etag'].replace(/^W\//, '')}`;
      }
    }
    if (!f.storable || purged || bypass)
      return { status: origin.status, headers: stored, body, entry: null, revalidated: false };
    const vary = parseVary(origin.headers['vary']);
    // The variant is keyed by the client's headers, as lookups are — not by those sent to the origin
    // (Accept-Encoding is always `identity` there): else a `Vary: Accept-Encoding` object's first copy
    // sat under a key no client asks for, and the next request fetched it again.
    const header = (name: string) => clientHeaders[name];
    let variantKey = variant;
    if (vary.join(',') !== (this.cache.varies.get(base) ?? []).join(',')) {
      this.cache.varies.set(base, vary);
      variantKey = varyKey(vary, header) + (variant.includes('|a=') ? variant.slice(variant.lastIndexOf('|a=')) : '');
    }
    const tags = ['cdn-tag', 'surrogate-key', 'cache-tag']
      .flatMap((name) => (origin.headers[name] ?? '').split(/[,\s]+/))
      .map((t) => t.trim())
      .filter(Boolean);
    const meta = {
      zoneId: zone.id,
      path,
      tags,
      status: origin.status,
      headers: stored,
      size: stream ? streamSize : body.length,
      storedAt: now,
      ttlMs: f.ttlMs,
      swrMs: f.swrMs,
      sieMs: f.sieMs,
      alwaysRevalidate: f.alwaysRevalidate,
      initialAgeMs: f.initialAgeMs,
      etag: stored['etag'],
      lastModified: stored['last-modified'],
    };
    const entry = stream
      ? await this.cache.putStream(base, variantKey, meta, stream)
      : await this.cache.put(base, variantKey, meta, body);
    // A purge that landed while we wrote must win.
    if ((this.epochs.get(zone.id) ?? 0) !== epoch) {
      this.cache.remove(entry);
      return {
        status: origin.status,
        headers: stored,
        body,
        entry: null,
        revalidated: false,
        streamed: stream !== undefined,
      };
    }
    return { status: origin.status, headers: stored, body, entry, revalidated: false, streamed: stream !== undefined };
  }
}

const ACTIVE_TYPES = new Set(['text/html', 'application/xhtml+xml', 'image/svg+xml', 'text/xml', 'application/xml']);

/** Media types a browser may run script in when shown inline: HTML, XHTML, SVG and XML (any `+xml`). */
export function isActiveContent(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return ACTIVE_TYPES.has(type) || type.endsWith('+xml');
}
