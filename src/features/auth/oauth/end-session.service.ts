import type { Deps } from '../../../deps.ts';
import { audit } from '../../../core/audit.ts';
import { findSession, revokeSession, type SessionRow } from '../sessions/sessions.repo.ts';
import { verifySignature } from '../keys/signing-keys.ts';
import { clientRedirectUris, findActiveClient } from './clients/oauth-clients.service.ts';
import { WEB_APP_CLIENT_ID, webAppClientRowId } from './clients/web-app-client.ts';

/** What features/sso does when a session opened through an identity provider ends (wired in app.ts). */
export type ProviderLogout = (input: {
  orgId: string;
  userId: string;
  providerId: string;
  /** Where the person goes once the provider has signed them out too (already checked). */
  then?: { uri: string; state?: string };
}) => Promise<string | undefined>;

export interface EndSessionParams {
  id_token_hint?: string;
  post_logout_redirect_uri?: string;
  state?: string;
  client_id?: string;
}

export type EndSessionOutcome =
  | { kind: 'redirect'; location: string }
  | { kind: 'page'; status: number; message: string };

/** Is `uri` one the session's client may be sent back to after logout (its registered redirect URIs; the web app: under /app on our origin)? */
async function postLogoutAllowed(deps: Deps, session: SessionRow, uri: string): Promise<boolean> {
  if (!session.client_id) return false;
  if (session.client_id === webAppClientRowId(session.org_id)) {
    try {
      const target = new URL(uri);
      const base = new URL(deps.config.publicUrl);
      const basePath = base.pathname.replace(/\/+$/, '');
      return target.origin === base.origin && target.pathname.startsWith(`${basePath}/app`) && target.hash === '';
    } catch {
      return false;
    }
  }
  const client = await findActiveClient(deps.db, session.client_id);
  return client !== undefined && clientRedirectUris(client).includes(uri);
}

/**
 * RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0) at GET /v1/oauth2/logout: ends the
 * session named by `id_token_hint` (a genuine id token, even an expired one), then — when that
 * session was opened through an identity provider publishing an end_session_endpoint — sends the
 * person on to sign out there too, and finally back to `post_logout_redirect_uri` when the
 * session's client registered it. Without a usable hint nothing ends and a page says so.
 */
export async function endSession(
  deps: Deps,
  params: EndSessionParams,
  meta: { ip: string },
  providerLogout?: ProviderLogout,
): Promise<EndSessionOutcome> {
  const claims = params.id_token_hint ? await verifySignature(deps, params.id_token_hint) : null;
  if (!claims || claims.token_use !== 'id')
    return { kind: 'page', status: 400, message: 'Sign-out needs the id token of the session (id_token_hint).' };
  const session = await findSession(deps.db, claims.sid);
  if (!session || session.user_id !== claims.sub)
    return { kind: 'page', status: 400, message: 'This session is unknown.' };
  // The web app names itself by its public id (tessera-web); its sessions hold the organization's own row of it.
  const webApp = params.client_id === WEB_APP_CLIENT_ID && session.client_id === webAppClientRowId(session.org_id);
  if (
    params.client_id !== undefined &&
    params.client_id !== session.client_id &&
    params.client_id !== claims.aud &&
    !webApp
  )
    return { kind: 'page', status: 400, message: 'client_id does not match the id token.' };
  const now = deps.clock.now();
  if (session.revoked_at === null) {
    await deps.db.transaction().execute(async (trx) => {
      await revokeSession(trx, session.id, now, 'logout');
      await audit(trx, {
        orgId: session.org_id,
        at: now,
        actorId: session.impersonator_id ?? session.user_id,
        action: 'auth.logout',
        targetType: 'session',
        targetId: session.id,
        ip: meta.ip,
        ...(session.sso_provider_id ? { data: { ssoProviderId: session.sso_provider_id } } : {}),
      });
    });
  }
  let then: { uri: string; state?: string } | undefined;
  if (params.post_logout_redirect_uri) {
    if (!(await postLogoutAllowed(deps, session, params.post_logout_redirect_uri)))
      return {
        kind: 'page',
        status: 400,
        message: 'You are signed out. (post_logout_redirect_uri is not registered for this client.)',
      };
    then = { uri: params.post_logout_redirect_uri, ...(params.state !== undefined ? { state: params.state } : {}) };
  }
  if (session.sso_provider_id && providerLogout) {
    const location = await providerLogout({
      orgId: session.org_id,
      userId: session.user_id,
      providerId: session.sso_provider_id,
      ...(then ? { then } : {}),
    });
    if (location) return { kind: 'redirect', location };
  }
  if (then) {
    const url = new URL(then.uri);
    if (then.state !== undefined) url.searchParams.set('state', then.state);
    return { kind: 'redirect', location: url.toString() };
  }
  return { kind: 'page', status: 200, message: 'You are signed out.' };
}
