import type { DbOrTrx } from '../../core/db/connect.ts';
import type { ApiKeysTable } from '../../core/db/schema.ts';
import { disableUser } from '../identity/index.ts';

/** Queries on api_keys. Every one but the credential lookup is scoped to one organization. */
export function insertApiKey(db: DbOrTrx, row: ApiKeysTable): Promise<unknown> {
  return db.insertInto('api_keys').values(row).execute();
}

export function findApiKey(db: DbOrTrx, orgId: string, id: string): Promise<ApiKeysTable | undefined> {
  return db.selectFrom('api_keys').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
}

/** Sets revoked_at once; a second call changes nothing. Returns whether this call revoked it. */
export async function markRevoked(db: DbOrTrx, orgId: string, id: string, at: number, by: string): Promise<boolean> {
  const result = await db
    .updateTable('api_keys')
    .set({ revoked_at: at, revoked_by: by })
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function disableServiceAccount(db: DbOrTrx, orgId: string, apiKeyId: string, at: number): Promise<void> {
  const key = await db
    .selectFrom('api_keys')
    .select('service_user_id')
    .where('org_id', '=', orgId)
    .where('id', '=', apiKeyId)
    .executeTakeFirst();
  if (key) await disableUser(db, orgId, key.service_user_id, at);
}

export interface PageQuery {
  orgId: string;
  now: number;
  after: { createdAt: number; id: string } | null;
  limit: number;
  includeRevoked: boolean;
  includeExpired: boolean;
}

/** Keyset page ordered by (created_at, id): rows created or revoked mid-walk cannot shift it. */
export function pageOfApiKeys(db: DbOrTrx, q: PageQuery): Promise<ApiKeysTable[]> {
  let query = db.selectFrom('api_keys').selectAll().where('org_id', '=', q.orgId);
  if (!q.includeRevoked) query = query.where('revoked_at', 'is', null);
  if (!q.includeExpired)
    query = query.where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', q.now)]));
  const after = q.after;
  if (after) {
    query = query.where((eb) =>
      eb.or([
        eb('created_at', '>', after.createdAt),
        eb.and([eb('created_at', '=', after.createdAt), eb('id', '>', after.id)]),
      ]),
    );
  }
  return query.orderBy('created_at').orderBy('id').limit(q.limit).execute();
}

/** Moves last_used_at forward only, so instances flushing out of order never move it back. */
export async function recordLastUsed(db: DbOrTrx, orgId: string, id: string, at: number): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({ last_used_at: at })
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at)]))
    .execute();
}

/** Records an address the key was used from; true only the first time (any instance) it is seen. */
export async function rememberIp(
  db: DbOrTrx,
  orgId: string,
  apiKeyId: string,
  ip: string,
  at: number,
): Promise<boolean> {
  const result = await db
    .insertInto('api_key_ips')
    .values({ api_key_id: apiKeyId, ip, org_id: orgId, first_seen_at: at })
    .onConflict((oc) => oc.columns(['api_key_id', 'ip']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}
