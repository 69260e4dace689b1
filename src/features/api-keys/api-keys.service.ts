import type { Deps } from '../../deps.ts';
import { publishEvent } from '../../core/events/index.ts';
import { audit } from '../../core/audit.ts';
import { privilegesWithin, requireOwnSignIn, requirePrivileges } from '../../core/authz/authorize.ts';
import type { Principal } from '../../core/authz/principal.ts';
import type { ApiKeysTable } from '../../core/db/schema.ts';
import { forbidden, invalidField, notFound } from '../../core/http/errors.ts';
import { decodeCursor, encodeCursor } from '../../core/http/pagination.ts';
import { isUuid, newId } from '../../core/ids.ts';
import { createServiceAccount, findRole, parsePrivileges } from '../identity/index.ts';
import { disableServiceAccount, findApiKey, insertApiKey, markRevoked, pageOfApiKeys } from './api-keys.repo.ts';
import {
  PAGE_DEFAULT,
  type ApiKey,
  type ApiKeyCreate,
  type ApiKeyCreated,
  type ApiKeyListInput,
  type ApiKeyPage,
} from './api-keys.schemas.ts';
import { generateKey, keyHint } from './secrets/key-format.ts';

/** Latest instant an ISO-8601 date-time can name with a four-digit year. */
const MAX_EXPIRY = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export function toApiKey(row: ApiKeysTable, pendingLastUsed?: number): ApiKey {
  const lastUsed = Math.max(row.last_used_at ?? -1, pendingLastUsed ?? -1);
  return {
    id: row.id,
    name: row.name,
    keyHint: row.key_hint,
    roleId: row.role_id,
    createdAt: iso(row.created_at)!,
    createdBy: row.created_by,
    expiresAt: iso(row.expires_at),
    revokedAt: iso(row.revoked_at),
    lastUsedAt: lastUsed < 0 ? null : iso(lastUsed),
  };
}

function parseExpiry(value: string | number | undefined, now: number): number | null {
  if (value === undefined) return null;
  const ms = typeof value === 'number' ? value : Date.parse(value);
  if (!Number.isFinite(ms) || ms > MAX_EXPIRY) throw invalidField('body.expiresAt', 'is not a valid timestamp');
  if (ms <= now) throw invalidField('body.expiresAt', 'must be in the future');
  return ms;
}

/**
 * A new key acting as a new service account with role `roleId`. The role may not hold anything
 * the creator lacks (403), and at every use the key's rights are cut to the creator's current ones.
 */
export async function createApiKey(
  deps: Deps,
  principal: Principal,
  input: ApiKeyCreate,
  ip: string,
): Promise<ApiKeyCreated> {
  requirePrivileges(principal, 'api_key_management');
  // A key minting keys (or a borrowed token doing so) would let access outlive what granted it.
  requireOwnSignIn(principal, 'Creating an API key');
  const now = deps.clock.now();
  const name = input.name.trim();
  if (name.length === 0) throw invalidField('body.name', 'must not be blank');
  const expiresAt = parseExpiry(input.expiresAt, now);
  if (!isUuid(input.roleId)) throw invalidField('body.roleId', 'is not a role id');
  const role = await findRole(deps.db, principal.orgId, input.roleId);
  if (!role) throw invalidField('body.roleId', 'names no role of this organization');
  if (!privilegesWithin(parsePrivileges(role.privileges), principal.privileges)) {
    throw forbidden('A role with privileges you do not hold cannot be given to an API key');
  }

  const key = generateKey();
  const id = newId(now);
  const serviceUserId = newId(now);
  const hint = keyHint(key);
  await deps.db.transaction().execute(async (trx) => {
    await createServiceAccount(trx, {
      id: serviceUserId,
      orgId: principal.orgId,
      username: `apikey-${id}`,
      lastName: name,
      roleId: role.id,
      now,
    });
    await insertApiKey(trx, {
      id,
      org_id: principal.orgId,
      name,
      key_hash: deps.keys.hash('api-key', key),
      hash_key_id: deps.keys.keyId,
      key_hint: hint,
      role_id: role.id,
      service_user_id: serviceUserId,
      created_by: principal.userId,
      created_at: now,
      expires_at: expiresAt,
      revoked_at: null,
      revoked_by: null,
      last_used_at: null,
    });
    await audit(trx, {
      orgId: principal.orgId,
      at: now,
      actorId: principal.userId,
      action: 'api_key.created',
      targetType: 'api_key',
      targetId: id,
      ip,
      data: {
        name,
        roleId: role.id,
        keyHint: hint,
        expiresAt: iso(expiresAt),
        serviceUserId,
        impersonatorId: principal.impersonatorId,
      },
    });
    await publishEvent(trx, now, {
      orgId: principal.orgId,
      type: 'api_key.created',
      actor: principal.userId,
      data: { apiKey: { id, name, keyHint: hint, roleId: role.id, expiresAt: iso(expiresAt) } },
    });
  });
  return { id, name, keyHint: hint, ...(expiresAt === null ? {} : { expiresAt: iso(expiresAt)! }), key };
}

