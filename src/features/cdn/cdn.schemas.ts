import { Type, type Static } from 'typebox';
import { MAX_TOKEN_LIFETIME_SECONDS } from './edge-contract/zone-model.ts';

/** Reference §16.1: 5..100 characters. Tessera also routes `/<name>/<path>` at the edge, so the name is URL-safe. */
const Name = Type.String({
  minLength: 5,
  maxLength: 100,
  pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$',
  description:
    '5 to 100 letters, digits, dot, dash or underscore; unique across the installation (edges route /<name>/<path>)',
});
const Region = Type.Union([Type.Literal('de'), Type.Literal('ny'), Type.Literal('la'), Type.Literal('sg')], {
  description: 'Primary region: de, ny, la or sg',
});
const Strings = (description: string, maxItems = 500) =>
  Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems, description });
const Ttl = (description: string) =>
  Type.Unsafe<number | null>({ type: ['integer', 'null'], minimum: 0, maximum: 31_536_000, description });
const Bytes = (description: string) => Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description });

/** Every writable zone field but the name (shared by create and update). All optional. */
const zoneFields = {
  region: Type.Optional(Region),
  enabled: Type.Optional(
    Type.Boolean({ description: 'false: edges answer 403 and publishing is refused (unpublish still works)' }),
  ),
  url: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      description: 'Desired CNAME (e.g. https://cdn.example.com); its host becomes a zone hostname',
    }),
  ),
  enableGeoReplication: Type.Optional(Type.Boolean({ description: 'Replicate to every region' })),
  originType: Type.Optional(
    Type.Union([Type.Literal('assets'), Type.Literal('url')], {
      description: "'assets': this Tessera's asset store (only published assets are served); 'url': originUrl",
    }),
  ),
  originUrl: Type.Optional(
    Type.Unsafe<string | null>({
      type: ['string', 'null'],
      maxLength: 2048,
      description: 'External http(s) origin (public addresses only unless TESSERA_ALLOW_PRIVATE_TARGETS=true)',
    }),
  ),
  originHostHeader: Type.Optional(
    Type.Unsafe<string | null>({
      type: ['string', 'null'],
      maxLength: 255,
      description: 'Host header sent to the origin (default: the origin URL host)',
    }),
  ),
  hostnames: Type.Optional(
    Strings('Hostnames served by this zone (Host header at the edge); unique across the installation', 50),
  ),
  cacheControlMaxAgeOverride: Type.Optional(
    Ttl('Edge TTL in seconds, overriding the origin Cache-Control (null: follow the origin)'),
  ),
  cacheControlPublicMaxAgeOverride: Type.Optional(
    Ttl('Browser TTL in seconds sent to clients (null: pass the origin Cache-Control on)'),
  ),
  ignoreQueryStrings: Type.Optional(
    Type.Boolean({ description: 'true: the query string is not part of the cache key nor sent to the origin' }),
  ),
  enableWebpVary: Type.Optional(
    Type.Boolean({ description: 'Cache separately for clients that accept WebP (origin negotiates)' }),
  ),
  enableAvifVary: Type.Optional(
    Type.Boolean({ description: 'Cache separately for clients that accept AVIF (origin negotiates)' }),
  ),
  serveActiveContentInline: Type.Optional(
    Type.Boolean({
      description:
        "Tessera's own. false (default): HTML, SVG and XML objects are served as attachments with Content-Security-Policy: sandbox, so they cannot run script on the edge's host; true: served inline as the origin sends them (X-Content-Type-Options: nosniff always)",
    }),
  ),
  useStaleWhileUpdating: Type.Optional(
    Type.Boolean({ description: 'Serve a stale object while it is refreshed in the background' }),
  ),
  useStaleWhileOffline: Type.Optional(Type.Boolean({ description: 'Serve a stale object when the origin fails' })),
  allowedReferrers: Type.Optional(Strings('Referrer hosts allowed (*.example.com wildcards); empty: all')),
  blockedReferrers: Type.Optional(Strings('Referrer hosts refused with 403')),
  blockedIPs: Type.Optional(Strings('Client IP addresses or CIDR ranges refused with 403')),
  blockedCountries: Type.Optional(Strings('ISO 3166-1 alpha-2 country codes refused with 403', 250)),
  enableGeoZoneUS: Type.Optional(Type.Boolean()),
  enableGeoZoneEU: Type.Optional(Type.Boolean()),
  enableGeoZoneAsia: Type.Optional(Type.Boolean()),
  enableGeoZoneSA: Type.Optional(Type.Boolean()),
  enableGeoZoneAF: Type.Optional(Type.Boolean()),
  zoneSecurityEnabled: Type.Optional(
    Type.Boolean({ description: 'Token authentication: edges serve only signed URLs (token + expires)' }),
  ),
  zoneSecurityIncludeHashRemoteIP: Type.Optional(
    Type.Boolean({ description: 'Signed URLs are bound to the client IP' }),
  ),
  enableAccessControlOriginHeader: Type.Optional(
    Type.Boolean({ description: 'CORS: send Access-Control-Allow-Origin: * for the listed extensions' }),
  ),
  accessControlOriginHeaderExtensions: Type.Optional(
    Strings('File extensions that get CORS headers (empty: all)', 100),
  ),
  monthlyBandwidthLimit: Type.Optional(
    Bytes('Bytes per calendar month (UTC); further requests are refused with 429. 0: unlimited'),
  ),
  requestLimit: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 1_000_000,
      description: 'Requests per second per client IP (token bucket); 0: unlimited',
    }),
  ),
  burstSize: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 1_000_000,
      description: 'Requests a client IP may make at once above requestLimit',
    }),
  ),
  limitRateAfter: Type.Optional(Bytes('Bytes per connection sent at full speed before limitRatePerSecond applies')),
  limitRatePerSecond: Type.Optional(Bytes('Per-connection speed limit in bytes/s after limitRateAfter; 0: unlimited')),
  optimizerEnabled: Type.Optional(Type.Boolean({ description: 'Image, CSS and JS optimization at the edge' })),
  optimizerEnableWebP: Type.Optional(Type.Boolean()),
  optimizerEnableAvif: Type.Optional(
    Type.Boolean({ description: 'AVIF is made in the background; WebP/original are served meanwhile' }),
  ),
  optimizerImageQuality: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  optimizerMaxWidth: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 5000, description: 'Images wider than this are scaled down; 0: no limit' }),
  ),
  optimizerMinifyCSS: Type.Optional(Type.Boolean()),
  optimizerMinifyJavaScript: Type.Optional(Type.Boolean()),
};

