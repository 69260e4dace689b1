import type { DbOrTrx } from './db/connect.ts';
import { toJson } from './db/json.ts';
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
}

/** Records who did what; write it in the same transaction as the change it describes. */
export async function audit(db: DbOrTrx, entry: AuditEntry): Promise<void> {
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
      data: toJson(entry.data ?? {}),
    })
    .execute();
}
