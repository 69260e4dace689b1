import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import { fromJson } from '../../../core/db/json.ts';
import type { CdnZonesTable } from '../../../core/db/schema.ts';

/** Everything about a zone beyond name, region and enabled: stored as JSON, read by API and edges alike. */
export interface ZoneSettings {
  url: string;
  enableGeoReplication: boolean;
  originType: 'assets' | 'url';
  originUrl: string | null;
  originHostHeader: string | null;
  hostnames: string[];
  cacheControlMaxAgeOverride: number | null;
  cacheControlPublicMaxAgeOverride: number | null;
  ignoreQueryStrings: boolean;
  enableWebpVary: boolean;
  enableAvifVary: boolean;
  useStaleWhileUpdating: boolean;
  useStaleWhileOffline: boolean;
  allowedReferrers: string[];
  blockedReferrers: string[];
  blockedIPs: string[];
  blockedCountries: string[];
  enableGeoZoneUS: boolean;
  enableGeoZoneEU: boolean;
  enableGeoZoneAsia: boolean;
  enableGeoZoneSA: boolean;
  enableGeoZoneAF: boolean;
  zoneSecurityEnabled: boolean;
  zoneSecurityIncludeHashRemoteIP: boolean;
  zoneSecurityKey: string;
  enableAccessControlOriginHeader: boolean;
  accessControlOriginHeaderExtensions: string[];
  monthlyBandwidthLimit: number;
  requestLimit: number;
  burstSize: number;
  limitRateAfter: number;
  limitRatePerSecond: number;
  optimizerEnabled: boolean;
  optimizerEnableWebP: boolean;
  optimizerEnableAvif: boolean;
  optimizerImageQuality: number;
  optimizerMaxWidth: number;
  optimizerMinifyCSS: boolean;
  optimizerMinifyJavaScript: boolean;
  /** false (the default): HTML, SVG and XML are sent as attachments under `Content-Security-Policy: sandbox` */
  serveActiveContentInline: boolean;
}

export function defaultSettings(): ZoneSettings {
  return {
    url: '',
    enableGeoReplication: false,
    originType: 'url',
    originUrl: null,
    originHostHeader: null,
    hostnames: [],
    cacheControlMaxAgeOverride: null,
    cacheControlPublicMaxAgeOverride: null,
    ignoreQueryStrings: true,
    enableWebpVary: false,
    enableAvifVary: false,
    useStaleWhileUpdating: true,
    useStaleWhileOffline: true,
    allowedReferrers: [],
    blockedReferrers: [],
    blockedIPs: [],
    blockedCountries: [],
    enableGeoZoneUS: true,
    enableGeoZoneEU: true,
    enableGeoZoneAsia: true,
    enableGeoZoneSA: true,
    enableGeoZoneAF: true,
    zoneSecurityEnabled: false,
    zoneSecurityIncludeHashRemoteIP: false,
    zoneSecurityKey: randomBytes(24).toString('base64url'),
    enableAccessControlOriginHeader: false,
    accessControlOriginHeaderExtensions: ['eot', 'ttf', 'woff', 'woff2', 'css', 'js', 'json', 'svg'],
    monthlyBandwidthLimit: 0,
    requestLimit: 0,
    burstSize: 0,
    limitRateAfter: 0,
    limitRatePerSecond: 0,
    optimizerEnabled: false,
    optimizerEnableWebP: true,
    optimizerEnableAvif: true,
    optimizerImageQuality: 85,
    optimizerMaxWidth: 0,
    optimizerMinifyCSS: true,
    optimizerMinifyJavaScript: true,
    serveActiveContentInline: false,
  };
}

export const SETTING_KEYS = Object.keys(defaultSettings()) as (keyof ZoneSettings)[];

/** A zone as edges use it. */
export interface ZoneConfig {
  id: number;
  orgId: string;
  name: string;
  region: string;
  enabled: boolean;
  version: number;
  updatedAt: number;
  settings: ZoneSettings;
}

export function zoneConfigFromRow(row: CdnZonesTable): ZoneConfig {
  return {
    id: Number(row.id),
    orgId: row.org_id,
    name: row.name,
    region: row.region,
    enabled: row.enabled === 1,
    version: row.version,
    updatedAt: row.updated_at,
    settings: { ...defaultSettings(), ...fromJson<Partial<ZoneSettings>>(row.settings, {}) },
  };
}

export const REGION_GEO_ZONE: Record<string, 'US' | 'EU' | 'Asia' | 'SA' | 'AF'> = {
  de: 'EU',
  ny: 'US',
  la: 'US',
  sg: 'Asia',
};

// --- token authentication (signed URLs) ---

