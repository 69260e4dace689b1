import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseBusy, isLostRace, isUniqueViolation } from '../db/connect.ts';
import { OUTAGE_RETRY_AFTER_SECONDS, outageOf } from '../outage.ts';
import { AppError, ERROR_STATUS, type ErrorCode, type ErrorDetail } from './errors.ts';

const CONTEXT_NAMES: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' };

const FASTIFY_CODES: Record<string, [ErrorCode, string]> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: ['unsupported_media_type', 'Unsupported Content-Type: send application/json'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: ['bad_request', 'Content-Length does not match the body'],
  FST_ERR_CTP_BODY_TOO_LARGE: ['payload_too_large', 'Request body is too large'],
  FST_ERR_CTP_EMPTY_JSON_BODY: ['invalid_json', 'Body is empty but Content-Type is application/json'],
  FST_ERR_CTP_INVALID_JSON_BODY: ['invalid_json', 'Body is not valid JSON'],
  FST_ERR_CTP_EMPTY_TYPE: ['unsupported_media_type', 'Content-Type header is empty'],
  FST_ERR_CTP_INVALID_TYPE: ['unsupported_media_type', 'Content-Type is invalid'],
  FST_ERR_BAD_URL: ['bad_request', 'The URL is malformed'],
  FST_ERR_ASYNC_CONSTRAINT: ['bad_request', 'Request constraints could not be evaluated'],
};

/** Named in every 401, so a client learns which headers carry credentials (AccessToken, bearer token, API key). */
const ACCEPTED_CREDENTIAL_HEADERS = ['AccessToken', 'Authorization: Bearer', 'X-API-Key'];

export function sendError(request: FastifyRequest, reply: FastifyReply, error: AppError): FastifyReply {
  if (error.headers) reply.headers(error.headers);
  // RFC 9110 §15.5.2: every 401 names the scheme to use; a more specific challenge set by the error wins.
  if (error.status === 401 && !reply.hasHeader('www-authenticate'))
    reply.header('www-authenticate', 'Bearer realm="tessera"');
  const body: Record<string, unknown> = {
    status: 'error',
    code: error.code,
    message: error.message,
    requestId: request.id,
  };
  if (error.details && error.details.length > 0) body.details = error.details;
  if (error.quota) body.quota = error.quota;
  if (error.status === 401) body.acceptedCredentials = ACCEPTED_CREDENTIAL_HEADERS;
  return reply.code(error.status).type('application/json; charset=utf-8').send(body);
}

/** Turns any thrown value into the catalog's JSON error; 5xx are logged and masked. */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  const e = error as FastifyError & { validation?: ValidationIssue[]; validationContext?: string };
  if (Array.isArray(e.validation)) {
    const details = e.validation.map((issue) => validationDetail(e.validationContext ?? 'body', issue));
    const first = details[0];
    return new AppError('validation_failed', first ? `${first.field}: ${first.message}` : 'Request is invalid', {
      details,
    });
  }
  // A write that lost a race to an equal one (two requests adding the same thing at once): the
  // transaction rolled back, so nothing was recorded; the caller learns it already exists.
  if (isUniqueViolation(error))
    return new AppError('conflict', 'A concurrent request made the same change; nothing was changed by this one');
  // A write that lost another kind of race: nothing was kept either, and the caller may look again or retry.
  const lost = isLostRace(error);
  if (lost === 'reference_gone')
    return new AppError(
      'conflict',
      'Something this request refers to was deleted by a concurrent request; nothing was changed',
    );
  if (lost === 'retry')
    return new AppError(
      'conflict',
      'A concurrent request changed the same records; nothing was changed by this one, and it may be sent again',
    );
  if (isDatabaseBusy(error))
    return new AppError('service_unavailable', 'The database is busy with another writer; send the request again', {
      headers: { 'retry-after': '1' },
    });
  const known = e.code ? FASTIFY_CODES[e.code] : undefined;
  if (known) return new AppError(known[0], known[1]);
  if (e instanceof SyntaxError && e.statusCode === 400) return new AppError('invalid_json', 'Body is not valid JSON');
  const status = typeof e.statusCode === 'number' ? e.statusCode : 500;
  if (status >= 400 && status < 500) {
    const code = (Object.keys(ERROR_STATUS) as ErrorCode[]).find((c) => ERROR_STATUS[c] === status) ?? 'bad_request';
    return new AppError(code, e.message || 'Bad request');
  }
  // The database or the blob store cannot answer: not the request's fault, and worth sending again.
  const outage = outageOf(error);
  if (outage)
    return new AppError(
      'service_unavailable',
      `The ${outage.dependency === 'database' ? 'database' : 'blob storage'} is not answering; send the request again in a few seconds`,
      { headers: { 'retry-after': String(OUTAGE_RETRY_AFTER_SECONDS) }, cause: error },
    );
  return new AppError('internal', 'Internal server error', { cause: error });
}

