// SSRF defence for every outbound request to a caller-chosen URL: webhook targets and OAuth token
// URLs (webhooks), CDN origin URLs (checked when a zone is saved by features/cdn, and on every fetch
// by the edge). Shared network code, so it lives in core (research §1.8): refuse internal addresses
// when the endpoint is created (`assertAllowedTarget`) AND when the socket is opened
// (`createGuardedDispatcher`): every DNS answer is checked in the connector's own lookup, so the
// address connected to is the address checked (no rebinding window), IP literals are checked before
// connecting, and the peer address is re-checked after connecting. Redirects are never followed.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction, type Socket } from 'node:net';
import { rootCertificates } from 'node:tls';
import { createRequire } from 'node:module';
import type { Agent, buildConnector } from 'undici';

// undici is loaded when the first dispatcher is made (delivery), not when the routes load: a
// server that only serves the API never pays for it (issue 14: lean start).
const undici = (): typeof import('undici') => createRequire(import.meta.url)('undici');

export type AddressClass =
  | 'public'
  | 'invalid'
  | 'unspecified'
  | 'this_network'
  | 'loopback'
  | 'private'
  | 'cgnat'
  | 'link_local'
  | 'metadata'
  | 'unique_local'
  | 'site_local'
  | 'multicast'
  | 'broadcast'
  | 'benchmark'
  | 'documentation'
  | 'reserved';

type Range4 = readonly [base: number, prefix: number, cls: AddressClass];

const v4 = (a: number, b: number, c: number, d: number) => ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;

// Order matters: the first match wins (metadata and broadcast before their enclosing ranges).
const IPV4_RANGES: readonly Range4[] = [
  [v4(169, 254, 169, 254), 32, 'metadata'],
  [v4(255, 255, 255, 255), 32, 'broadcast'],
  [v4(0, 0, 0, 0), 32, 'unspecified'],
  [v4(0, 0, 0, 0), 8, 'this_network'],
  [v4(10, 0, 0, 0), 8, 'private'],
  [v4(100, 64, 0, 0), 10, 'cgnat'],
  [v4(127, 0, 0, 0), 8, 'loopback'],
  [v4(169, 254, 0, 0), 16, 'link_local'],
  [v4(172, 16, 0, 0), 12, 'private'],
  [v4(192, 0, 0, 0), 24, 'reserved'], // IETF protocol assignments (incl. 192.0.0.192 cloud metadata)
  [v4(192, 0, 2, 0), 24, 'documentation'],
  [v4(192, 88, 99, 0), 24, 'reserved'], // 6to4 relay anycast
  [v4(192, 168, 0, 0), 16, 'private'],
  [v4(198, 18, 0, 0), 15, 'benchmark'],
  [v4(198, 51, 100, 0), 24, 'documentation'],
  [v4(203, 0, 113, 0), 24, 'documentation'],
  [v4(224, 0, 0, 0), 4, 'multicast'],
  [v4(240, 0, 0, 0), 4, 'reserved'],
];

function parseIpv4(ip: string): number | null {
  const parts = ip.split('.');
  if (parts.length !== 4) return null;
  let value = 0;
  for (const part of parts) {
    // Canonical decimal only: "010" is octal to inet_aton but decimal to a naive parser.
    if (!/^(0|[1-9]\d{0,2})$/.test(part)) return null;
    const n = Number(part);
    if (n > 255) return null;
    value = value * 256 + n;
  }
  return value;
}

function classifyIpv4(value: number): AddressClass {
  for (const [base, prefix, cls] of IPV4_RANGES) {
    const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
    if ((value & mask) >>> 0 === base) return cls;
  }
  return 'public';
}

