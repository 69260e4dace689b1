import type { TracingSettings } from './core/tracing.ts';
import { isIP } from 'node:net';
import { accessSync, constants } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';

/**
 * The only reader of process.env. Every setting is parsed once at start; a bad value stops the
 * process with a message naming the variable.
 */
export interface Config {
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  readonly database:
    | { readonly kind: 'sqlite'; readonly file: string }
    | { readonly kind: 'postgres'; readonly url: string };
  /** Time limits of database calls (docs/operations.md › Timeouts): a hung database fails calls, never hangs them. */
  readonly databaseTimeouts: DatabaseTimeouts;
  readonly storage: LocalStorageConfig | S3StorageConfig;
  readonly publicUrl: string;
  readonly adminUsername: string | undefined;
  readonly adminPassword: string | undefined;
  readonly secretKey: string | undefined;
  /**
   * TESSERA_SECRET_KEY_PREVIOUS: other keys this process accepts (verifies and decrypts with) but never
   * hashes or encrypts with: the previous key during a rotation, or the next one staged before it.
   */
  readonly previousSecretKeys: readonly string[];
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  readonly workers: boolean;
  /**
   * The workers' search indexer and audit sealer run on a thread of their own with its own database
   * connection (src/background-thread.ts, decision 0024); TESSERA_BACKGROUND_THREAD=false keeps them in the main thread.
   */
  readonly backgroundThread: boolean;
  /**
   * GET /metrics (docs/operations.md › Metrics) answers only a scraper that sends this as a Bearer token;
   * unset, /metrics is off (404) and no request is counted.
   */
  readonly metricsToken: string | undefined;
  /** `tessera worker` serves /healthz, /readyz and /metrics on this port when set (it has no API listener). */
  readonly metricsPort: number | undefined;
  /** OpenTelemetry traces over OTLP/HTTP (docs/operations.md › Traces); unset, none are made. */
  readonly tracing: TracingSettings | undefined;
  /** /readyz answers 503 when the data directory's disk has less free space than this (docs/operations.md › Health). */
  readonly readyMinFreeBytes: number;
  /** On SIGTERM, how long in-flight requests and job steps get to finish before the process exits (docs/operations.md › Stopping). */
  readonly drainTimeoutMs: number;
  /** Background jobs (docs/operations.md › Jobs): how many run at once per process, and their lease. */
  readonly jobs: { readonly concurrency: number; readonly leaseMs: number };
  readonly allowPrivateTargets: boolean;
  /** How long a webhook message claimed by a process stays leased without a heartbeat (crash recovery time). */
  readonly webhookLeaseMs: number;
  readonly bodyLimitBytes: number;
  /** Timeouts of the API's HTTP server (docs/operations.md › Timeouts). */
  readonly http: HttpTimeouts;
  /**
   * Which X-Forwarded-For hops to believe: false (none: the socket address is the client), a hop
   * count (the n proxies nearest to Tessera), or proxy addresses/CIDRs. Never "everyone".
   */
  readonly trustProxy: false | number | string[];
  /** Auth: how long a just-rotated refresh token may be replayed for the same successor (s). */
  readonly refreshGraceSeconds: number;
  /** Auth: lifetime of impersonation tokens (s, at most the 1-hour access-token lifetime). */
  readonly impersonationTtlSeconds: number;
  // --- assets ---
  /** Uploads above this size use multipart, in parts of this size (reference: 100 MB, fixed). */
  readonly uploadPartSizeBytes: number;
  /** Lifetime of presigned upload URLs (reference: 24 h). */
  readonly uploadUrlTtlSeconds: number;
  /** Images with more pixels than this are refused before decoding. */
  readonly renditionMaxPixels: number;
  /** A rendition's decode and encodes are abandoned after this many seconds (sharp's timeout). */
  readonly renditionTimeoutSeconds: number;
  /** Media conversion (docs/assets.md › Media): ffmpeg, ffprobe and LibreOffice, with time and memory bounds. */
  readonly media: MediaConfig;
  /** Share mails one user may queue per hour, and one organization (0: no limit). */
  readonly shareMailPerUserPerHour: number;
  readonly shareMailPerOrgPerHour: number;
  /** Default quotas of every organization (docs/quotas.md); 0 = no limit. An organization's own setting wins. */
  readonly quotas: QuotaDefaults;
  // --- audit (features/audit) ---
  /** Audit rows older than this many days are pruned daily (0: kept forever); the chain stays verifiable from an anchor. */
  readonly auditRetentionDays: number;
  /** SMTP server for asset shares (smtp://user:pass@host:port); unset = shares answer with links only. */
  readonly smtpUrl: string | undefined;
  readonly mailFrom: string;
  /** Browser origins allowed to call the API (CORS); empty = none, ['*'] = any. */
  readonly corsOrigins: readonly string[];
  /** The CDN edge process (`tessera edge`). */
  readonly edge: EdgeConfig;
}

