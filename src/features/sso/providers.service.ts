import type { Deps } from '../../deps.ts';
import { audit } from '../../core/audit.ts';
import { requireOwnSignIn, requirePrivileges } from '../../core/authz/authorize.ts';
import { ALL_PRIVILEGES } from '../../core/authz/catalog.ts';
import { assertWithin, holdingsOf, holdingsOfPrincipal } from '../../core/authz/ceiling.ts';
import type { Principal } from '../../core/authz/principal.ts';
import type { DbOrTrx } from '../../core/db/connect.ts';
import { fromJson, toJson } from '../../core/db/json.ts';
import type { SsoProvidersTable } from '../../core/db/schema.ts';
import { AppError, invalidField, notFound } from '../../core/http/errors.ts';
import { newId, isUuid } from '../../core/ids.ts';
import { existingGroupIds, findRole, parsePrivileges } from '../identity/index.ts';
import { discover, ProviderError, type ProviderMetadata } from './oidc.ts';

/**
 * An identity provider can sign people in as accounts of the organization (by subject, by verified
 * e-mail, or new ones): only an administrator holding every privilege may see or change one, and
 * changes take their own sign-in (not an API key, impersonation or a third-party OAuth token).
 */
function requireAdministrator(principal: Principal, change: boolean): void {
  requirePrivileges(principal, ...ALL_PRIVILEGES);
  if (change) requireOwnSignIn(principal, 'Configuring identity providers');
}
const DEFAULT_SCOPES = ['openid', 'email', 'profile'];

export interface GroupMapping {
  value: string;
  groupId: string;
}

export interface ProviderInput {
  name?: string;
  issuer?: string;
  clientId?: string;
  clientSecret?: string | null;
  scopes?: string[];
  groupsClaim?: string;
  groupMappings?: GroupMapping[];
  defaultRoleId?: string;
  jitProvisioning?: boolean;
  enabled?: boolean;
}

export const callbackUrl = (deps: Deps) => `${deps.config.publicUrl}/v1/sso/callback`;
export const loggedOutUrl = (deps: Deps) => `${deps.config.publicUrl}/v1/sso/logged-out`;

export function mappingsOf(row: SsoProvidersTable): GroupMapping[] {
  return fromJson<GroupMapping[]>(row.group_mappings, []);
}

function view(deps: Deps, row: SsoProvidersTable) {
  return {
    id: row.id,
    name: row.name,
    issuer: row.issuer,
    clientId: row.client_id,
    hasClientSecret: row.client_secret !== null,
    scopes: row.scopes.split(' '),
    groupsClaim: row.groups_claim,
    groupMappings: mappingsOf(row),
    defaultRoleId: row.default_role_id,
    jitProvisioning: row.jit === 1,
    enabled: row.enabled === 1,
    redirectUri: callbackUrl(deps),
    postLogoutRedirectUri: loggedOutUrl(deps),
    endpoints: {
      authorization: row.authorization_endpoint,
      token: row.token_endpoint,
      jwks: row.jwks_uri,
      endSession: row.end_session_endpoint,
    },
    createdEpoch: row.created_at,
    updatedEpoch: row.updated_at,
  };
}

export type SsoProviderView = ReturnType<typeof view>;

export function findProvider(db: DbOrTrx, orgId: string, id: string): Promise<SsoProvidersTable | undefined> {
  if (!isUuid(id)) return Promise.resolve(undefined);
  return db.selectFrom('sso_providers').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
}

/** Any organization's provider (sign-in, before anyone is known); callers check the organization. */
export function findProviderById(db: DbOrTrx, id: string): Promise<SsoProvidersTable | undefined> {
  if (!isUuid(id)) return Promise.resolve(undefined);
  return db.selectFrom('sso_providers').selectAll().where('id', '=', id).executeTakeFirst();
}

function issuerProblem(issuer: string): string | null {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an http(s) URL';
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '')
    return 'must have no query, fragment or credentials';
  return null;
}

