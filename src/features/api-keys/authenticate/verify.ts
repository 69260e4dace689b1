import { hash as digest } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { createQueryId, sql, type InferResult } from 'kysely';
import type { Deps } from '../../../deps.ts';
import { isPrivilege, type Privilege } from '../../../core/authz/catalog.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import { fromJson } from '../../../core/db/json.ts';
import { addRouteHook, clientIp, type CredentialResolver } from '../../../core/http/authenticate.ts';
import { unauthorized } from '../../../core/http/errors.ts';
import type { Loaded } from '../../../core/db/revision-cache.ts';
import { enabledUsernameOf, enabledUserPrivilegesOf, rolePrivilegesOf } from '../../identity/index.ts';
import { isWellFormedKey, KEY_PREFIX } from '../secrets/key-format.ts';

export const API_KEY_HEADER = 'x-api-key';
/** One message for malformed, unknown, revoked and expired keys: callers learn nothing more. */
export const INVALID_KEY_MESSAGE = 'Invalid API key';

function privilegeSet(json: string): Set<Privilege> {
  return new Set(fromJson<string[]>(json, []).filter(isPrivilege));
}

/**
 * Everything needed to authenticate a key, in one indexed round trip: the key (by its hash), its
 * role, its service account, and its creator's role and groups as they are *now* (null when the
 * creator or the account is disabled), so a key never outlives its creator's rights. Checked on
 * every miss of the principal cache, which drops it the moment an identity table changes. Scalar subqueries rather than joins: PostgreSQL plans them in a fraction of the time.
 */
function buildLookup(deps: Deps, hash: string) {
  const groupList =
    deps.engine === 'postgres'
      ? sql<
          string | null
        >`(select string_agg(ug.group_id, ',') from user_groups ug where ug.org_id = k.org_id and ug.user_id = k.created_by)`
      : sql<
          string | null
        >`(select group_concat(ug.group_id, ',') from user_groups ug where ug.org_id = k.org_id and ug.user_id = k.created_by)`;
  return deps.db
    .selectFrom('api_keys as k')
    .select((eb) => [
      'k.id',
      'k.org_id',
      'k.role_id',
      'k.service_user_id',
      'k.expires_at',
      'k.revoked_at',
      rolePrivilegesOf(deps.db, eb.ref('k.role_id'), eb.ref('k.org_id')).as('key_privileges'),
      enabledUsernameOf(deps.db, eb.ref('k.service_user_id')).as('service_username'),
      enabledUserPrivilegesOf(deps.db, eb.ref('k.created_by'), eb.ref('k.org_id')).as('creator_privileges'),
      groupList.as('creator_groups'),
    ])
    .where('k.key_hash', '=', hash);
}

export type LookupRow = InferResult<ReturnType<typeof buildLookup>>[number];

// Built and compiled once per process (kept in deps.runtime.apiKeys): on the hot path only the
// parameter changes, which saves the query builder's work on every authenticated request.

// Stands in for the hash when compiling; no real hash (base64url) contains a space.
const HASH_SLOT = 'hash slot';

async function lookup(deps: Deps, hash: string): Promise<LookupRow | undefined> {
  const runtime = deps.runtime.apiKeys;
  let compiled = runtime.lookup;
  if (!compiled) {
    compiled = buildLookup(deps, HASH_SLOT).compile();
    if (compiled.parameters.filter((p) => p === HASH_SLOT).length !== 1)
      throw new Error('API key lookup must name the hash exactly once');
    runtime.lookup = compiled;
  }
  const parameters = compiled.parameters.map((p) => (p === HASH_SLOT ? hash : p));
  const result = await deps.db.executeQuery<LookupRow>({ ...compiled, parameters, queryId: createQueryId() });
  return result.rows[0];
}

/**
 * The principal a key authenticates as, or null when the key is malformed, unknown, revoked,
 * expired, or its service account or creator is disabled. Malformed keys cost no I/O; a key seen
 * before costs none either while nothing identity-related has changed (core/db/revision.ts).
 * The cache is keyed by a plain SHA-256 of the presented key (a one-shot digest, a fraction of
 * the keyed hash's cost): a hit then costs neither the format check nor the HMAC, and raw keys
 * are still never kept. The keyed hash, which the database stores, is made only on a miss.
 */
export function verifyApiKey(deps: Deps, key: string, ip: string): Principal | null | Promise<Principal | null> {
  const cache = deps.runtime.apiKeys.principals;
  const cacheKey = digest('sha256', key, 'base64url');
  // A key seen before answers synchronously (no promise), as does its usage bookkeeping from a known address.
  const cached = cache.peek(cacheKey);
  if (cached !== undefined) return recordUse(deps, cached, ip);
  return cache
    .get(cacheKey, () => (isWellFormedKey(key) ? resolveKey(deps, key) : Promise.resolve(null)))
    .then((principal) => (principal ? recordUse(deps, principal, ip) : null));
}

/**
 * The key's row by its hash under the current key (one query: the hot path), else (during a secret
 * rotation, TESSERA_SECRET_KEY_PREVIOUS) under each previous key; a key found so is re-keyed to the
 * current key, so it keeps working once the previous key is dropped.
 */