export const ZoneCreateSchema = Type.Object({ name: Name, ...zoneFields });
export type ZoneCreate = Static<typeof ZoneCreateSchema>;
export const ZoneUpdateSchema = Type.Object({ name: Type.Optional(Name), ...zoneFields });
export type ZoneUpdate = Static<typeof ZoneUpdateSchema>;

/** Reference §16.1 POST /cdn/configure: name, region and url are required. */
export const ConfigureSchema = Type.Object({
  ...zoneFields,
  name: Name,
  region: Region,
  url: Type.String({ minLength: 1, maxLength: 255, description: 'Desired CNAME, e.g. https://company-abc-cdn.net' }),
});
/** PATCH /cdn/configure: the same fields, all optional; `id` picks the zone when the organization has several. */
export const ConfigurePatchSchema = Type.Object({
  id: Type.Optional(Type.Integer({ minimum: 1 })),
  ...ZoneUpdateSchema.properties,
});

const StrArr = Type.Array(Type.String());
export const ZoneSchema = Type.Object(
  {
    id: Type.Integer({ description: 'Pull zone id (int64)' }),
    name: Type.String(),
    dateModified: Type.String({ format: 'date-time' }),
    dateCreated: Type.String({ format: 'date-time' }),
    deleted: Type.Boolean(),
    storageUsed: Type.Integer({ description: 'Bytes of the assets published to the zone (asset origin) ' }),
    filesStored: Type.Integer({ description: 'Assets published to the zone' }),
    region: Type.String(),
    replicationRegions: StrArr,
    enableGeoReplication: Type.Boolean(),
    enabled: Type.Boolean(),
    url: Type.String(),
    originType: Type.String(),
    originUrl: Type.Union([Type.String(), Type.Null()]),
    originHostHeader: Type.Union([Type.String(), Type.Null()]),
    hostnames: StrArr,
    edgePathPrefix: Type.String({ description: 'Path prefix that reaches this zone on any edge: /<name>/' }),
    cacheControlMaxAgeOverride: Type.Union([Type.Integer(), Type.Null()]),
    cacheControlPublicMaxAgeOverride: Type.Union([Type.Integer(), Type.Null()]),
    ignoreQueryStrings: Type.Boolean(),
    enableWebpVary: Type.Boolean(),
    enableAvifVary: Type.Boolean(),
    serveActiveContentInline: Type.Boolean(),
    useStaleWhileUpdating: Type.Boolean(),
    useStaleWhileOffline: Type.Boolean(),
    allowedReferrers: StrArr,
    blockedReferrers: StrArr,
    blockedIPs: StrArr,
    blockedCountries: StrArr,
    enableGeoZoneUS: Type.Boolean(),
    enableGeoZoneEU: Type.Boolean(),
    enableGeoZoneAsia: Type.Boolean(),
    enableGeoZoneSA: Type.Boolean(),
    enableGeoZoneAF: Type.Boolean(),
    zoneSecurityEnabled: Type.Boolean(),
    zoneSecurityIncludeHashRemoteIP: Type.Boolean(),
    zoneSecurityKey: Type.String({ description: 'Secret for signing URLs (see docs/cdn.md)' }),
    enableAccessControlOriginHeader: Type.Boolean(),
    accessControlOriginHeaderExtensions: StrArr,
    monthlyBandwidthLimit: Type.Integer(),
    monthlyBandwidthUsed: Type.Integer(),
    requestLimit: Type.Integer(),
    burstSize: Type.Integer(),
    limitRateAfter: Type.Integer(),
    limitRatePerSecond: Type.Integer(),
    optimizerEnabled: Type.Boolean(),
    optimizerEnableWebP: Type.Boolean(),
    optimizerEnableAvif: Type.Boolean(),
    optimizerImageQuality: Type.Integer(),
    optimizerMaxWidth: Type.Integer(),
    optimizerMinifyCSS: Type.Boolean(),
    optimizerMinifyJavaScript: Type.Boolean(),
  },
  { $id: 'CdnPullZone', title: 'CdnPullZone' },
);
export type Zone = Static<typeof ZoneSchema>;