async function fetchMetadata(deps: Deps, issuer: string): Promise<ProviderMetadata> {
  const problem = issuerProblem(issuer);
  if (problem) throw invalidField('body.issuer', problem);
  try {
    return await discover(deps, issuer);
  } catch (err) {
    if (err instanceof ProviderError)
      throw new AppError('unprocessable', `body.issuer: discovery failed: ${err.message}`, {
        details: [{ field: 'body.issuer', message: `discovery failed: ${err.message}` }],
      });
    throw err;
  }
}

/** Mapped groups and the default role must exist here, and give nobody more than the administrator holds. */
async function checkGrants(
  db: DbOrTrx,
  principal: Principal,
  roleId: string,
  mappings: readonly GroupMapping[],
): Promise<void> {
  const role = await findRole(db, principal.orgId, roleId);
  if (!role) throw invalidField('body.defaultRoleId', 'names no role of this organization');
  const groupIds = [...new Set(mappings.map((m) => m.groupId))];
  const existing = await existingGroupIds(db, principal.orgId, groupIds);
  const missing = groupIds.findIndex((g) => !existing.has(g));
  if (missing >= 0)
    throw invalidField(
      `body.groupMappings.${mappings.findIndex((m) => m.groupId === groupIds[missing])}.groupId`,
      'names no group of this organization',
    );
  const candidate = await holdingsOf(db, principal.orgId, parsePrivileges(role.privileges), groupIds);
  assertWithin(candidate, await holdingsOfPrincipal(db, principal), 'The default role and mapped groups give');
}

function normalizeScopes(scopes: readonly string[] | undefined): string {
  return [...new Set(['openid', ...(scopes ?? DEFAULT_SCOPES)])].join(' ');
}

export async function createProvider(
  deps: Deps,
  principal: Principal,
  input: Required<Pick<ProviderInput, 'name' | 'issuer' | 'clientId' | 'defaultRoleId'>> & ProviderInput,
) {
  requireAdministrator(principal, true);
  const mappings = input.groupMappings ?? [];
  await checkGrants(deps.db, principal, input.defaultRoleId, mappings);
  const metadata = await fetchMetadata(deps, input.issuer);
  const now = deps.clock.now();
  const row: SsoProvidersTable = {
    id: newId(now),
    org_id: principal.orgId,
    name: input.name,
    issuer: input.issuer,
    client_id: input.clientId,
    client_secret: input.clientSecret ? deps.keys.encrypt(input.clientSecret) : null,
    scopes: normalizeScopes(input.scopes),
    groups_claim: input.groupsClaim ?? 'groups',
    group_mappings: toJson(mappings),
    default_role_id: input.defaultRoleId,
    jit: input.jitProvisioning === false ? 0 : 1,
    enabled: input.enabled === false ? 0 : 1,
    authorization_endpoint: metadata.authorization_endpoint,
    token_endpoint: metadata.token_endpoint,
    jwks_uri: metadata.jwks_uri,
    end_session_endpoint: metadata.end_session_endpoint ?? null,
    created_by: principal.userId,
    created_at: now,
    updated_at: now,
  };
  await deps.db.transaction().execute(async (trx) => {
    await trx.insertInto('sso_providers').values(row).execute();
    await audit(trx, {
      orgId: principal.orgId,
      at: now,
      actorId: principal.userId,
      action: 'sso.provider.create',
      targetType: 'sso_provider',
      targetId: row.id,
      data: {
        name: row.name,
        issuer: row.issuer,
        clientId: row.client_id,
        hasClientSecret: row.client_secret !== null,
      },
    });
  });
  return view(deps, row);
}

