import type { Deps } from '../../../deps.ts';
import { audit } from '../../../core/audit.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import { notFound } from '../../../core/http/errors.ts';
import { isUuid } from '../../../core/ids.ts';
import { webAppClientRowId } from './clients/web-app-client.ts';

/**
 * A person's consent to an OAuth client is what that client holds in their name: its open
 * sessions (access and refresh tokens) and any authorization code not yet exchanged. Tessera
 * keeps no standing consent (every authorization asks again on the consent page), so revoking
 * consent ends all of those at once; nothing else can outlive it, because a client's token never
 * creates lasting credentials (core/authz/authorize.ts, requireOwnSignIn).
 */
export interface ConsentView {
  clientId: string;
  name: string;
  /** The Tessera web app itself: revoking it signs the person out of the app. */
  builtIn: boolean;
  /** Every scope granted across the client's open sessions. */
  scopes: string[];
  sessions: number;
  grantedEpoch: number;
  lastUsedEpoch: number;
}

export async function listConsents(deps: Deps, principal: Principal): Promise<{ consents: ConsentView[] }> {
  const rows = await deps.db
    .selectFrom('auth_sessions')
    .innerJoin('oauth_clients', 'oauth_clients.id', 'auth_sessions.client_id')
    .select([
      'oauth_clients.id as client_id',
      'oauth_clients.name',
      'auth_sessions.scope',
      'auth_sessions.created_at',
      'auth_sessions.last_used_at',
    ])
    .where('auth_sessions.org_id', '=', principal.orgId)
    .where('auth_sessions.user_id', '=', principal.userId)
    .where('auth_sessions.kind', '=', 'oauth')
    .where('auth_sessions.revoked_at', 'is', null)
    .where('auth_sessions.expires_at', '>', deps.clock.now())
    .where('oauth_clients.revoked_at', 'is', null)
    .orderBy('auth_sessions.created_at')
    .limit(1000)
    .execute();
  const byClient = new Map<string, ConsentView & { scopeSet: Set<string> }>();
  for (const row of rows) {
    let view = byClient.get(row.client_id);
    if (!view) {
      view = {
        clientId: row.client_id,
        name: row.name,
        builtIn: row.client_id === webAppClientRowId(principal.orgId),
        scopes: [],
        sessions: 0,
        grantedEpoch: row.created_at,
        lastUsedEpoch: row.last_used_at,
        scopeSet: new Set(),
      };
      byClient.set(row.client_id, view);
    }
    view.sessions += 1;
    view.lastUsedEpoch = Math.max(view.lastUsedEpoch, row.last_used_at);
    for (const s of (row.scope ?? '').split(' ')) if (s) view.scopeSet.add(s);
  }
  return {
    consents: [...byClient.values()].map(({ scopeSet, ...view }) => ({ ...view, scopes: [...scopeSet].sort() })),
  };
}

/**
 * Withdraws the caller's consent to a client of their organization: every session the client
 * holds for them ends (its access tokens at the next request, its refresh tokens at once) and
 * its unexchanged codes for them are deleted. Revoking what is not there changes and records nothing.
 */
export async function revokeConsent(
  deps: Deps,
  principal: Principal,
  clientId: string,
  ip: string,
): Promise<{ revoked: number }> {
  const client = isUuid(clientId)
    ? await deps.db
        .selectFrom('oauth_clients')
        .select(['id', 'org_id'])
        .where('id', '=', clientId)
        .where('revoked_at', 'is', null)
        .executeTakeFirst()
    : undefined;
  if (!client || client.org_id !== principal.orgId) throw notFound('OAuth client');
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    // Codes first: an exchange in flight holds its code's row lock, so by the time this statement
    // passes it that exchange has committed its session, which the next statement then ends.
    const codes = await trx
      .deleteFrom('oauth_codes')
      .where('client_id', '=', clientId)
      .where('user_id', '=', principal.userId)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    const ended = await trx
      .updateTable('auth_sessions')
      .set({ revoked_at: now, revoked_reason: 'consent_revoked' })
      .where('org_id', '=', principal.orgId)
      .where('user_id', '=', principal.userId)
      .where('client_id', '=', clientId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    const revoked = Number(ended.numUpdatedRows);
    if (revoked > 0 || Number(codes.numDeletedRows) > 0) {
      await audit(trx, {
        orgId: principal.orgId,
        at: now,
        actorId: principal.userId,
        action: 'oauth.consent.revoke',
        targetType: 'oauth_client',
        targetId: clientId,
        ip,
        data: { revoked },
      });
    }
    return { revoked };
  });
}
