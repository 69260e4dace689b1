import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { runAs } from '../authz/acting.ts';
import type { Principal } from '../authz/principal.ts';
import { insufficientScope, routeScopeOf, scopesAllow, type RouteScope } from '../authz/scopes.ts';
import { unauthorized } from './errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
  interface FastifyContextConfig {
    /** Route needs no credentials (login, token, health, docs). Everything else does. */
    public?: boolean;
    /**
     * What a third-party (OAuth) token needs to call this route: `identity` routes (the caller's own
     * profile) are reached with openid/profile/email; others need tessera.read (GET) or tessera.api.
     */
    scope?: RouteScope;
  }
}

/**
 * Reads one kind of credential from the request. Returns null when that kind of credential is
 * absent; throws (or rejects with) 401 when it is present but bad. The first resolver to return a
 * principal wins. A resolver answers synchronously when it can (a credential already in its cache):
 * the common authenticated request then settles without a promise.
 */
export type CredentialResolver = (request: FastifyRequest) => Principal | null | Promise<Principal | null>;

type Done = (error?: Error) => void;
type Handler = (this: unknown, request: FastifyRequest, reply: FastifyReply) => unknown;

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as Promise<T> | null)?.then === 'function';
}

/**
 * Runs the resolvers from `from` on, then `done` (with 401 when none authenticates). A callback
 * chain rather than an async function, so that synchronous answers stay synchronous.
 */
function resolvePrincipal(
  resolvers: readonly CredentialResolver[],
  request: FastifyRequest,
  scope: RouteScope | undefined,
  from: number,
  done: Done,
): void {
  for (let i = from; i < resolvers.length; i++) {
    let result: Principal | null | Promise<Principal | null>;
    try {
      result = resolvers[i]!(request);
    } catch (error) {
      return done(error as Error);
    }
    if (result === null) continue;
    if (isPromise(result)) {
      result.then((principal) => {
        if (principal) accept(request, principal, scope, done);
        else resolvePrincipal(resolvers, request, scope, i + 1, done);
      }, done);
      return;
    }
    return accept(request, result, scope, done);
  }
  done(unauthorized());
}

function accept(request: FastifyRequest, principal: Principal, scope: RouteScope | undefined, done: Done): void {
  // Scopes are part of the credential check: a third-party token reaches only what they name.
  if (principal.scopes) {
    const need = routeScopeOf(request.method, scope);
    if (!scopesAllow(principal.scopes, need)) return done(insufficientScope(need));
  }
  request.principal = principal;
  done();
}

function callHandler(handler: Handler, self: unknown, request: FastifyRequest, reply: FastifyReply): unknown {
  return handler.call(self, request, reply);
}

/**
 * Every non-public route requires a principal; credentials are checked before the body is read.
 * Decided once per route when it is registered (not on every request): a non-public route gets the
 * authentication hook as its own onRequest hook (after the app-wide ones, as before), and its
 * handler runs as the principal. Public routes, and requests no route matches, get neither.
 */
export function registerAuthentication(app: FastifyInstance, resolvers: readonly CredentialResolver[]): void {
  app.decorateRequest('principal', null);
  app.addHook('onRoute', (route) => {
    if (route.config?.public) return;
    const scope = route.config?.scope;
    const authenticate = (request: FastifyRequest, _reply: FastifyReply, done: Done): void =>
      resolvePrincipal(resolvers, request, scope, 0, done);
    addRouteHook(route, 'onRequest', authenticate);
    // The handler runs as its principal, so audit rows and events record who acted (and for whom).
    // Wrapping the handler costs less than a preHandler hook (Fastify skips that whole stage when a
    // route has none) and, entered right before the handler as before, it covers all it awaits.
    const handler = route.handler as Handler;
    route.handler = function authenticated(this: unknown, request: FastifyRequest, reply: FastifyReply) {
      const principal = request.principal;
      return principal
        ? runAs(principal, callHandler, handler, this, request, reply)
        : handler.call(this, request, reply);
    } as typeof route.handler;
  });
}

/**
 * Adds a hook to one route (after the route's own hooks of that kind, if it declares any). Used from
 * onRoute hooks by what must run only on authenticated routes, after authentication.
 */
export function addRouteHook(
  route: RouteOptions,
  name: 'onRequest',
  hook: (request: FastifyRequest, reply: FastifyReply, done: Done) => void,
): void {
  const existing = route[name];
  route[name] = (
    existing === undefined ? [hook] : Array.isArray(existing) ? [...existing, hook] : [existing, hook]
  ) as RouteOptions['onRequest'];
}

/** The authenticated caller of a non-public route. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw unauthorized();
  return request.principal;
}

/** Client address as the server sees it (behind a proxy only when TESSERA_TRUST_PROXY is set). */
export function clientIp(request: FastifyRequest): string {
  return request.ip;
}
