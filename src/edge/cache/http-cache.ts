/**
 * RFC 9111 (shared cache) decisions, kept pure so they are unit-tested: storability, freshness
 * lifetime, stale windows, validators, Vary and Range.
 */
import { bag } from '../../core/lookup.ts';

export type Directives = Map<string, string | true>;

export function parseCacheControl(value: string | undefined): Directives {
  const out: Directives = new Map();
  if (!value) return out;
  for (const part of value.split(',')) {
    const eq = part.indexOf('=');
    const name = (eq < 0 ? part : part.slice(0, eq)).trim().toLowerCase();
    if (!name) continue;
    out.set(
      name,
      eq < 0
        ? true
        : part
            .slice(eq + 1)
            .trim()
            .replace(/^"|"$/g, ''),
    );
  }
  return out;
}

function seconds(d: Directives, name: string): number | undefined {
  const v = d.get(name);
  if (typeof v !== 'string' || !/^\d+$/.test(v)) return undefined;
  return Number(v);
}

/** Statuses a shared cache may store (heuristically cacheable, RFC 9110 §15.1, plus 308). */
const CACHEABLE_STATUS = new Set([200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501]);

export interface Freshness {
  storable: boolean;
  /** Freshness lifetime in ms. */
  ttlMs: number;
  /** Serve stale while revalidating for this long after expiry (ms). */
  swrMs: number;
  /** Serve stale when the origin fails for this long after expiry (ms). */
  sieMs: number;
  /** no-cache: stored, but revalidated before every use. */
  alwaysRevalidate: boolean;
  /** Origin Age header, ms. */
  initialAgeMs: number;
  reason: string;
}

export interface FreshnessOptions {
  /** Zone edge TTL override in seconds (null: follow the origin). */
  edgeTtl: number | null;
  staleWhileUpdating: boolean;
  staleWhileOffline: boolean;
  nowMs: number;
}

const DAY = 86_400_000;

export function freshness(status: number, headers: Record<string, string>, opts: FreshnessOptions): Freshness {
  const cc = parseCacheControl(headers['cache-control']);
  const no = (reason: string): Freshness => ({
    storable: false,
    ttlMs: 0,
    swrMs: 0,
    sieMs: 0,
    alwaysRevalidate: false,
    initialAgeMs: 0,
    reason,
  });
  if (!CACHEABLE_STATUS.has(status)) return no(`status ${status}`);
  if (cc.has('no-store')) return no('no-store');
  if (cc.has('private')) return no('private');
  if (headers['set-cookie'] !== undefined) return no('set-cookie');
  if ((headers['vary'] ?? '').split(',').some((v) => v.trim() === '*')) return no('vary *');
  const age = Number(headers['age']);
  const initialAgeMs = Number.isFinite(age) && age > 0 ? age * 1000 : 0;
  let ttlMs: number | undefined;
  let reason = '';
  if (opts.edgeTtl !== null) {
    ttlMs = opts.edgeTtl * 1000;
    reason = 'zone edge TTL';
  } else if (seconds(cc, 's-maxage') !== undefined) {
    ttlMs = seconds(cc, 's-maxage')! * 1000;
    reason = 's-maxage';
  } else if (seconds(cc, 'max-age') !== undefined) {
    ttlMs = seconds(cc, 'max-age')! * 1000;
    reason = 'max-age';
  } else if (headers['expires'] !== undefined) {
    const expires = Date.parse(headers['expires']);
    const date = Date.parse(headers['date'] ?? '') || opts.nowMs;
    ttlMs = Number.isNaN(expires) ? 0 : Math.max(0, expires - date);
    reason = 'expires';
  } else if (headers['last-modified'] !== undefined) {
    const lm = Date.parse(headers['last-modified']);
    const date = Date.parse(headers['date'] ?? '') || opts.nowMs;
    ttlMs = Number.isNaN(lm) ? 0 : Math.min(DAY, Math.max(0, (date - lm) / 10));
    reason = 'heuristic (10% of age since Last-Modified)';
  }
  const hasValidator = headers['etag'] !== undefined || headers['last-modified'] !== undefined;
  if (ttlMs === undefined) {
    if (!hasValidator) return no('no freshness information and no validator');
    ttlMs = 0;
    reason = 'validator only';
  }
  const mustRevalidate = cc.has('must-revalidate') || cc.has('proxy-revalidate') || cc.has('s-maxage');
  const swr = seconds(cc, 'stale-while-revalidate');
  const sie = seconds(cc, 'stale-if-error');
  return {
    storable: true,
    ttlMs,
    swrMs: mustRevalidate && swr === undefined ? 0 : swr !== undefined ? swr * 1000 : opts.staleWhileUpdating ? DAY : 0,
    sieMs:
      mustRevalidate && sie === undefined ? 0 : sie !== undefined ? sie * 1000 : opts.staleWhileOffline ? 7 * DAY : 0,
    alwaysRevalidate: cc.has('no-cache') && opts.edgeTtl === null,
    initialAgeMs,
    reason,
  };
}