export const ZoneIdParamsSchema = Type.Object({ id: Type.Integer({ minimum: 1, description: 'Pull zone id' }) });
export const ZoneListSchema = Type.Object({ items: Type.Array(Type.Ref('CdnPullZone')), total: Type.Integer() });

export const PublishSchema = Type.Object({
  assets: Type.Array(Type.String({ format: 'uuid' }), {
    minItems: 1,
    maxItems: 5000,
    uniqueItems: true,
    description: 'Asset objectIds',
  }),
  pullZoneId: Type.Optional(
    Type.Integer({ minimum: 1, description: 'The zone (default: the organization’s only asset-origin zone)' }),
  ),
});
export const SuccessSchema = Type.Object({ success: Type.Boolean() });

export const PurgeSchema = Type.Object({
  url: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 4096,
      description: 'One URL (https://<hostname>/path, /<zone name>/path or /path); a trailing * purges the prefix',
    }),
  ),
  prefix: Type.Optional(
    Type.String({ minLength: 1, maxLength: 4096, description: 'Every object whose path starts with this' }),
  ),
  tag: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 1024,
      description: 'Every object whose origin response carried this CDN-Tag / Surrogate-Key / Cache-Tag',
    }),
  ),
  everything: Type.Optional(Type.Boolean({ description: 'Purge the whole zone' })),
});
export type PurgeInput = Static<typeof PurgeSchema>;
export const PurgeResultSchema = Type.Object({
  id: Type.String({ description: 'Purge id' }),
  kind: Type.String(),
  value: Type.String(),
  edges: Type.Integer({ description: 'Edge processes that applied the purge before this response' }),
  unreachableEdges: Type.Integer({
    description: 'Edges that did not answer; they were deregistered and drop their whole cache before serving again',
  }),
});

