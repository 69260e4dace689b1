import type { Deps } from '../../../deps.ts';
import { audit } from '../../../core/audit.ts';
import { requireOwnSignIn, requirePrivileges } from '../../../core/authz/authorize.ts';
import { byKind, holdingsOfPrincipal, holdingsWithin } from '../../../core/authz/ceiling.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import { forbidden, notFound } from '../../../core/http/errors.ts';
import { findUserByUsername, loadUserPrincipal } from '../../identity/index.ts';
import {
  mintTokens,
  openSession,
  sessionResponse,
  type RequestMeta,
  type SessionResponse,
} from '../sessions/tokens.service.ts';

/**
 * Tokens acting as another user of the same organization: needs the Impersonate privilege, never
 * reaches a user holding a privilege the caller lacks, cannot be chained (an impersonation token
 * cannot impersonate), carries `act: {sub: <impersonator>}`, has no refresh token and ends after
 * TESSERA_IMPERSONATION_TTL_SECONDS. Audited with the reason given.
 */
export async function impersonate(
  deps: Deps,
  principal: Principal,
  input: { username: string; reason?: string },
  meta: RequestMeta,
): Promise<SessionResponse> {
  requirePrivileges(principal, 'impersonate');
  requireOwnSignIn(principal, 'Impersonation');
  const row = await findUserByUsername(deps.db, input.username);
  if (!row || row.org_id !== principal.orgId || row.status !== 'enabled') throw notFound('User');
  if (row.id === principal.userId) throw forbidden('You cannot impersonate yourself');
  const target = await loadUserPrincipal(deps.db, row.id);
  if (!target) throw notFound('User');
  // Role privileges and the template permissions of their groups; re-checked on every use of the token.
  const [mine, theirs] = await Promise.all([
    holdingsOfPrincipal(deps.db, principal),
    holdingsOfPrincipal(deps.db, target),
  ]);
  if (!holdingsWithin(byKind(theirs), byKind(mine)))
    throw forbidden('The user holds privileges or permissions you do not have');
  const { subject, session } = await openSession(deps, row.id, {
    kind: 'impersonation',
    meta,
    impersonatorId: principal.userId,
    refreshable: false,
    ttlMs: deps.config.impersonationTtlSeconds * 1000,
  });
  await audit(deps.db, {
    orgId: principal.orgId,
    at: deps.clock.now(),
    actorId: principal.userId,
    action: 'auth.impersonate',
    targetType: 'user',
    targetId: row.id,
    ip: meta.ip,
    data: { sessionId: session.id, impersonatorId: principal.userId, reason: input.reason ?? null },
  });
  return sessionResponse(deps, subject, await mintTokens(deps, subject, session), '');
}
