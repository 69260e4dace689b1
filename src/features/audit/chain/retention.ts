import { createHash } from 'node:crypto';
import { isUniqueViolation } from '../../../core/db/connect.ts';
import { enqueueJob } from '../../../core/jobs/queue.ts';
import type { Deps } from '../../../deps.ts';
import { auditedOrganizations, lockHead, sealOrg } from './chain.ts';

/**
 * Retention (TESSERA_AUDIT_RETENTION_DAYS; 0 keeps everything): the daily `audit.prune` job deletes
 * each organization's sealed rows older than the cutoff, oldest first, and moves the chain's anchor
 * to the last deleted row (its seq and hash, kept in `audit_heads`), so the rows that remain still
 * verify from there. Enqueued by the sealer loop once a day (a job id derived from the day, so every
 * instance enqueues the same job).
 */
export const PRUNE_JOB = 'audit.prune';
const DAY = 86_400_000;

function dayJobId(day: number): string {
  const hex = createHash('sha256').update(`${PRUNE_JOB}:${day}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export async function schedulePrune(deps: Deps, state: { day: number }): Promise<void> {
  if (deps.config.auditRetentionDays <= 0) return;
  const now = deps.clock.now();
  const day = Math.floor(now / DAY);
  if (state.day === day) return;
  try {
    await enqueueJob(deps.db, now, { id: dayJobId(day), type: PRUNE_JOB, payload: null, maxAttempts: 3 });
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
  }
  state.day = day;
}

/** Deletes one organization's rows older than `cutoff` (epoch ms) and re-anchors its chain. Returns how many. */
export async function pruneOrg(deps: Deps, orgId: string, cutoff: number): Promise<number> {
  await sealOrg(deps.db, deps.engine, deps.keys, orgId);
  return deps.db.transaction().execute(async (trx) => {
    await lockHead(trx, deps.engine, orgId);
    // The chain is cut at a seq: the newest sealed row older than the cutoff and everything before it.
    const last = await trx
      .selectFrom('audit_log')
      .select(['seq', 'hash', 'at'])
      .where('org_id', '=', orgId)
      .where('seq', 'is not', null)
      .where('at', '<', cutoff)
      .orderBy('seq', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (!last || last.seq === null || last.hash === null) return 0;
    const ids = trx.selectFrom('audit_log').select('id').where('org_id', '=', orgId).where('seq', '<=', last.seq);
    await trx.deleteFrom('audit_objects').where('org_id', '=', orgId).where('audit_id', 'in', ids).execute();
    const deleted = await trx
      .deleteFrom('audit_log')
      .where('org_id', '=', orgId)
      .where('seq', '<=', last.seq)
      .executeTakeFirst();
    await trx
      .updateTable('audit_heads')
      .set({ anchor_seq: Number(last.seq), anchor_hash: last.hash, anchor_at: Number(last.at) })
      .where('org_id', '=', orgId)
      .execute();
    return Number(deleted.numDeletedRows);
  });
}

/** The job: every organization's trail is cut at now − retention. */
export async function pruneAll(deps: Deps, retentionDays = deps.config.auditRetentionDays): Promise<number> {
  if (retentionDays <= 0) return 0;
  const cutoff = deps.clock.now() - retentionDays * DAY;
  let total = 0;
  for (const orgId of await auditedOrganizations(deps.db)) total += await pruneOrg(deps, orgId, cutoff);
  return total;
}