export interface QuotaDefaults {
  /** TESSERA_QUOTA_STORAGE_BYTES: bytes of stored content (every version, recycle bin included). */
  readonly storageBytes: number;
  /** TESSERA_QUOTA_ASSETS: assets (version chains). */
  readonly assets: number;
  /** TESSERA_QUOTA_UPLOADS_PER_USER_PER_HOUR: uploads (new assets and versions with content) one user may start per hour. */
  readonly uploadsPerUserPerHour: number;
  /** TESSERA_QUOTA_API_REQUESTS_PER_KEY_PER_MINUTE: requests one API key may make per minute. */
  readonly apiRequestsPerKeyPerMinute: number;
}

export interface MediaConfig {
  /** ffmpeg to run (TESSERA_FFMPEG_PATH); unset = the binary @ffmpeg-installer ships with npm. */
  readonly ffmpegPath: string | undefined;
  /** ffprobe to run (TESSERA_FFPROBE_PATH); unset = the binary @ffprobe-installer ships with npm. */
  readonly ffprobePath: string | undefined;
  /** LibreOffice's soffice (TESSERA_SOFFICE_PATH); unset = looked up on PATH; none = office previews are placeholders. */
  readonly sofficePath: string | undefined;
  /** A conversion (one ffmpeg, LibreOffice or PDF run) is killed after this many seconds. */
  readonly timeoutSeconds: number;
  /** Address space of one conversion child process, and heap of the PDF worker thread (MiB). */
  readonly memoryMb: number;
  /** Extracted text kept for search per asset (characters; the rest is cut). */
  readonly textMaxChars: number;
}

/** Milliseconds. */
export interface DatabaseTimeouts {
  /** PostgreSQL: a statement running longer is cancelled (server side), and a query whose answer does not come within this plus 2 s fails (client side, a hung connection). */
  readonly statementMs: number;
  /** PostgreSQL: connecting, or waiting for a free pooled connection. */
  readonly connectMs: number;
  /** PostgreSQL: a session idle inside a transaction this long is ended by the server (its locks released). */
  readonly idleInTransactionMs: number;
  /** SQLite: how long a write waits for another process's write lock. */
  readonly sqliteBusyMs: number;
  /**
   * PostgreSQL: how long cached credentials and views may be served without the database
   * confirming they are current (the revision poll); past it they are refused with 503.
   */
  readonly freshnessMs: number;
}

/** Milliseconds; a slow or silent client is cut off by the first that runs out. */
export interface HttpTimeouts {
  /** From a request's first byte until its headers are complete (408 after). */
  readonly headersTimeoutMs: number;
  /** From a request's first byte until its body is complete (408 after): bounds slow uploads too. */
  readonly requestTimeoutMs: number;
  /** A connection on which nothing was read or written for this long is closed. */
  readonly idleTimeoutMs: number;
  /** How long a kept-alive connection waits for its next request. */
  readonly keepAliveTimeoutMs: number;
}