/** The longest a signed URL may live: the sign route's `expiresInSeconds` maximum and the edge's bound. */
export const MAX_TOKEN_LIFETIME_SECONDS = 31_536_000;
/** Leeway for clocks of API and edge processes that disagree a little. */
const TOKEN_CLOCK_SKEW_SECONDS = 300;
const EXPIRES = /^[1-9][0-9]{0,10}$/;

/**
 * The bytes a token signs: a version tag, then each field as `<byte length>:<value>`. Length
 * prefixes make the encoding injective: no (path, expires, ip) other than the signed one gives the
 * same bytes, so no digit can move from the path into `expires` (the old `key + path + expires`
 * hash let a token for `/image01` with expires E serve `/image0` with expires `1E`).
 */
function tokenMessage(path: string, expires: number, ip: string | undefined): Buffer {
  const parts = ['tessera-cdn-token-v2', path, String(expires), ip ?? ''];
  return Buffer.concat(
    parts.map((p) => {
      const b = Buffer.from(p, 'utf8');
      return Buffer.concat([Buffer.from(`${b.length}:`), b]);
    }),
  );
}

/**
 * token = base64url(HMAC-SHA-256(zone key, length-prefixed (path, expires, client IP or empty))).
 * `path` is the path inside the zone (what follows the hostname, or /<zone name>), without query.
 */
export function signToken(key: string, path: string, expires: number, ip?: string): string {
  return createHmac('sha256', key)
    .update(tokenMessage(path, expires, ip))
    .digest('base64url');
}

/**
 * Accepts only a token made by signToken for exactly this path, expiry and IP, an `expires` written
 * as a plain decimal number of seconds, not past and not further ahead than the longest lifetime
 * the sign route gives (plus clock skew). Compared in constant time.
 */
export function verifyToken(
  key: string,
  path: string,
  token: string,
  expires: string,
  nowSeconds: number,
  ip?: string,
): boolean {
  if (!EXPIRES.test(expires)) return false;
  const at = Number(expires);
  if (at < nowSeconds || at > nowSeconds + MAX_TOKEN_LIFETIME_SECONDS + TOKEN_CLOCK_SKEW_SECONDS) return false;
  const expected = Buffer.from(signToken(key, path, at, ip));
  const given = Buffer.from(token);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

// --- validation helpers shared by API and edge ---

const HOSTNAME = /^(?=.{1,253}$)(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))*$/;

export function isHostname(value: string): boolean {
  return HOSTNAME.test(value);
}

export function isReferrerPattern(value: string): boolean {
  return isHostname(value.startsWith('*.') ? value.slice(2) : value);
}

export function referrerMatches(pattern: string, host: string): boolean {
  if (pattern.startsWith('*.')) return host.endsWith(pattern.slice(1)) || host === pattern.slice(2);
  return host === pattern;
}

/** An IPv4/IPv6 address or CIDR range. */
export function parseIpRule(value: string): { address: string; bits: number; family: 4 | 6 } | null {
  const [address = '', bitsText] = value.split('/');
  const family = isIP(address);
  if (family === 0) return null;
  const max = family === 4 ? 32 : 128;
  const bits = bitsText === undefined ? max : /^\d{1,3}$/.test(bitsText) ? Number(bitsText) : -1;
  if (bits < 0 || bits > max) return null;
  return { address, bits, family: family as 4 | 6 };
}

function ipToBigInt(address: string, family: 4 | 6): bigint {
  if (family === 4) return address.split('.').reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
  let [head = '', tail = ''] = address.includes('::') ? address.split('::') : [address, ''];
  const v4 = (s: string) => {
    const m = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
    if (!m) return s;
    const n = ipToBigInt(m[1]!, 4);
    return `${s.slice(0, -m[1]!.length)}${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  };
  head = v4(head);
  tail = v4(tail);
  const h = head === '' ? [] : head.split(':');
  const t = tail === '' ? [] : tail.split(':');
  const groups = address.includes('::') ? [...h, ...Array(8 - h.length - t.length).fill('0'), ...t] : h;
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g || '0', 16)), 0n);
}

export interface IpMatcher {
  matches(ip: string): boolean;
}

export function ipMatcher(rules: readonly string[]): IpMatcher {
  const parsed = rules
    .map(parseIpRule)
    .filter((r): r is NonNullable<typeof r> => r !== null)
    .map((r) => {
      const max = r.family === 4 ? 32n : 128n;
      const shift = max - BigInt(r.bits);
      return { family: r.family, shift, prefix: ipToBigInt(r.address, r.family) >> shift };
    });
  return {
    matches(ip: string) {
      if (parsed.length === 0) return false;
      let address = ip;
      if (address.startsWith('::ffff:') && isIP(address.slice(7)) === 4) address = address.slice(7);
      const family = isIP(address);
      if (family === 0) return false;
      const value = ipToBigInt(address, family as 4 | 6);
      return parsed.some((r) => r.family === family && value >> r.shift === r.prefix);
    },
  };
}
