import { createHash, randomBytes } from 'node:crypto';
import type { Deps } from '../../deps.ts';
import { audit } from '../../core/audit.ts';
import type { DbOrTrx } from '../../core/db/connect.ts';
import { fromJson, toJson } from '../../core/db/json.ts';
import type { SsoProvidersTable } from '../../core/db/schema.ts';
import { newId } from '../../core/ids.ts';
import {
  checkAuthorizeRequest,
  issueAuthorizationCode,
  type AuthorizeParams,
  type LoginProvider,
  type ProviderLogout,
} from '../auth/index.ts';
import {
  createFederatedUser,
  enabledUserIdByEmail,
  ssoUserState,
  syncManagedGroups,
  usernameTaken,
} from '../identity/index.ts';
import { exchangeCode, ProviderError, verifyIdToken, type IdClaims } from './oidc.ts';
import { callbackUrl, findProvider, findProviderById, loggedOutUrl, mappingsOf } from './providers.service.ts';

/** A sign-in must come back from the provider within this long. */
export const SIGNIN_TTL_MS = 10 * 60_000;
/** Binds a sign-in to the browser that started it (login CSRF): set at the start, checked at the callback. */
export const BROWSER_COOKIE = 'tessera_sso';

export type Outcome =
  | { kind: 'redirect'; location: string; cookie?: string }
  | { kind: 'page'; status: number; message: string };

const page = (status: number, message: string): Outcome => ({ kind: 'page', status, message });

export interface RequestMeta {
  ip: string;
  userAgent?: string;
}

/** GET /v1/sso/providers/{id}/signin: remembers the Tessera authorization request and sends the browser to the provider. */
export async function startSignIn(deps: Deps, providerId: string, request: AuthorizeParams): Promise<Outcome> {
  const check = await checkAuthorizeRequest(deps, request);
  if (check.kind === 'page_error') return page(400, check.message);
  if (check.kind === 'redirect_error') return { kind: 'redirect', location: check.location };
  const provider = await findProviderById(deps.db, providerId);
  // A registered client belongs to one organization; the web app (no organization yet) takes any provider.
  if (!provider || provider.enabled !== 1 || (check.client.org_id !== '' && check.client.org_id !== provider.org_id))
    return page(404, 'This identity provider is unknown.');
  const state = randomBytes(32).toString('base64url');
  const nonce = randomBytes(32).toString('base64url');
  const verifier = randomBytes(48).toString('base64url');
  const now = deps.clock.now();
  // Sign-ins never finished (or long finished) go; a replayed state stays known for one more window.
  await deps.db
    .deleteFrom('sso_logins')
    .where('expires_at', '<', now - SIGNIN_TTL_MS)
    .execute();
  await deps.db
    .insertInto('sso_logins')
    .values({
      state_hash: deps.keys.hash('sso-state', state),
      org_id: provider.org_id,
      provider_id: provider.id,
      nonce: deps.keys.encrypt(nonce),
      code_verifier: deps.keys.encrypt(verifier),
      request: toJson(check.params),
      created_at: now,
      expires_at: now + SIGNIN_TTL_MS,
      used_at: null,
    })
    .execute();
  const url = new URL(provider.authorization_endpoint);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', provider.client_id);
  url.searchParams.set('redirect_uri', callbackUrl(deps));
  url.searchParams.set('scope', provider.scopes);
  url.searchParams.set('state', state);
  url.searchParams.set('nonce', nonce);
  url.searchParams.set('code_challenge', createHash('sha256').update(verifier).digest('base64url'));
  url.searchParams.set('code_challenge_method', 'S256');
  return { kind: 'redirect', location: url.toString(), cookie: deps.keys.hash('sso-browser', state) };
}

async function failure(
  deps: Deps,
  orgId: string,
  providerId: string,
  reason: string,
  meta: RequestMeta,
  extra: Record<string, unknown> = {},
): Promise<void> {
  await audit(deps.db, {
    orgId,
    at: deps.clock.now(),
    actorId: null,
    action: 'auth.signin_failed',
    targetType: 'sso_provider',
    targetId: providerId,
    ip: meta.ip,
    data: { method: 'sso', reason, ...extra },
  });
}