export interface EdgeConfig {
  readonly port: number;
  readonly host: string;
  /** Region of this edge (de, ny, la, sg): zones that disable its geo zone are not served here. */
  readonly region: string;
  readonly cacheDir: string;
  readonly cacheMaxBytes: number;
  readonly memoryMaxBytes: number;
  readonly maxObjectBytes: number;
  readonly controlHost: string;
  readonly controlPort: number;
  /** URL the API uses to reach this edge's control server (default http://<controlHost>:<port>). */
  readonly controlUrl: string | undefined;
  readonly heartbeatMs: number;
  /** Trust X-Forwarded-For from these proxies (IPs/CIDRs; "loopback" for 127.0.0.1/::1). */
  readonly trustedProxies: readonly string[];
  /** Worker processes (each is an edge with its own cache, sharing the port). */
  readonly workers: number;
  /** EDGE_CPU_AFFINITY: `auto` pins worker i to CPU i mod the CPU count (nginx's `worker_cpu_affinity auto`); `off` leaves placement to the kernel. */
  readonly cpuAffinity: 'off' | 'auto';
  /** An .mmdb country database (default: the bundled CC0 geo-whois-asn-country). */
  readonly geoipDb: string | undefined;
  /** Timeouts of the edge's own HTTP/1.1 server (keep-alive = idle there). */
  readonly http: Omit<HttpTimeouts, 'keepAliveTimeoutMs'>;
}

export interface LocalStorageConfig {
  readonly kind: 'local';
  readonly dir: string;
}

export interface S3StorageConfig {
  readonly kind: 's3';
  readonly bucket: string;
  readonly prefix: string;
  readonly endpoint: string | undefined;
  readonly region: string;
  readonly accessKeyId: string | undefined;
  readonly secretAccessKey: string | undefined;
  readonly forcePathStyle: boolean;
  /** Opening a connection to the store gives up after this long (TESSERA_S3_CONNECT_TIMEOUT_MS). */
  readonly connectTimeoutMs: number;
  /** A request on which the store sends nothing for this long fails (TESSERA_S3_REQUEST_TIMEOUT_MS). */
  readonly requestTimeoutMs: number;
}