function parsePageCursor(cursor: string | undefined): { createdAt: number; id: string } | null {
  if (cursor === undefined || cursor === '') return null;
  const [createdAt, id] = decodeCursor(cursor, 'body.pageCursor', 2);
  if (typeof createdAt !== 'number' || typeof id !== 'string')
    throw invalidField('body.pageCursor', 'is not a cursor this server issued');
  return { createdAt, id };
}

/** The organization's keys, oldest first, by keyset cursor. */
export async function listApiKeys(deps: Deps, principal: Principal, input: ApiKeyListInput): Promise<ApiKeyPage> {
  requirePrivileges(principal, 'api_key_management');
  const maxSize = input.maxSize ?? PAGE_DEFAULT;
  const rows = await pageOfApiKeys(deps.db, {
    orgId: principal.orgId,
    now: deps.clock.now(),
    after: parsePageCursor(input.pageCursor),
    limit: maxSize + 1,
    includeRevoked: input.includeRevoked === true,
    includeExpired: input.includeExpired === true,
  });
  const page = rows.slice(0, maxSize);
  const last = page.at(-1);
  const tracker = deps.runtime.apiKeys.usage;
  return {
    apiKeys: page.map((row) => toApiKey(row, tracker.pendingLastUsed(row.id))),
    pagination: {
      nextPageCursor: rows.length > maxSize && last ? encodeCursor([last.created_at, last.id]) : null,
      maxSize,
    },
  };
}

/** Irreversible and idempotent: a second revoke returns the record with the first revokedAt. */
export async function revokeApiKey(deps: Deps, principal: Principal, id: string, ip: string): Promise<ApiKey> {
  requirePrivileges(principal, 'api_key_management');
  if (!isUuid(id)) throw invalidField('body.id', 'is not an API key id');
  const now = deps.clock.now();
  const row = await deps.db.transaction().execute(async (trx) => {
    if (!(await findApiKey(trx, principal.orgId, id))) throw notFound('API key');
    if (await markRevoked(trx, principal.orgId, id, now, principal.userId)) {
      // Keeps user listings truthful; authentication itself goes by revoked_at.
      await disableServiceAccount(trx, principal.orgId, id, now);
      await audit(trx, {
        orgId: principal.orgId,
        at: now,
        actorId: principal.userId,
        action: 'api_key.revoked',
        targetType: 'api_key',
        targetId: id,
        ip,
        data: { impersonatorId: principal.impersonatorId },
      });
      const revoked = (await findApiKey(trx, principal.orgId, id))!;
      await publishEvent(trx, now, {
        orgId: principal.orgId,
        type: 'api_key.revoked',
        actor: principal.userId,
        data: {
          apiKey: {
            id,
            name: revoked.name,
            keyHint: revoked.key_hint,
            roleId: revoked.role_id,
            expiresAt: iso(revoked.expires_at),
          },
        },
      });
    }
    return (await findApiKey(trx, principal.orgId, id))!;
  });
  return toApiKey(row, deps.runtime.apiKeys.usage.pendingLastUsed(row.id));
}
