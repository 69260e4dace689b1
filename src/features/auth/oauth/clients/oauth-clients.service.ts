import { randomBytes } from 'node:crypto';
import type { Deps } from '../../../../deps.ts';
import { audit } from '../../../../core/audit.ts';
import { requireOwnSignIn, requirePrivileges } from '../../../../core/authz/authorize.ts';
import type { Principal } from '../../../../core/authz/principal.ts';
import type { DbOrTrx } from '../../../../core/db/connect.ts';
import { fromJson, toJson } from '../../../../core/db/json.ts';
import type { OAuthClientsTable } from '../../../../core/db/schema.ts';
import { conflict, invalidField, notFound } from '../../../../core/http/errors.ts';
import { newId, isUuid } from '../../../../core/ids.ts';
import { webAppClientRowId } from './web-app-client.ts';

/** OAuth clients are registered per organization by users holding User Management. */
const PRIVILEGE = 'user_management' as const;

export interface OAuthClientView {
  clientId: string;
  name: string;
  redirectUris: string[];
  confidential: boolean;
  /** The organization's "Tessera web app" client (client_id tessera-web): signing in to the web app depends on it. */
  builtIn: boolean;
  createdEpoch: number;
}

function view(row: OAuthClientsTable): OAuthClientView {
  return {
    clientId: row.id,
    name: row.name,
    redirectUris: fromJson<string[]>(row.redirect_uris, []),
    confidential: row.secret_hash !== null,
    builtIn: row.id === webAppClientRowId(row.org_id),
    createdEpoch: row.created_at,
  };
}

function checkRedirectUris(uris: string[]): void {
  uris.forEach((uri, i) => {
    const problem = redirectUriProblem(uri);
    if (problem) throw invalidField(`body.redirectUris.${i}`, problem);
  });
}

const newSecret = () => `tcs_${randomBytes(32).toString('base64url')}`;

/** https anywhere; http only on loopback (RFC 8252); private-use schemes for native apps; never a fragment. */
export function redirectUriProblem(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URI';
  }
  if (url.hash !== '' || value.includes('#')) return 'must not contain a fragment';
  // user:password@host hides the real host from people reading the consent page (RFC 6749 §10.15 phishing).
  if (url.username !== '' || url.password !== '' || /^[^:]+:\/\/[^/?#]*@/.test(value))
    return 'must not contain user information (user:password@)';
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:')
    return ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)
      ? null
      : 'http is only allowed on a loopback host';
  if (/^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+:$/.test(url.protocol)) return null;
  return 'must use https, http on a loopback host, or a reverse-domain private scheme';
}

export async function createClient(
  deps: Deps,
  principal: Principal,
  input: { name: string; redirectUris: string[]; confidential?: boolean },
  ip: string,
) {
  requirePrivileges(principal, PRIVILEGE);
  requireOwnSignIn(principal, 'Registering an OAuth client');
  checkRedirectUris(input.redirectUris);
  const now = deps.clock.now();
  const secret = input.confidential ? newSecret() : undefined;
  const row: OAuthClientsTable = {
    id: newId(now),
    org_id: principal.orgId,
    name: input.name,
    redirect_uris: toJson([...new Set(input.redirectUris)]),
    secret_hash: secret ? deps.keys.hash('oauth-client-secret', secret) : null,
    hash_key_id: secret ? deps.keys.keyId : null,
    created_by: principal.userId,
    created_at: now,
    revoked_at: null,
  };
  await deps.db.transaction().execute(async (trx) => {
    await trx.insertInto('oauth_clients').values(row).execute();
    await audit(trx, {
      orgId: principal.orgId,
      at: now,
      actorId: principal.impersonatorId ?? principal.userId,
      action: 'oauth.client.create',
      targetType: 'oauth_client',
      targetId: row.id,
      ip,
    });
  });
  return { ...view(row), ...(secret ? { clientSecret: secret } : {}) };
}

export async function listClients(deps: Deps, principal: Principal): Promise<{ clients: OAuthClientView[] }> {
  requirePrivileges(principal, PRIVILEGE);
  const rows = await deps.db
    .selectFrom('oauth_clients')
    .selectAll()
    .where('org_id', '=', principal.orgId)
    .where('revoked_at', 'is', null)
    .orderBy('created_at')
    .limit(1000)
    .execute();
  return { clients: rows.map(view) };
}

export async function getClient(deps: Deps, principal: Principal, id: string): Promise<OAuthClientView> {
  requirePrivileges(principal, PRIVILEGE);
  const row = await findActiveClient(deps.db, id);
  if (!row || row.org_id !== principal.orgId) throw notFound('OAuth client');
  return view(row);
}

/** The client a change may touch: the caller's organization's, active, and not the built-in web-app client. */
async function changeableClient(deps: Deps, principal: Principal, id: string): Promise<OAuthClientsTable> {
  const row = await findActiveClient(deps.db, id);
  if (!row || row.org_id !== principal.orgId) throw notFound('OAuth client');
  if (row.id === webAppClientRowId(row.org_id))
    throw conflict(
      'The Tessera web app client is built in: its redirect URI follows the public URL and it has no secret',
    );
  return row;
}

/**
 * Renames a client or replaces its redirect URIs. Unexchanged codes issued for a URI no longer
 * listed are deleted; sessions are left as they are.
 */