const str = (v: unknown, max: number): string => (typeof v === 'string' ? v.slice(0, max) : '');

/** The groups claim as strings (an array, or one string). */
function claimedValues(claims: IdClaims, claim: string): string[] {
  const v = Object.hasOwn(claims, claim) ? claims[claim] : undefined;
  if (typeof v === 'string') return [v];
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string');
  return [];
}

async function freeUsername(db: DbOrTrx, claims: IdClaims): Promise<string> {
  const email = str(claims.email, 320);
  const base =
    (str(claims.preferred_username, 100) || email || `sso-${claims.sub}`)
      .replace(/[^A-Za-z0-9._@+-]/g, '-')
      .slice(0, 40) || 'sso-user';
  if (!(await usernameTaken(db, base))) return base;
  for (let i = 0; i < 5; i++) {
    const candidate = `${base.slice(0, 40)}-${randomBytes(3).toString('hex')}`;
    if (!(await usernameTaken(db, candidate))) return candidate;
  }
  return `sso-${randomBytes(8).toString('hex')}`;
}

interface Resolved {
  userId: string;
  created: boolean;
  linkedByEmail: boolean;
  added: string[];
  removed: string[];
}

/**
 * Who the person is, in the sign-in's transaction: the account linked to the provider's subject;
 * else the enabled account with the same e-mail address when the provider says it is verified
 * (then linked); else a new federated account (just-in-time provisioning), when allowed. Then
 * the groups the provider's mapping names are made to match the groups claim.
 */
async function resolveUser(
  deps: Deps,
  trx: DbOrTrx,
  provider: SsoProvidersTable,
  claims: IdClaims,
  idToken: string,
): Promise<Resolved | { reason: string }> {
  const now = deps.clock.now();
  const sealedToken = deps.keys.encrypt(idToken);
  const linked = await trx
    .selectFrom('sso_identities')
    .select('user_id')
    .where('provider_id', '=', provider.id)
    .where('subject', '=', claims.sub)
    .executeTakeFirst();
  let userId = linked?.user_id;
  let created = false;
  let linkedByEmail = false;
  if (!userId) {
    const email = str(claims.email, 320);
    if (email && claims.email_verified === true) {
      userId = await enabledUserIdByEmail(trx, provider.org_id, email);
      linkedByEmail = userId !== undefined;
    }
    if (!userId) {
      if (provider.jit !== 1) return { reason: 'no_account' };
      userId = newId(now);
      created = true;
    }
    const inserted = await trx
      .insertInto('sso_identities')
      .values({
        provider_id: provider.id,
        subject: claims.sub,
        org_id: provider.org_id,
        user_id: userId,
        id_token: sealedToken,
        created_at: now,
        last_login_at: now,
      })
      .onConflict((oc) => oc.columns(['provider_id', 'subject']).doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0) {
      // A concurrent first sign-in of the same person linked it first: use that account.
      const winner = await trx
        .selectFrom('sso_identities')
        .select('user_id')
        .where('provider_id', '=', provider.id)
        .where('subject', '=', claims.sub)
        .executeTakeFirstOrThrow();
      userId = winner.user_id;
      created = false;
      linkedByEmail = false;
    } else if (created) {
      const name = str(claims.name, 200);
      await createFederatedUser(trx, {
        id: userId,
        orgId: provider.org_id,
        username: await freeUsername(trx, claims),
        email: str(claims.email, 320),
        firstName: str(claims.given_name, 100) || name.split(' ')[0] || '',
        lastName: str(claims.family_name, 100) || name.split(' ').slice(1).join(' '),
        roleId: provider.default_role_id,
        now,
      });
    }
  }
  const user = await ssoUserState(trx, provider.org_id, userId);
  if (!user) return { reason: 'account_missing' };
  if (user.status !== 'enabled') return { reason: `account_${user.status}` };
  if (user.accountType === 'service') return { reason: 'service_account' };
  await trx
    .updateTable('sso_identities')
    .set({ id_token: sealedToken, last_login_at: now })
    .where('provider_id', '=', provider.id)
    .where('subject', '=', claims.sub)
    .execute();
  const mappings = mappingsOf(provider);
  const values = new Set(claimedValues(claims, provider.groups_claim));
  const managed = [...new Set(mappings.map((m) => m.groupId))];
  const wanted = [...new Set(mappings.filter((m) => values.has(m.value)).map((m) => m.groupId))];
  const { added, removed } = await syncManagedGroups(trx, provider.org_id, userId, managed, wanted, now);
  return { userId, created, linkedByEmail, added, removed };
}

