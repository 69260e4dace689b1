import { AsyncLocalStorage } from 'node:async_hooks';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * Where a request came from, for the audit trail (core/audit.ts): every row written while a route
 * handler runs records the client address, user agent, request id and the route's operationId
 * without each service passing them along. The request itself is the store (nothing allocated per
 * request); the operationId is read from the route's schema once, when the route is registered.
 */
export interface RequestOrigin {
  ip: string | null;
  userAgent: string | null;
  requestId: string | null;
  operation: string | null;
}

interface Entry {
  request: FastifyRequest;
  operation: string | null;
}

const storage = new AsyncLocalStorage<Entry>();

type Handler = (this: unknown, request: FastifyRequest, reply: FastifyReply) => unknown;

/** The origin of the request being handled, or undefined outside a route handler (jobs, CLI). */
export function requestOrigin(): RequestOrigin | undefined {
  const entry = storage.getStore();
  if (!entry) return undefined;
  const ua = entry.request.headers['user-agent'];
  return {
    ip: entry.request.ip ?? null,
    userAgent: typeof ua === 'string' ? ua.slice(0, 300) : null,
    requestId: String(entry.request.id),
    operation: entry.operation,
  };
}

/** The request being handled, or undefined outside a route handler. */
export function currentRequest(): FastifyRequest | undefined {
  return storage.getStore()?.request;
}

/** Wraps every route's handler (public ones too: sign-in) so that it runs with its request as the origin. */
export function registerRequestContext(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const operation = (route.schema as { operationId?: string } | undefined)?.operationId ?? null;
    const handler = route.handler as Handler;
    route.handler = function withOrigin(this: unknown, request: FastifyRequest, reply: FastifyReply) {
      return storage.run({ request, operation }, () => handler.call(this, request, reply));
    } as typeof route.handler;
  });
}
