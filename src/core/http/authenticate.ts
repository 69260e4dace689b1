import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Principal } from '../authz/principal.ts';
import { unauthorized } from './errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
  interface FastifyContextConfig {
    /** Route needs no credentials (login, token, health, docs). Everything else does. */
    public?: boolean;
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
        request.principal = principal;
        return;
      }
    }
    throw unauthorized();
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