async function lookupAnyKey(deps: Deps, key: string): Promise<LookupRow | undefined> {
  const [current, ...previous] = deps.keys.hashes('api-key', key);
  const row = await lookup(deps, current!);
  if (row || previous.length === 0) return row;
  for (const hash of previous) {
    const found = await lookup(deps, hash);
    if (!found) continue;
    await deps.db
      .updateTable('api_keys')
      .set({ key_hash: current!, hash_key_id: deps.keys.keyId })
      .where('id', '=', found.id)
      .where('org_id', '=', found.org_id)
      .where('key_hash', '=', hash)
      .execute();
    return found;
  }
  return undefined;
}

function recordUse(deps: Deps, principal: Principal, ip: string): Principal | Promise<Principal> {
  const now = deps.clock.now();
  const tracker = deps.runtime.apiKeys.usage;
  tracker.used(principal.orgId, principal.apiKeyId!, now);
  const firstFromIp = tracker.usedFrom(principal.orgId, principal.apiKeyId!, principal.userId, ip, now);
  return firstFromIp ? firstFromIp.then(() => principal) : principal;
}

async function resolveKey(deps: Deps, key: string): Promise<Loaded<Principal> | null> {
  const row = await lookupAnyKey(deps, key);
  // Read the clock after the lookup: a key expiring while the query ran is already expired.
  const now = deps.clock.now();
  if (!row || row.revoked_at !== null || (row.expires_at !== null && now >= row.expires_at)) return null;
  // Null when the service account or the creator is disabled or gone.
  if (row.service_username === null || row.creator_privileges === null || row.key_privileges === null) return null;
  const creatorPrivileges = privilegeSet(row.creator_privileges);
  const privileges = new Set([...privilegeSet(row.key_privileges)].filter((p) => creatorPrivileges.has(p)));
  return {
    value: {
      kind: 'api_key',
      via: 'api_key',
      orgId: row.org_id,
      userId: row.service_user_id,
      username: row.service_username,
      roleId: row.role_id,
      privileges,
      groupIds: row.creator_groups ? row.creator_groups.split(',').sort() : [],
      apiKeyId: row.id,
    },
    validUntil: row.expires_at ?? Number.POSITIVE_INFINITY,
  };
}

function headerKey(request: FastifyRequest): string | undefined {
  const value = request.headers[API_KEY_HEADER];
  if (value === undefined) return undefined;
  return typeof value === 'string' ? value.trim() : '';
}

/**
 * The Tessera API key a request presents, if any: `X-API-Key: tsk_…`, else `Authorization: Bearer tsk_…`.
 * An X-API-Key without Tessera's prefix is not ours (the reference's gateway key, or a client's unset
 * variable sent as "undefined"): it is ignored, so it neither authenticates nor spoils a valid token.
 */
export function presentedApiKey(request: FastifyRequest): string | undefined {
  const key = headerKey(request);
  if (key !== undefined && key.startsWith(KEY_PREFIX)) return key;
  const authorization = request.headers.authorization;
  if (typeof authorization !== 'string') return undefined;
  const bearer = /^bearer\s+(\S+)\s*$/i.exec(authorization);
  return bearer && bearer[1]!.startsWith(KEY_PREFIX) ? bearer[1] : undefined;
}

/** `X-API-Key: tsk_…` (or `Authorization: Bearer tsk_…`) authenticates as the key's service account. */
export function apiKeyResolver(deps: Deps): CredentialResolver {
  return (request) => {
    const key = presentedApiKey(request);
    if (key === undefined) {
      // Resolvers run in order: reaching here means no token authenticated, so a foreign X-API-Key is all there is.
      if (headerKey(request) !== undefined) throw unauthorized(INVALID_KEY_MESSAGE);
      return null;
    }
    const principal = verifyApiKey(deps, key, clientIp(request));
    if (principal === null) throw unauthorized(INVALID_KEY_MESSAGE);
    if (!(principal instanceof Promise)) return principal;
    return principal.then((resolved) => {
      if (!resolved) throw unauthorized(INVALID_KEY_MESSAGE);
      return resolved;
    });
  };
}

/**
 * When a user credential won and a Tessera API key was sent too, the user stays the principal but
 * the key must still be valid and belong to the user's organization. Call right after
 * registerAuthentication, in the same scope: it adds this check to every authenticated route,
 * after the authentication hook, so it runs once the principal is known.
 */
export function registerApiKeyAlongsideUser(app: FastifyInstance, deps: Deps): void {
  app.addHook('onRoute', (route) => {
    if (route.config?.public) return;
    // A callback hook, not an async one: almost every request has nothing to check here, and on
    // that path it then costs no promise.
    addRouteHook(route, 'onRequest', (request, _reply, done) => {
      const principal = request.principal;
      if (!principal || principal.kind !== 'user') return done();
      const key = presentedApiKey(request);
      if (key === undefined) return done();
      const check = (keyPrincipal: Principal | null) => {
        if (!keyPrincipal || keyPrincipal.orgId !== principal.orgId) done(unauthorized(INVALID_KEY_MESSAGE));
        else done();
      };
      let verified: Principal | null | Promise<Principal | null>;
      try {
        verified = verifyApiKey(deps, key, clientIp(request));
      } catch (error) {
        return done(error as Error);
      }
      if (verified instanceof Promise) verified.then(check, done);
      else check(verified);
    });
  });
}
