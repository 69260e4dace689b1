import type { DbOrTrx } from './db/connect.ts';
import { toJson } from './db/json.ts';
import { actingPrincipal } from './authz/acting.ts';
import { newId } from './ids.ts';

export interface AuditEntry {
  orgId: string;
  at: number;
  actorId: string | null;
  action: string;
  targetType: string;
  targetId?: string | null;
  ip?: string | null;
  data?: Record<string, unknown>;
  /** The administrator acting as `actorId`; defaults to the impersonator of the request being handled. */
  impersonatorId?: string | null;
}

/** Records who did what; write it in the same transaction as the change it describes. */
export async function audit(db: DbOrTrx, entry: AuditEntry): Promise<void> {
  const acting = actingPrincipal();
  const impersonatorId = entry.impersonatorId !== undefined ? entry.impersonatorId : acting?.orgId === entry.orgId ? (acting.impersonatorId ?? null) : null;
  await db
    .insertInto('audit_log')
    .values({
      id: newId(entry.at),
      org_id: entry.orgId,
      at: entry.at,
      actor_id: entry.actorId,
      action: entry.action,
      target_type: entry.targetType,
      target_id: entry.targetId ?? null,
      ip: entry.ip ?? null,
      data: toJson(impersonatorId ? { ...entry.data, impersonatorId } : (entry.data ?? {})),
      impersonator_id: impersonatorId,
    })
    .execute();
}