export async function updateClient(
  deps: Deps,
  principal: Principal,
  id: string,
  input: { name?: string; redirectUris?: string[] },
  ip: string,
): Promise<OAuthClientView> {
  requirePrivileges(principal, PRIVILEGE);
  // Another organization's client is missing (404) before anything else is said about the caller.
  const row = await changeableClient(deps, principal, id);
  requireOwnSignIn(principal, 'Changing an OAuth client');
  if (input.redirectUris) checkRedirectUris(input.redirectUris);
  const changes: Partial<OAuthClientsTable> = {};
  if (input.name !== undefined) changes.name = input.name;
  if (input.redirectUris !== undefined) changes.redirect_uris = toJson([...new Set(input.redirectUris)]);
  if (Object.keys(changes).length === 0) return view(row);
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    await trx.updateTable('oauth_clients').set(changes).where('id', '=', id).execute();
    // Unexchanged codes issued for a redirect URI that is no longer registered go with it.
    if (input.redirectUris)
      await trx
        .deleteFrom('oauth_codes')
        .where('client_id', '=', id)
        .where('used_at', 'is', null)
        .where('redirect_uri', 'not in', [...new Set(input.redirectUris)])
        .execute();
    await audit(trx, {
      orgId: principal.orgId,
      at: now,
      actorId: principal.impersonatorId ?? principal.userId,
      action: 'oauth.client.update',
      targetType: 'oauth_client',
      targetId: id,
      ip,
      data: { fields: Object.keys(input).filter((k) => input[k as keyof typeof input] !== undefined) },
    });
  });
  return view({ ...row, ...changes });
}

/**
 * Gives a confidential client a new secret, shown once; the old one stops working at once (the
 * client's refresh tokens stay valid, presented with the new secret). A public client has none.
 */
export async function rotateClientSecret(
  deps: Deps,
  principal: Principal,
  id: string,
  ip: string,
): Promise<OAuthClientView & { clientSecret: string }> {
  requirePrivileges(principal, PRIVILEGE);
  // Another organization's client is missing (404) before anything else is said about the caller.
  const row = await changeableClient(deps, principal, id);
  requireOwnSignIn(principal, 'Rotating an OAuth client secret');
  if (row.secret_hash === null) throw conflict('A public client has no secret: it uses PKCE only');
  const secret = newSecret();
  const secretHash = deps.keys.hash('oauth-client-secret', secret);
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    await trx
      .updateTable('oauth_clients')
      .set({ secret_hash: secretHash, hash_key_id: deps.keys.keyId })
      .where('id', '=', id)
      .execute();
    await audit(trx, {
      orgId: principal.orgId,
      at: now,
      actorId: principal.impersonatorId ?? principal.userId,
      action: 'oauth.client.secret.rotate',
      targetType: 'oauth_client',
      targetId: id,
      ip,
    });
  });
  return { ...view({ ...row, secret_hash: secretHash, hash_key_id: deps.keys.keyId }), clientSecret: secret };
}

/** Deletes a client: its codes go, and every session it obtained ends at once. */
export async function deleteClient(deps: Deps, principal: Principal, id: string, ip: string): Promise<void> {
  requirePrivileges(principal, PRIVILEGE);
  const now = deps.clock.now();
  const row = await findActiveClient(deps.db, id);
  if (!row || row.org_id !== principal.orgId) throw notFound('OAuth client');
  await deps.db.transaction().execute(async (trx) => {
    await trx.updateTable('oauth_clients').set({ revoked_at: now }).where('id', '=', id).execute();
    await trx.deleteFrom('oauth_codes').where('client_id', '=', id).execute();
    await trx
      .updateTable('auth_sessions')
      .set({ revoked_at: now, revoked_reason: 'client_deleted' })
      .where('org_id', '=', row.org_id)
      .where('client_id', '=', id)
      .where('revoked_at', 'is', null)
      .execute();
    await audit(trx, {
      orgId: principal.orgId,
      at: now,
      actorId: principal.impersonatorId ?? principal.userId,
      action: 'oauth.client.delete',
      targetType: 'oauth_client',
      targetId: id,
      ip,
    });
  });
}

export async function findActiveClient(db: DbOrTrx, id: string): Promise<OAuthClientsTable | undefined> {
  if (!isUuid(id)) return undefined;
  return db
    .selectFrom('oauth_clients')
    .selectAll()
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
}

export function clientRedirectUris(row: OAuthClientsTable): string[] {
  return fromJson<string[]>(row.redirect_uris, []);
}

/** Under any held key (a secret rotation under way); `rehashClientSecret` then moves it to the current key. */
export function secretMatches(deps: Deps, row: OAuthClientsTable, secret: string): boolean {
  if (!row.secret_hash) return false;
  return deps.keys.verify('oauth-client-secret', secret, row.secret_hash);
}

/**
 * A client that authenticated with a secret stored under a previous key gets it re-keyed to the current
 * one (so it keeps working once the previous key is dropped). Only when still the same stored hash.
 */
export async function rehashClientSecret(deps: Deps, row: OAuthClientsTable, secret: string): Promise<void> {
  const current = deps.keys.hash('oauth-client-secret', secret);
  if (!row.secret_hash || row.secret_hash === current) return;
  await deps.db
    .updateTable('oauth_clients')
    .set({ secret_hash: current, hash_key_id: deps.keys.keyId })
    .where('id', '=', row.id)
    .where('org_id', '=', row.org_id)
    .where('secret_hash', '=', row.secret_hash)
    .execute();
}
