/** The one catalog of error codes and the HTTP status each one means. */
export const ERROR_STATUS = {
  bad_request: 400,
  validation_failed: 400,
  invalid_json: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  gone: 410,
  payload_too_large: 413,
  uri_too_long: 414,
  unsupported_media_type: 415,
  unprocessable: 422,
  rate_limited: 429,
  headers_too_large: 431,
  internal: 500,
  service_unavailable: 503,
  /** A download refused because the asset's usage right expired or has not started (docs/usage-rights.md). */
  rights_expired: 403,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorDetail {
  /** The field at fault, as a JSON path into the request part (`body.name`, `query.maxSize`). */
  field: string;
  message: string;
}

/** Which quota or limit refused a request (docs/quotas.md), in the error body as `quota`. */
export interface QuotaDetail {
  /** storageBytes, assets, uploadsPerUserPerHour, shareMailPerHour, shareMailPerUserPerHour, apiRequestsPerKeyPerMinute */
  name: string;
  limit: number;
  /** Current use: bytes or assets held, or requests/uploads/mails counted in the current window. */
  used: number;
  /** What this request asked for on top (bytes, assets, mails), when known. */
  requested?: number;
}

export interface AppErrorOptions {
  details?: ErrorDetail[];
  quota?: QuotaDetail;
  headers?: Record<string, string>;
  cause?: unknown;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: ErrorDetail[] | undefined;
  readonly headers: Record<string, string> | undefined;
  readonly quota: QuotaDetail | undefined;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.details = options.details;
    this.headers = options.headers;
    this.quota = options.quota;
  }
}

/** 400 naming the field and the problem. */
export function invalidField(field: string, message: string): AppError {
  return new AppError('validation_failed', `${field}: ${message}`, { details: [{ field, message }] });
}

/** 404 for anything missing or not visible to the caller: the two are indistinguishable. */
export function notFound(what: string): AppError {
  return new AppError('not_found', `${what} not found`);
}

/** The credentials Tessera accepts, named in every 401 of the authentication check. */
export const ACCEPTED_CREDENTIALS =
  'send a token in the AccessToken header or in Authorization: Bearer <token>, or an API key in X-API-Key';

export function unauthorized(message = `Unauthorized: ${ACCEPTED_CREDENTIALS}`): AppError {
  return new AppError('unauthorized', message);
}

/** 401 for a genuine token past its `exp`: the message and the RFC 6750 challenge say so, so clients know to refresh. */
export function tokenExpired(): AppError {
  return new AppError('unauthorized', 'The access token has expired; refresh it or sign in again', {
    headers: {
      'www-authenticate': 'Bearer realm="tessera", error="invalid_token", error_description="The access token expired"',
    },
  });
}

export function forbidden(message = 'Forbidden'): AppError {
  return new AppError('forbidden', message);
}

export function conflict(message: string, field?: string): AppError {
  return new AppError('conflict', message, field ? { details: [{ field, message }] } : {});
}

export function tooManyRequests(
  retryAfterSeconds: number,
  message = 'Too many requests',
  quota?: QuotaDetail,
): AppError {
  return new AppError('rate_limited', message, {
    headers: { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) },
    ...(quota ? { quota } : {}),
  });
}
