import type { FastifyInstance, FastifyRequest } from 'fastify';
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
 * absent; throws 401 when it is present but bad. The first resolver to return a principal wins.
 */
export type CredentialResolver = (request: FastifyRequest) => Promise<Principal | null>;

/** Every non-public route requires a principal; credentials are checked before the body is read. */
export function registerAuthentication(app: FastifyInstance, resolvers: readonly CredentialResolver[]): void {
  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (request) => {
    if (request.is404 || request.routeOptions.config?.public) return;
    for (const resolve of resolvers) {
      const principal = await resolve(request);
      if (principal) {
        // Scopes are part of the credential check: a third-party token reaches only what they name.
        if (principal.scopes) {
          const need = routeScopeOf(request.method, request.routeOptions.config?.scope);
          if (!scopesAllow(principal.scopes, need)) throw insufficientScope(need);
        }
        request.principal = principal;
        return;
      }
    }
    throw unauthorized();
  });
  // The handler runs as its principal, so audit rows and events record who acted (and for whom).
  app.addHook('preHandler', (request, _reply, done) => {
    if (request.principal) runAs(request.principal, done);
    else done();
  });
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
