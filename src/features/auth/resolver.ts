import type { FastifyRequest } from 'fastify';
import type { Deps } from '../../deps.ts';
import type { Principal } from '../../core/authz/principal.ts';
import type { CredentialResolver } from '../../core/http/authenticate.ts';
import { unauthorized } from '../../core/http/errors.ts';
import { loadUserPrincipal } from '../identity/index.ts';
import { findSessionForAuth } from './sessions.repo.ts';
import { verifySignature } from './signing-keys.ts';

/**
 * The token a request presents: `AccessToken: <jwt>` (spec), else `Authorization: Bearer <jwt>`
 * or a bare `Authorization: <jwt>` (clients of the reference). Other Authorization schemes
 * (Basic, …) and API keys sent as bearer tokens are left to the resolvers after this one.
 */
export function presentedToken(request: FastifyRequest): string | undefined {
  const header = request.headers.accesstoken;
  if (typeof header === 'string' && header !== '') return header.trim();
  const authorization = request.headers.authorization;
  if (typeof authorization !== 'string' || authorization === '') return undefined;
  const bearer = /^bearer\s+(.*)$/i.exec(authorization);
  const token = bearer ? bearer[1]!.trim() : authorization.trim();
  if (!bearer && /\s/.test(token)) return undefined;
  if (token.startsWith('tsk_')) return undefined;
  return token;
}

/**
 * Resolves an id or access token to its user. The signature check is cached per token; the
 * session row is read on every request (primary key), so a revocation is seen at once by every
 * instance sharing the database.
 */
export function tokenResolver(deps: Deps): CredentialResolver {
  return async (request) => {
    const token = presentedToken(request);
    if (token === undefined) return null;
    return principalForToken(deps, token);
  };
}

export async function principalForToken(deps: Deps, token: string): Promise<Principal> {
  const claims = await verifySignature(deps, token);
  if (!claims || claims.exp * 1000 <= deps.clock.now()) throw unauthorized();
  const session = await findSessionForAuth(deps.db, claims.sid);
  if (!session || session.revoked_at !== null || session.user_id !== claims.sub) throw unauthorized();
  const principal = await loadUserPrincipal(deps.db, claims.sub, {
    sessionId: claims.sid,
    ...(session.impersonator_id ? { impersonatorId: session.impersonator_id } : {}),
  });
  if (!principal || principal.orgId !== session.org_id) throw unauthorized();
  return principal;
}