export async function listProviders(deps: Deps, principal: Principal) {
  requireAdministrator(principal, false);
  const rows = await deps.db
    .selectFrom('sso_providers')
    .selectAll()
    .where('org_id', '=', principal.orgId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return { providers: rows.map((r) => view(deps, r)) };
}

export async function getProvider(deps: Deps, principal: Principal, id: string) {
  requireAdministrator(principal, false);
  const row = await findProvider(deps.db, principal.orgId, id);
  if (!row) throw notFound('Identity provider');
  return view(deps, row);
}

export async function updateProvider(deps: Deps, principal: Principal, id: string, input: ProviderInput) {
  requireAdministrator(principal, true);
  const current = await findProvider(deps.db, principal.orgId, id);
  if (!current) throw notFound('Identity provider');
  const mappings = input.groupMappings ?? mappingsOf(current);
  if (input.groupMappings !== undefined || input.defaultRoleId !== undefined)
    await checkGrants(deps.db, principal, input.defaultRoleId ?? current.default_role_id, mappings);
  const issuer = input.issuer ?? current.issuer;
  const metadata =
    input.issuer !== undefined && input.issuer !== current.issuer ? await fetchMetadata(deps, issuer) : undefined;
  const now = deps.clock.now();
  const next: SsoProvidersTable = {
    ...current,
    name: input.name ?? current.name,
    issuer,
    client_id: input.clientId ?? current.client_id,
    client_secret:
      input.clientSecret === undefined
        ? current.client_secret
        : input.clientSecret === null
          ? null
          : deps.keys.encrypt(input.clientSecret),
    scopes: input.scopes ? normalizeScopes(input.scopes) : current.scopes,
    groups_claim: input.groupsClaim ?? current.groups_claim,
    group_mappings: toJson(mappings),
    default_role_id: input.defaultRoleId ?? current.default_role_id,
    jit: input.jitProvisioning === undefined ? current.jit : input.jitProvisioning ? 1 : 0,
    enabled: input.enabled === undefined ? current.enabled : input.enabled ? 1 : 0,
    ...(metadata
      ? {
          authorization_endpoint: metadata.authorization_endpoint,
          token_endpoint: metadata.token_endpoint,
          jwks_uri: metadata.jwks_uri,
          end_session_endpoint: metadata.end_session_endpoint ?? null,
        }
      : {}),
    updated_at: now,
  };
  const changes: Record<string, { before: unknown; after: unknown }> = {};
  const before = view(deps, current) as Record<string, unknown>;
  const after = view(deps, next) as Record<string, unknown>;
  for (const key of Object.keys(after))
    if (key !== 'updatedEpoch' && JSON.stringify(before[key]) !== JSON.stringify(after[key]))
      changes[key] = { before: before[key], after: after[key] };
  await deps.db.transaction().execute(async (trx) => {
    await trx
      .updateTable('sso_providers')
      .set({ ...next, id: undefined, org_id: undefined, created_at: undefined, created_by: undefined })
      .where('org_id', '=', principal.orgId)
      .where('id', '=', id)
      .execute();
    await audit(trx, {
      orgId: principal.orgId,
      at: now,
      actorId: principal.userId,
      action: 'sso.provider.update',
      targetType: 'sso_provider',
      targetId: id,
      changes,
      ...(input.clientSecret !== undefined ? { data: { clientSecretChanged: true } } : {}),
    });
  });
  return view(deps, next);
}

/** Deletes a provider; accounts made through it stay (they can no longer sign in through it). */
export async function deleteProvider(deps: Deps, principal: Principal, id: string): Promise<void> {
  requireAdministrator(principal, true);
  const row = await findProvider(deps.db, principal.orgId, id);
  if (!row) throw notFound('Identity provider');
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('sso_logins').where('org_id', '=', principal.orgId).where('provider_id', '=', id).execute();
    await trx
      .deleteFrom('sso_identities')
      .where('org_id', '=', principal.orgId)
      .where('provider_id', '=', id)
      .execute();
    await trx.deleteFrom('sso_providers').where('org_id', '=', principal.orgId).where('id', '=', id).execute();
    await audit(trx, {
      orgId: principal.orgId,
      at: now,
      actorId: principal.userId,
      action: 'sso.provider.delete',
      targetType: 'sso_provider',
      targetId: id,
      data: { name: row.name, issuer: row.issuer },
    });
  });
}