export class ConfigError extends Error {
  readonly variable: string;
  constructor(variable: string, problem: string) {
    super(`Invalid configuration: ${variable} ${problem}`);
    this.variable = variable;
  }
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export function parseConfig(env: Env = process.env): Config {
  const port = integer(env, 'PORT', 8080, 0, 65535);
  const host = text(env, 'HOST', '127.0.0.1');
  const dataDir = resolve(text(env, 'TESSERA_DATA_DIR', './data'));
  const publicUrl = parsePublicUrl(env, host, port);
  const logLevel = oneOf(env, 'TESSERA_LOG_LEVEL', LOG_LEVELS, 'info');
  const adminPassword = optional(env, 'TESSERA_ADMIN_PASSWORD');
  if (adminPassword !== undefined && (adminPassword.length < 8 || adminPassword.length > 1024)) {
    throw new ConfigError('TESSERA_ADMIN_PASSWORD', 'must be 8 to 1024 characters long');
  }
  const adminUsername = optional(env, 'TESSERA_ADMIN_USERNAME');
  if (adminUsername !== undefined && !/^[A-Za-z0-9._@+-]{1,50}$/.test(adminUsername)) {
    throw new ConfigError('TESSERA_ADMIN_USERNAME', 'must be 1 to 50 letters, digits or . _ @ + -');
  }
  const secretKey = optional(env, 'TESSERA_SECRET_KEY');
  if (secretKey !== undefined && secretKey.length < 32) {
    throw new ConfigError('TESSERA_SECRET_KEY', 'must be at least 32 characters long');
  }
  const previousSecretKeys = (optional(env, 'TESSERA_SECRET_KEY_PREVIOUS') ?? '')
    .split(',')
    .map((key) => key.trim())
    .filter((key) => key !== '');
  if (previousSecretKeys.some((key) => key.length < 32)) {
    throw new ConfigError(
      'TESSERA_SECRET_KEY_PREVIOUS',
      'each comma-separated key must be at least 32 characters long',
    );
  }
  const metricsToken = optional(env, 'TESSERA_METRICS_TOKEN');
  if (
    metricsToken !== undefined &&
    (metricsToken.length < 16 || metricsToken.length > 512 || /\s/.test(metricsToken))
  ) {
    throw new ConfigError('TESSERA_METRICS_TOKEN', 'must be 16 to 512 characters long, without spaces');
  }
  const metricsPort =
    optional(env, 'TESSERA_METRICS_PORT') === undefined ? undefined : integer(env, 'TESSERA_METRICS_PORT', 0, 0, 65535);
  return Object.freeze({
    port,
    host,
    metricsToken,
    metricsPort,
    tracing: parseTracing(env),
    dataDir,
    database: parseDatabase(env, dataDir),
    databaseTimeouts: {
      statementMs: integer(env, 'TESSERA_DB_STATEMENT_TIMEOUT_MS', 30_000, 100, 3_600_000),
      connectMs: integer(env, 'TESSERA_DB_CONNECT_TIMEOUT_MS', 5000, 100, 600_000),
      idleInTransactionMs: integer(env, 'TESSERA_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS', 60_000, 100, 3_600_000),
      sqliteBusyMs: integer(env, 'TESSERA_SQLITE_BUSY_TIMEOUT_MS', 10_000, 0, 600_000),
      freshnessMs: integer(env, 'TESSERA_DB_FRESHNESS_MS', 1000, 300, 60_000),
    },
    storage: parseStorage(env, dataDir),
    publicUrl,
    adminUsername,
    adminPassword,
    secretKey,
    previousSecretKeys,
    logLevel,
    workers: boolean(env, 'TESSERA_WORKERS', true),
    backgroundThread: boolean(env, 'TESSERA_BACKGROUND_THREAD', true),
    readyMinFreeBytes: integer(env, 'TESSERA_READY_MIN_FREE_BYTES', 104_857_600, 0, Number.MAX_SAFE_INTEGER),
    drainTimeoutMs: integer(env, 'TESSERA_DRAIN_TIMEOUT_MS', 25_000, 0, 3_600_000),
    jobs: {
      concurrency: integer(env, 'TESSERA_JOB_CONCURRENCY', 4, 1, 256),
      leaseMs: integer(env, 'TESSERA_JOB_LEASE_MS', 60_000, 1000, 3_600_000),
    },
    allowPrivateTargets: boolean(env, 'TESSERA_ALLOW_PRIVATE_TARGETS', false),
    webhookLeaseMs: integer(env, 'TESSERA_WEBHOOK_LEASE_MS', 20_000, 1000, 600_000),
    bodyLimitBytes: integer(env, 'TESSERA_BODY_LIMIT_BYTES', 1_048_576, 1024, 1_073_741_824),
    http: parseHttpTimeouts(env),
    trustProxy: parseTrustProxy(env),
    refreshGraceSeconds: integer(env, 'TESSERA_REFRESH_GRACE_SECONDS', 10, 0, 60),
    impersonationTtlSeconds: integer(env, 'TESSERA_IMPERSONATION_TTL_SECONDS', 3600, 60, 3600),
    uploadPartSizeBytes: integer(env, 'TESSERA_UPLOAD_PART_SIZE', 104_857_600, 5_242_880, 5_368_709_120),
    uploadUrlTtlSeconds: integer(env, 'TESSERA_UPLOAD_URL_TTL_SECONDS', 86_400, 60, 604_800),
    renditionMaxPixels: integer(env, 'TESSERA_RENDITION_MAX_PIXELS', 268_402_689, 1, 2_000_000_000),
    renditionTimeoutSeconds: integer(env, 'TESSERA_RENDITION_TIMEOUT_SECONDS', 30, 1, 3600),
    media: {
      ffmpegPath: optional(env, 'TESSERA_FFMPEG_PATH'),
      ffprobePath: optional(env, 'TESSERA_FFPROBE_PATH'),
      sofficePath: optional(env, 'TESSERA_SOFFICE_PATH') ?? onPath(env, ['soffice', 'libreoffice']),
      timeoutSeconds: integer(env, 'TESSERA_MEDIA_TIMEOUT_SECONDS', 600, 1, 86_400),
      memoryMb: integer(env, 'TESSERA_MEDIA_MEMORY_MB', 2048, 64, 65_536),
      textMaxChars: integer(env, 'TESSERA_EXTRACTED_TEXT_MAX_CHARS', 1_000_000, 0, 100_000_000),
    },
    shareMailPerUserPerHour: integer(env, 'TESSERA_SHARE_MAIL_PER_USER_PER_HOUR', 200, 0, 1_000_000),
    shareMailPerOrgPerHour: integer(env, 'TESSERA_SHARE_MAIL_PER_ORG_PER_HOUR', 1000, 0, 10_000_000),
    quotas: {
      storageBytes: integer(env, 'TESSERA_QUOTA_STORAGE_BYTES', 0, 0, Number.MAX_SAFE_INTEGER),
      assets: integer(env, 'TESSERA_QUOTA_ASSETS', 0, 0, 1_000_000_000_000),
      uploadsPerUserPerHour: integer(env, 'TESSERA_QUOTA_UPLOADS_PER_USER_PER_HOUR', 0, 0, 1_000_000_000),
      apiRequestsPerKeyPerMinute: integer(env, 'TESSERA_QUOTA_API_REQUESTS_PER_KEY_PER_MINUTE', 0, 0, 1_000_000_000),
    },
    auditRetentionDays: integer(env, 'TESSERA_AUDIT_RETENTION_DAYS', 0, 0, 36_500),
    smtpUrl: parseSmtpUrl(env),
    mailFrom: text(env, 'TESSERA_MAIL_FROM', 'Tessera <no-reply@tessera.invalid>'),
    corsOrigins: parseCorsOrigins(env),
    edge: parseEdge(env, dataDir),
  });
}

/** `TESSERA_CORS_ORIGINS`: comma- or space-separated origins (`https://app.example.com`), or `*`. */
function parseCorsOrigins(env: Env): readonly string[] {
  const value = optional(env, 'TESSERA_CORS_ORIGINS');
  if (value === undefined) return Object.freeze([]);
  const origins = value.split(/[\s,]+/).filter(Boolean);
  if (origins.includes('*')) {
    if (origins.length > 1) throw new ConfigError('TESSERA_CORS_ORIGINS', 'is either * or a list of origins, not both');
    return Object.freeze(['*']);
  }
  for (const origin of origins) {
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      throw new ConfigError(
        'TESSERA_CORS_ORIGINS',
        `has "${origin}", which is not an origin like https://app.example.com`,
      );
    }
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== origin.replace(/\/$/, '')) {
      throw new ConfigError(
        'TESSERA_CORS_ORIGINS',
        `has "${origin}", which is not an origin like https://app.example.com (scheme, host and port only)`,
      );
    }
  }
  return Object.freeze(origins.map((o) => o.replace(/\/$/, '')));
}

