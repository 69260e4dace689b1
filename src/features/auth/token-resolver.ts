import type { FastifyRequest } from 'fastify';
import type { Deps } from '../../deps.ts';
import type { Principal } from '../../core/authz/principal.ts';
import type { CredentialResolver } from '../../core/http/authenticate.ts';
import { tokenExpired, unauthorized } from '../../core/http/errors.ts';
import { byKind, holdingsOfPrincipal, holdingsWithin } from '../../core/authz/ceiling.ts';
import { loadUserPrincipal, principalFromRow } from '../identity/index.ts';
import { findSessionWithUser } from './sessions/sessions.repo.ts';
import { verifySignature } from './keys/signing-keys.ts';

/**
 * The token a request presents: `AccessToken: <jwt>` (spec), else `Authorization: Bearer <jwt>`
 * or a bare `Authorization: <jwt>` (clients of the reference). Other Authorization schemes
 * (Basic, …) and API keys sent as bearer tokens are left to the resolvers after this one.
 */
export function presentedToken(request: FastifyRequest): string | undefined {
  const header = request.headers.accesstoken;
  if (typeof header === 'string' && !isPlaceholder(header)) return header.trim();
  const authorization = request.headers.authorization;
  if (typeof authorization !== 'string' || authorization === '') return undefined;
  const bearer = /^bearer\s+(.*)$/i.exec(authorization);
  const token = bearer ? bearer[1]!.trim() : authorization.trim();
  if (!bearer && /\s/.test(token)) return undefined;
  if (token.startsWith('tsk_')) return undefined;
  return token;
}

/**
 * What a client of the reference sends for an unset variable (`AccessToken: undefined` beside a
 * valid `Authorization`): no credential at all, as the same strings are in `X-API-Key`.
 */
const PLACEHOLDERS = new Set(['', 'undefined', 'null', 'none', 'nil']);

function isPlaceholder(value: string): boolean {
  return PLACEHOLDERS.has(value.trim().toLowerCase());
}

/**
 * Resolves an id or access token to its user. The resolved principal is kept in memory until the
 * token expires or anything identity-related changes (core/db/revision.ts): at once on this
 * instance, within a second on every other one sharing the database.
 */
export function tokenResolver(deps: Deps): CredentialResolver {
  const cache = deps.runtime.auth.principals;
  return (request) => {
    const token = presentedToken(request);
    if (token === undefined) return null;
    // A token seen before answers synchronously (no promise); anything else takes the full check.
    return cache.peek(token) ?? cachedPrincipalForToken(deps, token);
  };
}

/** principalForToken through the per-process principal cache. */
export async function cachedPrincipalForToken(deps: Deps, token: string): Promise<Principal> {
  const principal = await deps.runtime.auth.principals.get(token, async () => {
    const resolved = await principalForToken(deps, token);
    const claims = await verifySignature(deps, token);
    return { value: resolved, validUntil: claims!.exp * 1000 };
  });
  if (!principal) throw unauthorized();
  return principal;
}

export async function principalForToken(deps: Deps, token: string): Promise<Principal> {
  const claims = await verifySignature(deps, token);
  if (!claims) throw unauthorized();
  if (claims.exp * 1000 <= deps.clock.now()) throw tokenExpired();
  // One round trip for the session (revocation is seen at once) and the user it belongs to.
  const session = await findSessionWithUser(deps.db, claims.sid);
  if (!session || session.revoked_at !== null || session.session_user_id !== claims.sub) throw unauthorized();
  const via = session.kind === 'impersonation' ? 'impersonation' : session.kind === 'oauth' ? 'oauth' : 'password';
  const principal = principalFromRow(session, {
    sessionId: claims.sid,
    via,
    ...(session.impersonator_id ? { impersonatorId: session.impersonator_id } : {}),
    // A third-party token reaches only what its scopes name (checked by the authentication hook).
    ...(via === 'oauth'
      ? { scopes: new Set((session.scope ?? '').split(' ').filter(Boolean)), clientId: session.client_id ?? undefined }
      : {}),
  });
  if (!principal || principal.orgId !== session.session_org_id) throw unauthorized();
  if (session.impersonator_id) await assertImpersonationHolds(deps, session.impersonator_id, principal);
  return principal;
}

/**
 * Impersonation lasts only while it would still be allowed: the impersonator is enabled, still
 * holds Impersonate, and holds now everything the target holds now (role privileges and the
 * template permissions of their groups), so demoting one or promoting the other ends it at once.
 */
async function assertImpersonationHolds(deps: Deps, impersonatorId: string, target: Principal): Promise<void> {
  const impersonator = await loadUserPrincipal(deps.db, impersonatorId);
  if (!impersonator || impersonator.orgId !== target.orgId || !impersonator.privileges.has('impersonate'))
    throw unauthorized('The impersonation has ended');
  const [mine, theirs] = await Promise.all([
    holdingsOfPrincipal(deps.db, impersonator),
    holdingsOfPrincipal(deps.db, target),
  ]);
  if (!holdingsWithin(byKind(theirs), byKind(mine)))
    throw unauthorized(
      'The impersonation has ended: the user now holds privileges or permissions the impersonator does not',
    );
}