/** Weak comparison (RFC 9110 §8.8.3.2) of an If-None-Match list against an ETag. */
export function etagMatches(ifNoneMatch: string, etag: string | undefined): boolean {
  if (!etag) return false;
  if (ifNoneMatch.trim() === '*') return true;
  const bare = etag.replace(/^W\//, '');
  return ifNoneMatch.split(',').some((t) => t.trim().replace(/^W\//, '') === bare);
}

/** Whether a client's conditional request is satisfied by the stored validators (→ 304). */
export function notModified(
  req: { ifNoneMatch?: string; ifModifiedSince?: string },
  etag: string | undefined,
  lastModified: string | undefined,
): boolean {
  if (req.ifNoneMatch !== undefined) return etagMatches(req.ifNoneMatch, etag);
  if (req.ifModifiedSince !== undefined && lastModified !== undefined) {
    const since = Date.parse(req.ifModifiedSince);
    const lm = Date.parse(lastModified);
    return !Number.isNaN(since) && !Number.isNaN(lm) && lm <= since;
  }
  return false;
}

export type RangeResult =
  | { kind: 'full' }
  | { kind: 'partial'; start: number; end: number }
  | { kind: 'unsatisfiable' };

/** One byte range (bytes=a-b, a-, -n); several ranges are answered with the whole body (allowed by RFC 9110). */
export function parseRange(header: string | undefined, size: number): RangeResult {
  if (!header) return { kind: 'full' };
  const m = /^bytes=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!m) return { kind: 'full' };
  const [, a = '', b = ''] = m;
  if (a === '' && b === '') return { kind: 'full' };
  let start: number;
  let end: number;
  if (a === '') {
    const n = Number(b);
    if (n === 0) return { kind: 'unsatisfiable' };
    start = Math.max(0, size - n);
    end = size - 1;
  } else {
    start = Number(a);
    end = b === '' ? size - 1 : Math.min(Number(b), size - 1);
    if (b !== '' && Number(b) < start) return { kind: 'full' };
  }
  if (start >= size || size === 0) return { kind: 'unsatisfiable' };
  return { kind: 'partial', start, end };
}

/** The request-header values a stored response varies on, as one key part. */
export function varyKey(vary: readonly string[], header: (name: string) => string | undefined): string {
  if (vary.length === 0) return '';
  return vary.map((name) => `${name}=${(header(name) ?? '').trim().replace(/\s+/g, ' ')}`).join('\n');
}

export function parseVary(value: string | undefined): string[] {
  if (!value) return [];
  return [
    ...new Set(
      value
        .split(',')
        .map((v) => v.trim().toLowerCase())
        .filter(Boolean),
    ),
  ].sort();
}

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'set-cookie',
  'content-length',
  'date',
  'age',
  'alt-svc',
  'server',
  'strict-transport-security',
]);

/** Origin response headers worth storing and passing on. */
export function storedHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out = bag<string>(); // the origin's header names: no prototype for a `vary` name to reach
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (value === undefined || HOP_BY_HOP.has(lower)) continue;
    out[lower] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}