function parseDatabase(env: Env, dataDir: string): Config['database'] {
  const url = optional(env, 'DATABASE_URL');
  if (url === undefined) return { kind: 'sqlite', file: resolve(dataDir, 'tessera.sqlite') };
  if (/^postgres(ql)?:\/\//.test(url)) {
    try {
      new URL(url);
    } catch {
      throw new ConfigError('DATABASE_URL', 'is not a valid postgres:// URL');
    }
    return { kind: 'postgres', url };
  }
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length).replace(/^\/\//, '');
    if (file === '') throw new ConfigError('DATABASE_URL', 'names no SQLite file (use sqlite:/path/to/file.sqlite)');
    return { kind: 'sqlite', file: file === ':memory:' ? file : resolve(file) };
  }
  throw new ConfigError('DATABASE_URL', 'must start with postgres://, postgresql:// or sqlite:');
}

/** A storage setting given another way than TESSERA_STORAGE (`tessera migrate-to-postgres --storage`), same syntax and credentials. */
export function parseStorageSetting(value: string, dataDir: string, env: Env = process.env): Config['storage'] {
  return parseStorage({ ...env, TESSERA_STORAGE: value }, dataDir);
}

function parseStorage(env: Env, dataDir: string): Config['storage'] {
  const value = optional(env, 'TESSERA_STORAGE');
  if (value === undefined) return { kind: 'local', dir: resolve(dataDir, 'blobs') };
  if (value.startsWith('file:')) {
    const dir = value.slice('file:'.length).replace(/^\/\//, '');
    if (dir === '') throw new ConfigError('TESSERA_STORAGE', 'names no directory (use file:/path/to/dir)');
    return { kind: 'local', dir: resolve(dir) };
  }
  if (!value.startsWith('s3://'))
    throw new ConfigError('TESSERA_STORAGE', 'must be s3://bucket?endpoint=…&region=… or file:/dir');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError('TESSERA_STORAGE', 'is not a valid s3:// URL');
  }
  const bucket = url.hostname;
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket))
    throw new ConfigError('TESSERA_STORAGE', 'names an invalid S3 bucket');
  const endpoint = url.searchParams.get('endpoint') ?? undefined;
  if (endpoint !== undefined) {
    try {
      new URL(endpoint);
    } catch {
      throw new ConfigError('TESSERA_STORAGE', 'has an endpoint that is not a URL');
    }
  }
  return {
    kind: 's3',
    bucket,
    prefix: url.pathname.replace(/^\/+/, ''),
    endpoint,
    region: url.searchParams.get('region') ?? 'us-east-1',
    accessKeyId: optional(env, 'AWS_ACCESS_KEY_ID'),
    secretAccessKey: optional(env, 'AWS_SECRET_ACCESS_KEY'),
    forcePathStyle: url.searchParams.get('forcePathStyle') !== 'false',
    connectTimeoutMs: integer(env, 'TESSERA_S3_CONNECT_TIMEOUT_MS', 5000, 100, 600_000),
    requestTimeoutMs: integer(env, 'TESSERA_S3_REQUEST_TIMEOUT_MS', 30_000, 100, 3_600_000),
  };
}

