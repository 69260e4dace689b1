import type { Db } from '../../core/db/connect.ts';
import type { AuditRow } from './chain/chain.ts';

export interface AuditFilter {
  /** A user: rows it made, or made while impersonating someone */
  actor?: string;
  apiKey?: string;
  /** Any object the row names (audit_objects) */
  object?: string;
  /** operationId or action */
  operation?: string;
  /** Epoch ms, inclusive / exclusive */
  from?: number;
  to?: number;
  /** Keyset: rows with a smaller seq (newest first) */
  beforeSeq?: number;
}

/** One page of an organization's sealed rows, newest first. */
export async function listRows(db: Db, orgId: string, filter: AuditFilter, limit: number): Promise<AuditRow[]> {
  let q = db.selectFrom('audit_log').selectAll().where('org_id', '=', orgId).where('seq', 'is not', null);
  if (filter.actor !== undefined) {
    const actor = filter.actor;
    q = q.where((eb) => eb.or([eb('actor_id', '=', actor), eb('impersonator_id', '=', actor)]));
  }
  if (filter.apiKey !== undefined) q = q.where('api_key_id', '=', filter.apiKey);
  if (filter.operation !== undefined) {
    const op = filter.operation;
    q = q.where((eb) => eb.or([eb('operation', '=', op), eb('action', '=', op)]));
  }
  if (filter.object !== undefined) {
    q = q.where(
      'id',
      'in',
      db
        .selectFrom('audit_objects')
        .select('audit_id')
        .where('org_id', '=', orgId)
        .where('object_id', '=', filter.object),
    );
  }
  if (filter.from !== undefined) q = q.where('at', '>=', filter.from);
  if (filter.to !== undefined) q = q.where('at', '<', filter.to);
  if (filter.beforeSeq !== undefined) q = q.where('seq', '<', filter.beforeSeq);
  return q.orderBy('seq', 'desc').limit(limit).execute();
}

/** Whether the organization has committed rows the sealer has not chained yet. */
export async function hasUnsealed(db: Db, orgId: string): Promise<boolean> {
  const row = await db
    .selectFrom('audit_log')
    .select('id')
    .where('org_id', '=', orgId)
    .where('seq', 'is', null)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