interface ValidationIssue {
  instancePath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
}

function validationDetail(context: string, issue: ValidationIssue): ErrorDetail {
  const prefix = CONTEXT_NAMES[context] ?? context;
  const path = (issue.instancePath ?? '').split('/').filter(Boolean).join('.');
  let field = path ? `${prefix}.${path}` : prefix;
  let message = issue.message ?? 'is invalid';
  if (issue.keyword === 'required' && typeof issue.params?.missingProperty === 'string') {
    field = `${field === prefix ? prefix : field}.${issue.params.missingProperty}`;
    message = 'is required';
  } else if (issue.keyword === 'additionalProperties' && typeof issue.params?.additionalProperty === 'string') {
    field = `${field}.${issue.params.additionalProperty}`;
    message = 'is not an accepted field';
  } else if (issue.keyword === 'enum' && Array.isArray(issue.params?.allowedValues)) {
    message = `must be one of ${(issue.params.allowedValues as unknown[]).join(', ')}`;
  }
  return { field, message };
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => {
    const appError = toAppError(error);
    if (appError.code === 'service_unavailable' && appError.headers?.['retry-after']) {
      request.log.warn({ err: error }, appError.message);
    } else if (appError.status >= 500) {
      request.log.error({ err: error }, 'request failed');
    } else {
      request.log.info({ code: appError.code, status: appError.status }, appError.message);
    }
    return sendError(request, reply, appError);
  });
  const methods = methodsByPath(app);
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!;
    // A known path asked with a method it does not serve: 405 with the methods it does (RFC 9110 §15.5.6).
    const allowed = methods(path);
    if (allowed.length > 0) {
      reply.header('allow', allowed.join(', '));
      return sendError(
        request,
        reply,
        new AppError('method_not_allowed', `${request.method} is not allowed on ${path}; use ${allowed.join(', ')}`),
      );
    }
    return sendError(request, reply, new AppError('not_found', `Route ${request.method} ${path} not found`));
  });
}

const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * Records every route's path pattern as it is registered, and answers which methods a concrete
 * path is served with. Consulted only for requests no route matched, so its cost is off the hot path.
 */
function methodsByPath(app: FastifyInstance): (path: string) => string[] {
  const routes: { pattern: RegExp; methods: string[] }[] = [];
  app.addHook('onRoute', (route) => {
    // A catch-all (the CORS preflight's `OPTIONS *`) says nothing about which paths exist.
    if (route.url === '*' || route.url === '/*') return;
    const methods = (Array.isArray(route.method) ? route.method : [route.method]).map((m) => m.toUpperCase());
    routes.push({ pattern: patternOf(route.url), methods });
  });
  return (path) => {
    const trimmed = path.length > 1 ? path.replace(/\/+$/, '') : path;
    const found = new Set<string>();
    for (const route of routes) if (route.pattern.test(trimmed)) for (const m of route.methods) found.add(m);
    if (found.has('GET')) found.add('HEAD');
    return METHOD_ORDER.filter((m) => found.has(m));
  };
}

function patternOf(url: string): RegExp {
  const trimmed = url.length > 1 ? url.replace(/\/+$/, '') : url;
  const source = trimmed
    .split('/')
    .map((segment) => {
      if (segment === '*') return '.*';
      if (segment.startsWith(':')) return '[^/]+';
      return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('/');
  return new RegExp(`^${source}$`);
}