function parseSmtpUrl(env: Env): string | undefined {
  const value = optional(env, 'TESSERA_SMTP_URL');
  if (value === undefined) return undefined;
  if (!/^smtps?:\/\//.test(value)) throw new ConfigError('TESSERA_SMTP_URL', 'must start with smtp:// or smtps://');
  try {
    new URL(value);
  } catch {
    throw new ConfigError('TESSERA_SMTP_URL', 'is not a valid URL');
  }
  return value;
}

function parsePublicUrl(env: Env, host: string, port: number): string {
  const value = optional(env, 'TESSERA_PUBLIC_URL');
  if (value === undefined) {
    const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
    return `http://${shown}:${port}`;
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError('TESSERA_PUBLIC_URL', 'is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ConfigError('TESSERA_PUBLIC_URL', 'must be an http or https URL');
  return value.replace(/\/+$/, '');
}

/** The first of `names` that is an executable file in a directory of PATH. */
function onPath(env: Env, names: readonly string[]): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter).filter(Boolean)) {
    for (const name of names) {
      try {
        accessSync(join(dir, name), constants.X_OK);
        return join(dir, name);
      } catch {
        // not in this directory
      }
    }
  }
  return undefined;
}

/**
 * The standard OpenTelemetry settings: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the full URL) or
 * OTEL_EXPORTER_OTLP_ENDPOINT (a base, to which /v1/traces is added), OTEL_EXPORTER_OTLP_HEADERS,
 * OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER_ARG (the share of new traces kept) and OTEL_SDK_DISABLED.
 */
