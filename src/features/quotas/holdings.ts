import { sql } from 'kysely';
import type { DbOrTrx, Trx } from '../../core/db/connect.ts';
import { AppError } from '../../core/http/errors.ts';
import type { Config } from '../../config.ts';
import { orgLimits, type Limits } from './limits.ts';

type QuotaConfig = Pick<Config, 'quotas' | 'shareMailPerOrgPerHour'>;

/** What an organization holds: bytes of stored content (every version, recycle bin included) and assets. */
export interface Holdings {
  storageBytes: number;
  assets: number;
}

export async function orgHoldings(db: DbOrTrx, orgId: string): Promise<Holdings> {
  const row = await db
    .selectFrom('org_usage')
    .select(['storage_bytes', 'assets'])
    .where('org_id', '=', orgId)
    .executeTakeFirst();
  return { storageBytes: Number(row?.storage_bytes ?? 0), assets: Number(row?.assets ?? 0) };
}

function storageRefused(limit: number, used: number, bytes: number): AppError {
  return new AppError(
    'payload_too_large',
    `Storage quota exceeded: the organization holds ${used} of its ${limit} bytes (storageBytes) and this content is ${bytes} bytes; nothing was kept`,
    { quota: { name: 'storageBytes', limit, used, requested: bytes } },
  );
}

function assetsRefused(limit: number, used: number, count: number): AppError {
  return new AppError(
    'conflict',
    `Asset quota reached: the organization holds ${used} of its ${limit} assets (assets) and this request adds ${count}; nothing was created`,
    { quota: { name: 'assets', limit, used, requested: count } },
  );
}

/**
 * A check without a reservation, to refuse early (before bytes are received or moved): 413 when
 * `bytes` more would take the organization past its storage quota, 409 when `assets` more would take
 * it past its asset quota. The check that holds is `reserveHoldings`, in the change's transaction.
 */
export async function checkRoom(
  db: DbOrTrx,
  config: QuotaConfig,
  orgId: string,
  add: { bytes?: number; assets?: number },
  limits?: Limits,
): Promise<void> {
  const bytes = add.bytes ?? 0;
  const assets = add.assets ?? 0;
  if (bytes <= 0 && assets <= 0) return;
  const l = limits ?? (await orgLimits(db, config, orgId));
  if ((bytes <= 0 || l.storageBytes.limit === null) && (assets <= 0 || l.assets.limit === null)) return;
  const held = await orgHoldings(db, orgId);
  if (bytes > 0 && l.storageBytes.limit !== null && held.storageBytes + bytes > l.storageBytes.limit)
    throw storageRefused(l.storageBytes.limit, held.storageBytes, bytes);
  if (assets > 0 && l.assets.limit !== null && held.assets + assets > l.assets.limit)
    throw assetsRefused(l.assets.limit, held.assets, assets);
}

/**
 * Adds `bytes` and `assets` to what the organization holds, in the transaction of the change that
 * stores them, or throws (413 storage, 409 assets) when that would pass a quota. One conditional
 * UPDATE does both the check and the addition, so concurrent requests in any number of processes
 * cannot together pass the quota: the row is locked by the first until it commits (PostgreSQL
 * re-reads it for the next; SQLite has one writer at a time), and each sees the others' additions.
 * Committed holdings therefore never exceed a quota (set below current use, nothing more is added).
 */
export async function reserveHoldings(
  trx: Trx,
  config: QuotaConfig,
  orgId: string,
  now: number,
  add: { bytes?: number; assets?: number },
): Promise<void> {
  const bytes = Math.max(0, add.bytes ?? 0);
  const assets = Math.max(0, add.assets ?? 0);
  if (bytes === 0 && assets === 0) return;
  const limits = await orgLimits(trx, config, orgId);
  await trx
    .insertInto('org_usage')
    .values({ org_id: orgId, storage_bytes: 0, assets: 0, updated_at: now })
    .onConflict((oc) => oc.column('org_id').doNothing())
    .execute();
  let update = trx
    .updateTable('org_usage')
    .set((eb) => ({
      storage_bytes: eb('storage_bytes', '+', bytes),
      assets: eb('assets', '+', assets),
      updated_at: now,
    }))
    .where('org_id', '=', orgId);
  const byteLimit = bytes > 0 ? limits.storageBytes.limit : null;
  const assetLimit = assets > 0 ? limits.assets.limit : null;
  if (byteLimit !== null) update = update.where((eb) => eb(eb('storage_bytes', '+', bytes), '<=', byteLimit));
  if (assetLimit !== null) update = update.where((eb) => eb(eb('assets', '+', assets), '<=', assetLimit));
  const result = await update.executeTakeFirst();
  if (Number(result.numUpdatedRows) > 0) return;
  const held = await orgHoldings(trx, orgId);
  if (byteLimit !== null && held.storageBytes + bytes > byteLimit)
    throw storageRefused(byteLimit, held.storageBytes, bytes);
  throw assetsRefused(assetLimit ?? 0, held.assets, assets);
}

/** Takes purged content and assets off what the organization holds (never below zero), in the purge's transaction. */
export async function releaseHoldings(
  trx: Trx,
  orgId: string,
  now: number,
  remove: { bytes?: number; assets?: number },
): Promise<void> {
  const bytes = Math.max(0, remove.bytes ?? 0);
  const assets = Math.max(0, remove.assets ?? 0);
  if (bytes === 0 && assets === 0) return;
  await trx
    .updateTable('org_usage')
    .set({
      storage_bytes: sql<number>`case when storage_bytes > ${bytes} then storage_bytes - ${bytes} else 0 end`,
      assets: sql<number>`case when assets > ${assets} then assets - ${assets} else 0 end`,
      updated_at: now,
    })
    .where('org_id', '=', orgId)
    .execute();
}
