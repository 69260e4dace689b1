import { sql } from 'kysely';
import type { Db, DbOrTrx, Trx } from '../../core/db/connect.ts';
import { newId } from '../../core/ids.ts';
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
  const [row, pending] = await Promise.all([
    db.selectFrom('org_usage').select(['storage_bytes', 'assets']).where('org_id', '=', orgId).executeTakeFirst(),
    pendingDeltas(db, orgId),
  ]);
  return {
    storageBytes: Math.max(0, Number(row?.storage_bytes ?? 0) + pending.storageBytes),
    assets: Math.max(0, Number(row?.assets ?? 0) + pending.assets),
  };
}

/** The sum of the organization's deltas not yet folded into org_usage (see `foldUsage`). */
async function pendingDeltas(db: DbOrTrx, orgId: string): Promise<Holdings> {
  const row = await db
    .selectFrom('org_usage_deltas')
    .select((eb) => [eb.fn.sum<number>('storage_bytes').as('bytes'), eb.fn.sum<number>('assets').as('assets')])
    .where('org_id', '=', orgId)
    .executeTakeFirst();
  return { storageBytes: Number(row?.bytes ?? 0), assets: Number(row?.assets ?? 0) };
}

/** Records a change of what the organization holds as a row of its own: no shared row is locked. */
async function appendDelta(trx: Trx, orgId: string, now: number, bytes: number, assets: number): Promise<void> {
  await trx
    .insertInto('org_usage_deltas')
    .values({ id: newId(now), org_id: orgId, storage_bytes: bytes, assets, created_at: now })
    .execute();
}

/**
 * Folds the organization's deltas into its org_usage row, in the caller's transaction, and leaves
 * that row locked until it ends. The row is locked before the deltas are taken, so two folds of one
 * organization cannot deadlock on each other's delta rows; `delete … returning` hands each delta to
 * exactly one fold. Never below zero (a purge's negative delta may come before the add it undoes
 * is folded, never after it is counted twice).
 */
async function foldOrg(trx: Trx, orgId: string, now: number): Promise<void> {
  await trx
    .insertInto('org_usage')
    .values({ org_id: orgId, storage_bytes: 0, assets: 0, updated_at: now })
    .onConflict((oc) => oc.column('org_id').doNothing())
    .execute();
  await trx.updateTable('org_usage').set({ updated_at: now }).where('org_id', '=', orgId).execute();
  const taken = await trx
    .deleteFrom('org_usage_deltas')
    .where('org_id', '=', orgId)
    .returning(['storage_bytes', 'assets'])
    .execute();
  if (taken.length === 0) return;
  let bytes = 0;
  let assets = 0;
  for (const d of taken) {
    bytes += Number(d.storage_bytes);
    assets += Number(d.assets);
  }
  await trx
    .updateTable('org_usage')
    .set({
      storage_bytes: sql<number>`case when storage_bytes + ${bytes} > 0 then storage_bytes + ${bytes} else 0 end`,
      assets: sql<number>`case when assets + ${assets} > 0 then assets + ${assets} else 0 end`,
    })
    .where('org_id', '=', orgId)
    .execute();
}

/**
 * Folds every organization's pending deltas into org_usage, one short transaction per organization
 * (run every second by the workers, src/workers.ts). Only this and quota-limited reservations lock an
 * org_usage row, never for longer than the fold. Returns how many organizations were folded.
 */
export async function foldUsage(db: Db, now: number): Promise<number> {
  const orgs = await db.selectFrom('org_usage_deltas').select('org_id').distinct().execute();
  for (const { org_id } of orgs) await db.transaction().execute((trx) => foldOrg(trx, org_id, now));
  return orgs.length;
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
 * stores them, or throws (413 storage, 409 assets) when that would pass a quota.
 *
 * With no quota on what is added, the change appends a delta row (`org_usage_deltas`): concurrent
 * uploads of one organization, in any number of processes, share no row and never wait on each
 * other (decision 0021). With a quota, the organization's row is locked and its pending deltas are
 * folded into it, then one conditional UPDATE does both the check and the addition, so concurrent
 * requests cannot together pass the quota: the row is held by the first until it commits
 * (PostgreSQL re-reads it for the next; SQLite has one writer at a time), and each sees the others'
 * additions. Every addition to a limited quantity takes this path, so a committed total never
 * exceeds a quota (set below current use, nothing more is added).
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
  const byteLimit = bytes > 0 ? limits.storageBytes.limit : null;
  const assetLimit = assets > 0 ? limits.assets.limit : null;
  if (byteLimit === null && assetLimit === null) return appendDelta(trx, orgId, now, bytes, assets);
  await foldOrg(trx, orgId, now);
  let update = trx
    .updateTable('org_usage')
    .set((eb) => ({
      storage_bytes: eb('storage_bytes', '+', bytes),
      assets: eb('assets', '+', assets),
      updated_at: now,
    }))
    .where('org_id', '=', orgId);
  if (byteLimit !== null) update = update.where((eb) => eb(eb('storage_bytes', '+', bytes), '<=', byteLimit));
  if (assetLimit !== null) update = update.where((eb) => eb(eb('assets', '+', assets), '<=', assetLimit));
  const result = await update.executeTakeFirst();
  if (Number(result.numUpdatedRows) > 0) return;
  const held = await orgHoldings(trx, orgId);
  if (byteLimit !== null && held.storageBytes + bytes > byteLimit)
    throw storageRefused(byteLimit, held.storageBytes, bytes);
  throw assetsRefused(assetLimit ?? 0, held.assets, assets);
}

/**
 * Takes purged content and assets off what the organization holds, in the purge's transaction, as a
 * negative delta (no row lock; the fold keeps the total at zero or above). A reservation racing it
 * may not see it yet and refuse: the safe side of a quota.
 */
export async function releaseHoldings(
  trx: Trx,
  orgId: string,
  now: number,
  remove: { bytes?: number; assets?: number },
): Promise<void> {
  const bytes = Math.max(0, remove.bytes ?? 0);
  const assets = Math.max(0, remove.assets ?? 0);
  if (bytes === 0 && assets === 0) return;
  await appendDelta(trx, orgId, now, -bytes, -assets);
}