function parseTracing(env: Env): TracingSettings | undefined {
  if (optional(env, 'OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return undefined;
  const full = optional(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const base = optional(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  if (full === undefined && base === undefined) return undefined;
  const name = full !== undefined ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT';
  const endpoint = full ?? `${base!.replace(/\/+$/, '')}/v1/traces`;
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new ConfigError(name, `must be an http(s) URL, got "${full ?? base}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ConfigError(name, `must be an http(s) URL, got "${full ?? base}"`);
  const headers: Record<string, string> = Object.create(null);
  for (const pair of (optional(env, 'OTEL_EXPORTER_OTLP_HEADERS') ?? '').split(',')) {
    if (pair.trim() === '') continue;
    const at = pair.indexOf('=');
    if (at <= 0) throw new ConfigError('OTEL_EXPORTER_OTLP_HEADERS', 'must be key=value pairs separated by commas');
    headers[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim());
  }
  const ratioText = optional(env, 'OTEL_TRACES_SAMPLER_ARG');
  const sampleRatio = ratioText === undefined ? 1 : Number(ratioText);
  if (!Number.isFinite(sampleRatio) || sampleRatio < 0 || sampleRatio > 1)
    throw new ConfigError('OTEL_TRACES_SAMPLER_ARG', `must be a number from 0 to 1, got "${ratioText}"`);
  return Object.freeze({
    endpoint: url.href,
    serviceName: optional(env, 'OTEL_SERVICE_NAME') ?? 'tessera',
    headers: Object.freeze(headers),
    sampleRatio,
  });
}

function optional(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function text(env: Env, name: string, fallback: string): string {
  return optional(env, name) ?? fallback;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const value = optional(env, name);
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value)) throw new ConfigError(name, `must be a whole number, got "${value}"`);
  const n = Number(value);
  if (n < min || n > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${n}`);
  return n;
}

const PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * TESSERA_TRUST_PROXY: a hop count (1–10) or a comma-separated list of proxy addresses, CIDRs
 * and the names loopback, linklocal, uniquelocal. `true` is refused: it would believe any
 * client-sent X-Forwarded-For, so per-IP throttles and audit IPs could be spoofed.
 */
function parseTrustProxy(env: Env): Config['trustProxy'] {
  const name = 'TESSERA_TRUST_PROXY';
  const value = optional(env, name)?.trim();
  if (value === undefined || value === '' || /^(false|0|no|off)$/i.test(value)) return false;
  if (/^(true|yes|on)$/i.test(value)) {
    throw new ConfigError(
      name,
      'must name whom to trust, not "true" (that would believe any client\'s X-Forwarded-For): give the number of proxies in front of Tessera (e.g. 1) or their addresses/CIDRs (e.g. 10.0.0.0/8,loopback)',
    );
  }
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops < 1 || hops > 10)
      throw new ConfigError(name, `must be a hop count between 1 and 10, or proxy addresses/CIDRs, got ${hops}`);
    return hops;
  }
  const entries = value
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  for (const entry of entries) {
    if (PROXY_NAMES.includes(entry)) continue;
    const [address, prefix, ...rest] = entry.split('/');
    const family = isIP(address ?? '');
    const max = family === 4 ? 32 : 128;
    const prefixOk = prefix === undefined || (/^\d+$/.test(prefix) && Number(prefix) <= max);
    if (family === 0 || !prefixOk || rest.length > 0) {
      throw new ConfigError(
        name,
        `"${entry}" is not an IP address, a CIDR or one of ${PROXY_NAMES.join(', ')} (or give a hop count)`,
      );
    }
  }
  return entries;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const value = optional(env, name);
  if (value === undefined) return fallback;
  if (/^(true|1|yes|on)$/i.test(value)) return true;
  if (/^(false|0|no|off)$/i.test(value)) return false;
  throw new ConfigError(name, `must be true or false, got "${value}"`);
}

function oneOf<T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const value = optional(env, name);
  if (value === undefined) return fallback;
  if (!(values as readonly string[]).includes(value))
    throw new ConfigError(name, `must be one of ${values.join(', ')}, got "${value}"`);
  return value as T;
}

function parseEdge(env: Env, dataDir: string): EdgeConfig {
  const port = integer(env, 'EDGE_PORT', 8081, 0, 65535);
  const controlHost = text(env, 'EDGE_CONTROL_HOST', '127.0.0.1');
  const controlUrl = optional(env, 'EDGE_CONTROL_URL');
  if (controlUrl !== undefined && !/^https?:\/\/[^/]+$/.test(controlUrl.replace(/\/+$/, '')))
    throw new ConfigError('EDGE_CONTROL_URL', 'must be http(s)://host:port');
  const workers = integer(env, 'EDGE_WORKERS', 1, 1, 64);
  if (controlUrl !== undefined && workers > 1)
    throw new ConfigError(
      'EDGE_CONTROL_URL',
      'names one control server, but EDGE_WORKERS > 1 runs one per worker: leave it unset or run one process per edge',
    );
  const proxies = (optional(env, 'EDGE_TRUSTED_PROXIES') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return {
    port,
    host: text(env, 'EDGE_HOST', '0.0.0.0'),
    region: oneOf(env, 'EDGE_REGION', ['de', 'ny', 'la', 'sg'] as const, 'de'),
    cacheDir: resolve(text(env, 'EDGE_CACHE_DIR', resolve(dataDir, 'edge-cache'))),
    cacheMaxBytes: integer(env, 'EDGE_CACHE_MAX_BYTES', 1_073_741_824, 1_048_576, Number.MAX_SAFE_INTEGER),
    memoryMaxBytes: integer(env, 'EDGE_MEMORY_MAX_BYTES', 268_435_456, 0, Number.MAX_SAFE_INTEGER),
    maxObjectBytes: integer(env, 'EDGE_MAX_OBJECT_BYTES', 67_108_864, 1024, 4_294_967_296),
    controlHost,
    controlPort: integer(env, 'EDGE_CONTROL_PORT', 0, 0, 65535),
    controlUrl: controlUrl?.replace(/\/+$/, ''),
    heartbeatMs: integer(env, 'EDGE_HEARTBEAT_MS', 1000, 50, 60_000),
    trustedProxies: proxies,
    workers,
    cpuAffinity: oneOf(env, 'EDGE_CPU_AFFINITY', ['off', 'auto'] as const, 'off'),
    geoipDb: optional(env, 'EDGE_GEOIP_DB'),
    http: parseEdgeHttpTimeouts(env),
  };
}

const DAY_MS = 86_400_000;

function parseHttpTimeouts(env: Env): HttpTimeouts {
  const headersTimeoutMs = integer(env, 'TESSERA_HEADERS_TIMEOUT_MS', 20_000, 100, 600_000);
  const requestTimeoutMs = integer(env, 'TESSERA_REQUEST_TIMEOUT_MS', 300_000, 100, DAY_MS);
  if (headersTimeoutMs > requestTimeoutMs)
    throw new ConfigError(
      'TESSERA_HEADERS_TIMEOUT_MS',
      `must not exceed TESSERA_REQUEST_TIMEOUT_MS (${requestTimeoutMs})`,
    );
  return {
    headersTimeoutMs,
    requestTimeoutMs,
    idleTimeoutMs: integer(env, 'TESSERA_IDLE_TIMEOUT_MS', 60_000, 100, DAY_MS),
    keepAliveTimeoutMs: integer(env, 'TESSERA_KEEP_ALIVE_TIMEOUT_MS', 72_000, 100, DAY_MS),
  };
}

function parseEdgeHttpTimeouts(env: Env): EdgeConfig['http'] {
  const headersTimeoutMs = integer(env, 'EDGE_HEADERS_TIMEOUT_MS', 20_000, 100, 600_000);
  const requestTimeoutMs = integer(env, 'EDGE_REQUEST_TIMEOUT_MS', 60_000, 100, DAY_MS);
  if (headersTimeoutMs > requestTimeoutMs)
    throw new ConfigError('EDGE_HEADERS_TIMEOUT_MS', `must not exceed EDGE_REQUEST_TIMEOUT_MS (${requestTimeoutMs})`);
  return {
    headersTimeoutMs,
    requestTimeoutMs,
    idleTimeoutMs: integer(env, 'EDGE_IDLE_TIMEOUT_MS', 65_000, 100, DAY_MS),
  };
}
