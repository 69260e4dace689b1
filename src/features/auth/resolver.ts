import type { FastifyRequest } from 'fastify';
import type { Deps } from '../../deps.ts';
import type { Principal } from '../../core/authz/principal.ts';
import type { CredentialResolver } from '../../core/http/authenticate.ts';
import { unauthorized } from '../../core/http/errors.ts';
import { revisionCache } from '../../core/db/revision-cache.ts';
import { principalFromRow } from '../identity/index.ts';
import { findSessionWithUser } from './sessions.repo.ts';
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
 * Resolves an id or access token to its user. The resolved principal is kept in memory until the
 * token expires or anything identity-related changes (core/db/revision.ts): at once on this
 * instance, within a second on every other one sharing the database.
 */
export function tokenResolver(deps: Deps): CredentialResolver {
  return async (request) => {
    const token = presentedToken(request);
    if (token === undefined) return null;
    return cachedPrincipalForToken(deps, token);
  };
}

/** principalForToken through the per-process principal cache. */
export async function cachedPrincipalForToken(deps: Deps, token: string): Promise<Principal> {
  const principal = await revisionCache<Principal>(deps, 'principal:token').get(token, async () => {
    const resolved = await principalForToken(deps, token);
    const claims = await verifySignature(deps, token);
    return { value: resolved, validUntil: claims!.exp * 1000 };
  });
  if (!principal) throw unauthorized();
  return principal;
}

export async function principalForToken(deps: Deps, token: string): Promise<Principal> {
  const claims = await verifySignature(deps, token);
  if (!claims || claims.exp * 1000 <= deps.clock.now()) throw unauthorized();
  // One round trip for the session (revocation is seen at once) and the user it belongs to.
  const session = await findSessionWithUser(deps.db, claims.sid);
  if (!session || session.revoked_at !== null || session.session_user_id !== claims.sub) throw unauthorized();
  const loaded = principalFromRow(session, { sessionId: claims.sid });
  if (!loaded || loaded.orgId !== session.session_org_id) throw unauthorized();
  const principal: Principal = session.impersonator_id ? { ...loaded, impersonatorId: session.impersonator_id } : loaded;
  // Impersonation lasts only while the impersonator may still sign in.
  if (session.impersonator_id && !(await isEnabledUser(deps, session.impersonator_id, session.org_id))) throw unauthorized();
  return principal;
}

async function isEnabledUser(deps: Deps, userId: string, orgId: string): Promise<boolean> {
  const row = await deps.db.selectFrom('users').select('status').where('id', '=', userId).where('org_id', '=', orgId).executeTakeFirst();
  return row?.status === 'enabled';
}