/** Eight 16-bit groups, or null. Accepts '::' compression, an embedded dotted IPv4 tail and a zone id. */
function parseIpv6(input: string): number[] | null {
  let ip = input.startsWith('[') && input.endsWith(']') ? input.slice(1, -1) : input;
  const zone = ip.indexOf('%');
  if (zone !== -1) ip = ip.slice(0, zone);
  if (isIP(ip) !== 6) return null;
  const lastColon = ip.lastIndexOf(':');
  const dotted = ip.slice(lastColon + 1);
  if (dotted.includes('.')) {
    // Rewrite an embedded IPv4 tail as two hex groups so one parser handles both forms.
    const value = parseIpv4(dotted);
    if (value === null) return null;
    ip = `${ip.slice(0, lastColon + 1)}${(value >>> 16).toString(16)}:${(value & 0xffff).toString(16)}`;
  }
  const [head, rest] = ip.includes('::') ? (ip.split('::') as [string, string]) : [ip, null];
  const toGroups = (s: string) => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const left = toGroups(head);
  const right = rest === null ? [] : toGroups(rest);
  const missing = 8 - left.length - right.length;
  if (rest === null ? missing !== 0 : missing < 0) return null;
  const groups = [...left, ...Array<number>(rest === null ? 0 : missing).fill(0), ...right];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

function classifyIpv6(g: number[]): AddressClass {
  const embedded = (hi: number, lo: number) => classifyIpv4(((hi << 16) | lo) >>> 0);
  const zeroUpTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeroUpTo(8)) return 'unspecified';
  if (zeroUpTo(7) && g[7] === 1) return 'loopback';
  if (zeroUpTo(5) && g[5] === 0xffff) return embedded(g[6]!, g[7]!); // IPv4-mapped ::ffff:a.b.c.d
  if (zeroUpTo(4) && g[4] === 0xffff && g[5] === 0) return embedded(g[6]!, g[7]!); // IPv4-translated (SIIT)
  if (zeroUpTo(6)) return 'reserved'; // deprecated IPv4-compatible ::a.b.c.d
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return embedded(g[6]!, g[7]!); // NAT64
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return 'private'; // local-use NAT64 64:ff9b:1::/48
  if (g[0] === 0x2002) return embedded(g[1]!, g[2]!); // 6to4 carries an IPv4 address
  if (g[0] === 0x2001 && g[1] === 0x0db8) return 'documentation';
  if ((g[0]! & 0xfff0) === 0x3ff0) return 'documentation'; // 3fff::/20
  if (g[0] === 0x2001 && g[1]! < 0x200) return 'reserved'; // 2001::/23 incl. Teredo
  if ((g[0]! & 0xfe00) === 0xfc00) return 'unique_local';
  if ((g[0]! & 0xffc0) === 0xfe80) return 'link_local';
  if ((g[0]! & 0xffc0) === 0xfec0) return 'site_local';
  if ((g[0]! & 0xff00) === 0xff00) return 'multicast';
  if ((g[0]! & 0xe000) !== 0x2000) return 'reserved'; // only 2000::/3 is global unicast
  return 'public';
}

/** 'public' for a globally routable unicast address, otherwise why it is not. */
export function classifyAddress(ip: string): AddressClass {
  const value = parseIpv4(ip);
  if (value !== null) return classifyIpv4(value);
  const groups = parseIpv6(ip);
  return groups === null ? 'invalid' : classifyIpv6(groups);
}

export const isPublicAddress = (ip: string): boolean => classifyAddress(ip) === 'public';

export type TargetProblem = 'invalid_url' | 'scheme' | 'credentials' | 'dns' | Exclude<AddressClass, 'public'>;

/** A refused target. `code` lets HTTP-layer code classify it without instanceof across realms. */
export class TargetNotAllowedError extends Error {
  readonly code = 'ERR_WEBHOOK_TARGET_NOT_ALLOWED';
  readonly reason: TargetProblem;
  readonly address: string | undefined;
  constructor(reason: TargetProblem, message: string, address?: string) {
    super(message);
    this.name = 'TargetNotAllowedError';
    this.reason = reason;
    this.address = address;
  }
}

export const isTargetNotAllowed = (err: unknown): err is TargetNotAllowedError =>
  err instanceof TargetNotAllowedError || (err as { code?: unknown } | null)?.code === 'ERR_WEBHOOK_TARGET_NOT_ALLOWED';

/** Resolves every address of a host name (A and AAAA). Injectable for tests. */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true, order: 'verbatim' }, (err, addresses) => (err ? reject(err) : resolve(addresses))),
  );

function refuseAddress(address: string, host: string): TargetNotAllowedError | null {
  const cls = classifyAddress(address);
  if (cls === 'public') return null;
  return new TargetNotAllowedError(cls, `${host} resolves to a non-public address (${cls}: ${address})`, address);
}

const stripBrackets = (host: string) => (host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host);

export interface TargetCheckOptions {
  allowPrivate: boolean;
  resolver?: Resolver;
}

/**
 * Validates a webhook target or token URL: http(s) only, no user:password, and (unless allowPrivate)
 * every address the host resolves to must be public. Throws TargetNotAllowedError; returns the URL.
 * With allowPrivate no DNS query is made (the operator allows any target).
 */