export const StatsQuerySchema = Type.Object({
  dateFrom: Type.Optional(Type.String({ format: 'date-time', description: 'Start (default: 30 days ago)' })),
  dateTo: Type.Optional(Type.String({ format: 'date-time', description: 'End (default: now)' })),
});
/** Reference §16.2 fields first, then Tessera's. */
export const StatsSchema = Type.Object({
  totalBandwidthUsed: Type.Integer({ description: 'Bytes served to clients' }),
  totalOriginTraffic: Type.Integer({ description: 'Bytes fetched from the origin' }),
  totalRequestsServed: Type.Integer(),
  cacheHitRate: Type.Number({ description: 'Requests served from cache / requests (0..1)' }),
  byteHitRate: Type.Number({ description: '(bytes served − origin bytes) / bytes served, floored at 0 (0..1)' }),
  totalHits: Type.Integer(),
  totalMisses: Type.Integer(),
  originFetches: Type.Integer(),
  averageOriginResponseTime: Type.Number({ description: 'ms' }),
  status2xx: Type.Integer(),
  status3xx: Type.Integer(),
  status4xx: Type.Integer(),
  status5xx: Type.Integer(),
  hourly: Type.Array(
    Type.Object({
      hour: Type.String({ format: 'date-time' }),
      requests: Type.Integer(),
      bytesServed: Type.Integer(),
      bytesFromOrigin: Type.Integer(),
      hits: Type.Integer(),
      misses: Type.Integer(),
      cacheHitRate: Type.Number(),
      byteHitRate: Type.Number(),
      originFetches: Type.Integer(),
      averageOriginResponseTime: Type.Number(),
      status2xx: Type.Integer(),
      status3xx: Type.Integer(),
      status4xx: Type.Integer(),
      status5xx: Type.Integer(),
    }),
  ),
  geoTrafficDistribution: Type.Record(Type.String(), Type.Integer(), {
    description: 'Bytes by client country (ISO code; ZZ unknown)',
  }),
  geoRequestDistribution: Type.Record(Type.String(), Type.Integer(), {
    description: 'Requests by client country (ISO code; ZZ unknown)',
  }),
});
export type Stats = Static<typeof StatsSchema>;

export const SignUrlSchema = Type.Object({
  path: Type.String({
    minLength: 1,
    maxLength: 4096,
    pattern: '^/[^?#]*$',
    description: 'Path inside the zone, starting with / (no query: the token signs the path only)',
  }),
  expiresInSeconds: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_TOKEN_LIFETIME_SECONDS,
      description: 'Lifetime (default 3600); at most one year, and edges refuse an expiry further ahead',
    }),
  ),
  ip: Type.Optional(
    Type.String({ maxLength: 64, description: 'Client IP to bind (when zoneSecurityIncludeHashRemoteIP)' }),
  ),
});
export const SignedUrlSchema = Type.Object({
  path: Type.String(),
  url: Type.String(),
  expires: Type.Integer(),
  token: Type.String(),
});

export const EdgeListSchema = Type.Array(
  Type.Object({
    id: Type.String(),
    region: Type.String(),
    startedAt: Type.String({ format: 'date-time' }),
    lastSeenAt: Type.String({ format: 'date-time' }),
  }),
);
