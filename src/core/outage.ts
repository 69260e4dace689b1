/**
 * A dependency outage: the database or the blob store cannot answer (connection refused, reset or
 * timed out; a full disk). Not a bug of the request and not the caller's fault: the API answers
 * 503 with `Retry-After` (core/http/error-handler.ts), and job workers retry without spending an
 * attempt beyond their backoff (core/jobs/worker.ts).
 */
export type Dependency = 'database' | 'storage';

/** Seconds a client is asked to wait before sending a request that met an outage again. */
export const OUTAGE_RETRY_AFTER_SECONDS = 5;

export class DependencyUnavailable extends Error {
  readonly dependency: Dependency;
  /** The underlying error's code (ECONNREFUSED, 57P01, …), kept so callers that classify by code still can. */
  readonly code: string | undefined;

  constructor(dependency: Dependency, message: string, options: { cause?: unknown; code?: string } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DependencyUnavailable';
    this.dependency = dependency;
    this.code = options.code ?? codeOf(options.cause);
  }
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Socket-level failures: the peer is not there, went away, or does not answer. */
const NETWORK_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
]);

/** A full or failing disk under the data directory. */
const DISK_CODES: ReadonlySet<string> = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EIO']);

/**
 * Whether a database error means the database cannot answer (rather than that the statement was
 * wrong or lost a race): node-postgres' connection failures and timeouts, PostgreSQL's connection
 * exceptions (08…), shutdowns (57P01–57P03), a cancelled statement (57014: the statement timeout),
 * too many connections (53300); SQLite's full disk (other SQLite I/O errors stay 500s: they may be damage).
 */
export function isDatabaseOutage(error: unknown): boolean {
  if (error instanceof DependencyUnavailable) return error.dependency === 'database';
  const code = codeOf(error);
  if (code !== undefined) {
    if (NETWORK_CODES.has(code)) return true;
    if (code.startsWith('08') && code.length === 5) return true;
    if (code === '57P01' || code === '57P02' || code === '57P03' || code === '57014' || code === '53300') return true;
    if (code === 'SQLITE_FULL') return true;
  }
  const message = (error as { message?: unknown } | undefined)?.message;
  if (typeof message !== 'string') return false;
  // node-postgres reports these without a code.
  return (
    message === 'Query read timeout' ||
    message.startsWith('timeout exceeded when trying to connect') ||
    message.startsWith('Connection terminated') ||
    message === 'Client has encountered a connection error and is not queryable' ||
    message === 'Client was closed and is not queryable' ||
    message.startsWith('connection timeout')
  );
}

/**
 * Whether a blob-store error means the store cannot answer: a network failure or timeout of the
 * S3 client, a 5xx of the S3 server (InternalError, ServiceUnavailable, SlowDown), or a full or
 * failing local disk.
 */
export function isStorageOutage(error: unknown): boolean {
  if (error instanceof DependencyUnavailable) return error.dependency === 'storage';
  const e = error as { code?: unknown; name?: unknown; $metadata?: { httpStatusCode?: number } } | undefined;
  const code = codeOf(error);
  if (code !== undefined && (NETWORK_CODES.has(code) || DISK_CODES.has(code))) return true;
  if (e?.name === 'TimeoutError' || e?.name === 'RequestTimeout' || e?.name === 'RequestTimeoutException') return true;
  const status = e?.$metadata?.httpStatusCode;
  if (typeof status === 'number' && status >= 500) return true;
  // The SDK wraps a refused connection without an HTTP status; its cause carries the socket code.
  const cause = (error as { cause?: unknown } | undefined)?.cause;
  return cause !== undefined && cause !== error && isStorageOutage(cause);
}

/** The outage an error means, or undefined when it is something else. */
export function outageOf(error: unknown): DependencyUnavailable | undefined {
  if (error instanceof DependencyUnavailable) return error;
  if (isDatabaseOutage(error))
    return new DependencyUnavailable('database', 'The database is not answering', { cause: error });
  if (isStorageOutage(error))
    return new DependencyUnavailable('storage', 'The blob storage is not answering', { cause: error });
  return undefined;
}
