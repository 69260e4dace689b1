import { sql } from 'kysely';
import type { DbOrTrx } from '../../core/db/connect.ts';
import type { CdnZonesTable } from '../../core/db/schema.ts';

export async function findZone(db: DbOrTrx, orgId: string, id: number): Promise<CdnZonesTable | undefined> {
  return db.selectFrom('cdn_zones').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
}

export async function listZoneRows(db: DbOrTrx, orgId: string): Promise<CdnZonesTable[]> {
  return db.selectFrom('cdn_zones').selectAll().where('org_id', '=', orgId).orderBy('id').execute();
}

export async function hostnamesTaken(db: DbOrTrx, hostnames: string[], exceptZone?: number): Promise<string[]> {
  if (hostnames.length === 0) return [];
  let q = db.selectFrom('cdn_zone_hostnames').select('hostname').where('hostname', 'in', hostnames);
  if (exceptZone !== undefined) q = q.where('zone_id', '<>', exceptZone);
  return (await q.execute()).map((r) => r.hostname);
}

export async function replaceHostnames(db: DbOrTrx, orgId: string, zoneId: number, hostnames: string[]): Promise<void> {
  await db.deleteFrom('cdn_zone_hostnames').where('zone_id', '=', zoneId).execute();
  if (hostnames.length > 0)
    await db
      .insertInto('cdn_zone_hostnames')
      .values(hostnames.map((hostname) => ({ hostname, zone_id: zoneId, org_id: orgId })))
      .execute();
}

export async function publishedCounts(db: DbOrTrx, zoneIds: number[]): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  if (zoneIds.length === 0) return out;
  const rows = await db
    .selectFrom('cdn_published_assets')
    .select(['zone_id', sql<number>`count(*)`.as('n')])
    .where('zone_id', 'in', zoneIds)
    .groupBy('zone_id')
    .execute();
  for (const row of rows) out.set(Number(row.zone_id), Number(row.n));
  return out;
}

export async function monthlyBytes(db: DbOrTrx, zoneIds: number[], monthStart: number): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  if (zoneIds.length === 0) return out;
  const rows = await db
    .selectFrom('cdn_stats_hourly')
    .select(['zone_id', sql<number>`sum(bytes_served)`.as('bytes')])
    .where('zone_id', 'in', zoneIds)
    .where('hour', '>=', monthStart)
    .groupBy('zone_id')
    .execute();
  for (const row of rows) out.set(Number(row.zone_id), Number(row.bytes));
  return out;
}

export function monthStartUtc(nowMs: number): number {
  const d = new Date(nowMs);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}