export async function assertAllowedTarget(url: string | URL, options: TargetCheckOptions): Promise<URL> {
  let parsed: URL;
  try {
    parsed = typeof url === 'string' ? new URL(url) : url;
  } catch {
    throw new TargetNotAllowedError('invalid_url', 'not a valid absolute URL');
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    throw new TargetNotAllowedError('scheme', 'only http and https URLs are allowed');
  if (parsed.username !== '' || parsed.password !== '')
    throw new TargetNotAllowedError('credentials', 'URLs must not contain credentials');
  const host = stripBrackets(parsed.hostname);
  if (host === '') throw new TargetNotAllowedError('invalid_url', 'URL has no host');
  if (options.allowPrivate) return parsed;
  if (isIP(host) !== 0) {
    const refused = refuseAddress(host, host);
    if (refused) throw refused;
    return parsed;
  }
  let addresses: LookupAddress[];
  try {
    addresses = await (options.resolver ?? systemResolver)(host);
  } catch (err) {
    throw new TargetNotAllowedError(
      'dns',
      `cannot resolve ${host}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  if (addresses.length === 0) throw new TargetNotAllowedError('dns', `cannot resolve ${host}`);
  for (const { address } of addresses) {
    const refused = refuseAddress(address, host);
    if (refused) throw refused;
  }
  return parsed;
}

export interface GuardedDispatcherOptions {
  allowPrivate: boolean;
  /** TCP+TLS connect timeout; default 5 s. */
  connectTimeoutMs?: number;
  resolver?: Resolver;
  /** Passed to undici's Agent (pool size per origin etc.). */
  connections?: number;
  keepAliveTimeoutMs?: number;
  /** Extra trusted CA certificates (PEM) for HTTPS targets, e.g. an on-premises CA, added to Node's public roots. */
  ca?: string | Buffer | (string | Buffer)[];
}

/** A `net.connect` lookup that resolves all addresses and fails if any is internal. */
function guardedLookup(resolver: Resolver, allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    resolver(hostname).then(
      (all) => {
        const requested = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
        const family = requested === 4 || requested === 6 ? requested : 0;
        const candidates = family === 0 ? all : all.filter((a) => a.family === family);
        if (candidates.length === 0) {
          const err = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });
          return callback(err, '', 0);
        }
        if (!allowPrivate) {
          for (const { address } of all) {
            const refused = refuseAddress(address, hostname);
            if (refused) return callback(refused as unknown as NodeJS.ErrnoException, '', 0);
          }
        }
        if (options.all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, candidates);
        else callback(null, candidates[0]!.address, candidates[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}

/**
 * An undici Agent for deliveries and token fetches. When allowPrivate is false it refuses to
 * connect to non-public addresses whatever the URL said (literal, decimal/hex forms, DNS, rebinding).
 */
export function createGuardedDispatcher(options: GuardedDispatcherOptions): Agent {
  const resolver = options.resolver ?? systemResolver;
  const { Agent, buildConnector } = undici();
  const base = buildConnector({
    timeout: options.connectTimeoutMs ?? 5000,
    lookup: guardedLookup(resolver, options.allowPrivate),
    // Node replaces its CA list when `ca` is given; keep the public roots and add the extra ones.
    ...(options.ca === undefined
      ? {}
      : { ca: [...rootCertificates, ...(Array.isArray(options.ca) ? options.ca : [options.ca])] }),
  } as buildConnector.BuildOptions);
  const connect: buildConnector.connector = (opts, callback) => {
    if (!options.allowPrivate && isIP(opts.hostname) !== 0) {
      const refused = refuseAddress(opts.hostname, opts.hostname);
      if (refused) {
        queueMicrotask(() => callback(refused, null));
        return;
      }
    }
    base(opts, (err, socket) => {
      if (err || !socket) return callback(err ?? new Error('connect failed'), null);
      const peer = (socket as Socket).remoteAddress;
      const refused = options.allowPrivate
        ? null
        : peer === undefined
          ? new TargetNotAllowedError('invalid', 'peer address unknown')
          : refuseAddress(peer, opts.hostname);
      if (refused) {
        socket.destroy();
        return callback(refused, null);
      }
      callback(null, socket);
    });
  };
  return new Agent({
    connect,
    connections: options.connections ?? null,
    keepAliveTimeout: options.keepAliveTimeoutMs ?? 4000,
    // HTTP/1.1 only: receivers are plain web servers, and h2 would multiplex unrelated deliveries.
    allowH2: false,
  });
}