/** GET /v1/sso/callback: the provider's answer. Ends in a Tessera code for the client that asked, exactly as a password sign-in does. */
export async function finishSignIn(
  deps: Deps,
  query: { code?: string; state?: string; iss?: string; error?: string },
  browserCookie: string | undefined,
  meta: RequestMeta,
): Promise<Outcome> {
  if (!query.state) return page(400, 'The sign-in answer has no state.');
  // Under any held key: a sign-in started before a secret rotation (on another process) still finishes.
  const login = await deps.db
    .selectFrom('sso_logins')
    .selectAll()
    .where('state_hash', 'in', deps.keys.hashes('sso-state', query.state))
    .executeTakeFirst();
  if (!login) return page(400, 'This sign-in is unknown or has expired. Start again.');
  const stateHash = login.state_hash;
  const fail = async (status: number, reason: string, message: string, extra: Record<string, unknown> = {}) => {
    await failure(deps, login.org_id, login.provider_id, reason, meta, extra);
    return page(status, message);
  };
  if (browserCookie === undefined || !deps.keys.verify('sso-browser', query.state, browserCookie))
    return fail(400, 'browser_mismatch', 'This sign-in was started in another browser. Start again.');
  const now = deps.clock.now();
  // One use: of two answers carrying the same state, only the first gets further.
  const claimed = await deps.db
    .updateTable('sso_logins')
    .set({ used_at: now })
    .where('state_hash', '=', stateHash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  if (Number(claimed.numUpdatedRows) === 0)
    return fail(400, 'state_replayed', 'This sign-in was already used. Start again.');
  if (login.expires_at <= now) return fail(400, 'state_expired', 'This sign-in has expired. Start again.');
  const provider = await findProvider(deps.db, login.org_id, login.provider_id);
  if (!provider || provider.enabled !== 1)
    return fail(400, 'provider_disabled', 'This identity provider is turned off.');
  if (query.error)
    return fail(401, 'provider_refused', 'The identity provider did not sign you in.', {
      error: query.error.slice(0, 100),
    });
  // RFC 9207: an answer naming another issuer is a mix-up.
  if (query.iss !== undefined && query.iss !== provider.issuer)
    return fail(401, 'issuer_mismatch', 'The answer came from another identity provider.');
  if (!query.code) return fail(400, 'no_code', 'The identity provider sent no code.');
  let claims: IdClaims;
  let idToken: string;
  try {
    idToken = await exchangeCode(
      deps,
      provider,
      provider.client_secret ? deps.keys.decrypt(provider.client_secret) : null,
      {
        code: query.code,
        redirectUri: callbackUrl(deps),
        codeVerifier: deps.keys.decrypt(login.code_verifier),
      },
    );
    claims = await verifyIdToken(deps, provider, idToken, deps.keys.decrypt(login.nonce));
  } catch (err) {
    if (err instanceof ProviderError) return fail(401, err.reason, `Sign-in failed: ${err.message}.`);
    throw err;
  }
  const check = await checkAuthorizeRequest(deps, fromJson<AuthorizeParams>(login.request, {}));
  if (check.kind !== 'ok')
    return fail(400, 'client_gone', 'The application you were signing in to is no longer registered.');
  const resolved = await deps.db.transaction().execute(async (trx) => {
    const outcome = await resolveUser(deps, trx, provider, claims, idToken);
    if ('reason' in outcome) return outcome;
    await audit(trx, {
      orgId: provider.org_id,
      at: now,
      actorId: outcome.userId,
      action: 'auth.sso.signin',
      targetType: 'user',
      targetId: outcome.userId,
      ip: meta.ip,
      objects: [{ type: 'sso_provider', id: provider.id }],
      data: {
        providerId: provider.id,
        subject: claims.sub,
        created: outcome.created,
        linkedByEmail: outcome.linkedByEmail,
        groupsAdded: outcome.added,
        groupsRemoved: outcome.removed,
      },
    });
    return outcome;
  });
  if ('reason' in resolved)
    return fail(
      403,
      resolved.reason,
      resolved.reason === 'no_account'
        ? 'You have no account here, and this identity provider does not create them. Ask an administrator.'
        : 'Your account cannot sign in.',
      { subject: claims.sub },
    );
  try {
    return {
      kind: 'redirect',
      location: await issueAuthorizationCode(deps, check, resolved.userId, { ssoProviderId: provider.id }),
    };
  } catch (err) {
    const status = (err as { status?: number }).status;
    if (status === 401 || status === 403)
      return fail(403, 'client_organization', 'This account cannot sign in to this application.');
    throw err;
  }
}

/** The login page's links: the organization's enabled providers, each carrying the authorization request. */
export async function loginProviders(
  deps: Deps,
  orgId: string,
  request: Record<string, string>,
): Promise<LoginProvider[]> {
  const rows = await deps.db
    .selectFrom('sso_providers')
    .select(['id', 'name'])
    .where('org_id', '=', orgId)
    .where('enabled', '=', 1)
    .orderBy('name')
    .orderBy('id')
    .execute();
  const query = new URLSearchParams(request).toString();
  return rows.map((r) => ({ name: r.name, href: `${deps.config.publicUrl}/v1/sso/providers/${r.id}/signin?${query}` }));
}

function signLogoutState(deps: Deps, then: { uri: string; state?: string }): string {
  const payload = Buffer.from(
    JSON.stringify({ u: then.uri, s: then.state, e: deps.clock.now() + SIGNIN_TTL_MS }),
  ).toString('base64url');
  return `${payload}.${deps.keys.hash('sso-logout', payload)}`;
}

/** The provider half of a Tessera sign-out (wired into GET /v1/oauth2/logout): its end_session_endpoint, when it has one. */
export function providerLogout(deps: Deps): ProviderLogout {
  return async ({ orgId, userId, providerId, then }) => {
    const provider = await findProvider(deps.db, orgId, providerId);
    if (!provider?.end_session_endpoint) return undefined;
    const identity = await deps.db
      .selectFrom('sso_identities')
      .select('id_token')
      .where('provider_id', '=', providerId)
      .where('user_id', '=', userId)
      .orderBy('last_login_at', 'desc')
      .executeTakeFirst();
    const url = new URL(provider.end_session_endpoint);
    if (identity?.id_token) url.searchParams.set('id_token_hint', deps.keys.decrypt(identity.id_token));
    url.searchParams.set('client_id', provider.client_id);
    url.searchParams.set('post_logout_redirect_uri', loggedOutUrl(deps));
    if (then) url.searchParams.set('state', signLogoutState(deps, then));
    return url.toString();
  };
}

/** GET /v1/sso/logged-out: back from the provider's sign-out; on to where the application asked, when it did. */
export function loggedOut(deps: Deps, state: string | undefined): Outcome {
  const [payload, mac] = (state ?? '').split('.');
  if (payload && mac && deps.keys.verify('sso-logout', payload, mac)) {
    const then = fromJson<{ u?: string; s?: string; e?: number }>(
      Buffer.from(payload, 'base64url').toString('utf8'),
      {},
    );
    if (typeof then.u === 'string' && typeof then.e === 'number' && then.e > deps.clock.now()) {
      const url = new URL(then.u);
      if (typeof then.s === 'string') url.searchParams.set('state', then.s);
      return { kind: 'redirect', location: url.toString() };
    }
  }
  return page(200, 'You are signed out.');
}
