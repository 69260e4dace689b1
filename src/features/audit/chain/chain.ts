import { sql, type Selectable } from 'kysely';
import type { Db, DbOrTrx, Engine } from '../../../core/db/connect.ts';
import type { AuditLogTable } from '../../../core/db/schema.ts';
import type { Keyring } from '../../../core/keyring.ts';

/**
 * The audit chain. Writers only insert rows (core/audit.ts, in the transaction of the change); this
 * module seals them after commit, one organization at a time: under the lock of the organization's
 * row in `audit_heads`, each unsealed row gets the next `seq` and
 *
 *     hash = HMAC(server key, prev_hash ‖ canonical row)
 *
 * where prev_hash is the previous row's hash (the anchor's after retention pruned older rows, "" at
 * the start). Concurrent sealers queue on the head row, and (org_id, seq) is unique, so the chain
 * cannot fork. Keyed with the server's secret, so someone with only database access cannot rewrite
 * rows and re-chain them consistently. A sealed row cannot be updated (a trigger, migration 0024);
 * `verifyChain` recomputes everything and reports the first broken link.
 */
export type AuditRow = Selectable<AuditLogTable>;

/** Every column that is part of the record, in a fixed order (the chain's own columns excluded). */
export function canonicalRow(row: AuditRow, seq: number): string {
  return JSON.stringify([
    row.org_id,
    seq,
    row.id,
    Number(row.at),
    row.actor_id,
    row.impersonator_id,
    row.via,
    row.api_key_id,
    row.oauth_client_id,
    row.operation,
    row.action,
    row.target_type,
    row.target_id,
    row.ip,
    row.user_agent,
    row.request_id,
    row.data,
  ]);
}

export function chainHash(keys: Keyring, prevHash: string, row: AuditRow, seq: number): string {
  return keys.hash('audit-chain', `${prevHash}\n${canonicalRow(row, seq)}`);
}

interface Head {
  seq: number;
  hash: string;
  anchor_seq: number;
  anchor_hash: string;
  anchor_at: number | null;
}

/** Creates the organization's head row if missing, then locks it for the rest of the transaction. */
export async function lockHead(trx: DbOrTrx, engine: Engine, orgId: string): Promise<Head> {
  await trx
    .insertInto('audit_heads')
    .values({ org_id: orgId, seq: 0, hash: '', anchor_seq: 0, anchor_hash: '', anchor_at: null })
    .onConflict((oc) => oc.column('org_id').doNothing())
    .execute();
  // SQLite transactions here begin immediate (core/db/connect.ts): the write lock is already held.
  const query = trx
    .selectFrom('audit_heads')
    .select(['seq', 'hash', 'anchor_seq', 'anchor_hash', 'anchor_at'])
    .where('org_id', '=', orgId);
  const head = await (engine === 'postgres' ? query.forUpdate() : query).executeTakeFirstOrThrow();
  return { ...head, seq: Number(head.seq), anchor_seq: Number(head.anchor_seq) };
}

const SEAL_BATCH = 500;

/** Seals the organization's committed unsealed rows, oldest first. Returns how many. */
export async function sealOrg(db: Db, engine: Engine, keys: Keyring, orgId: string): Promise<number> {
  let total = 0;
  for (;;) {
    const sealed = await db.transaction().execute(async (trx) => {
      const head = await lockHead(trx, engine, orgId);
      const rows = await trx
        .selectFrom('audit_log')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('seq', 'is', null)
        .orderBy('at')
        .orderBy('id')
        .limit(SEAL_BATCH)
        .execute();
      let { seq, hash } = head;
      const links: ReturnType<typeof sql>[] = [];
      for (const row of rows) {
        seq += 1;
        const next = chainHash(keys, hash, row, seq);
        links.push(sql`(${row.id}, cast(${seq} as bigint), ${hash}, ${next})`);
        hash = next;
      }
      if (rows.length > 0) {
        // One statement for the whole batch (a bulk creation audits up to 1,000 rows at once).
        await sql`with link (id, seq, prev_hash, hash) as (values ${sql.join(links)})
          update audit_log set seq = link.seq, prev_hash = link.prev_hash, hash = link.hash
          from link where audit_log.id = link.id and audit_log.seq is null`.execute(trx);
        await trx.updateTable('audit_heads').set({ seq, hash }).where('org_id', '=', orgId).execute();
      }
      return rows.length;
    });
    total += sealed;
    if (sealed < SEAL_BATCH) return total;
  }
}

/** Seals every organization with unsealed rows (the background loop, and before reads). */
export async function sealPending(db: Db, engine: Engine, keys: Keyring): Promise<number> {
  const orgs = await db.selectFrom('audit_log').select('org_id').distinct().where('seq', 'is', null).execute();
  let total = 0;
  for (const { org_id } of orgs) total += await sealOrg(db, engine, keys, org_id);
  return total;
}

export interface BrokenLink {
  /** The chain position where verification failed */
  seq: number;
  /** The row there, when there is one */
  id: string | null;
  reason: 'missing_row' | 'previous_hash_mismatch' | 'row_altered' | 'head_mismatch';
}

export interface ChainReport {
  orgId: string;
  ok: boolean;
  /** Rows verified */
  checked: number;
  /** Where the chain starts (after the anchor left by retention) and ends */
  firstSeq: number;
  lastSeq: number;
  anchorSeq: number;
  /** Rows committed but not sealed yet (not part of the chain yet) */
  unsealed: number;
  broken: BrokenLink | null;
}

const VERIFY_PAGE = 1000;

/** Recomputes the organization's chain from its anchor to its head; reports the first broken link. */
export async function verifyChain(db: Db, keys: Keyring, orgId: string): Promise<ChainReport> {
  const head = await db.selectFrom('audit_heads').selectAll().where('org_id', '=', orgId).executeTakeFirst();
  const anchorSeq = Number(head?.anchor_seq ?? 0);
  const unsealedRow = await db
    .selectFrom('audit_log')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('org_id', '=', orgId)
    .where('seq', 'is', null)
    .executeTakeFirst();
  const report: ChainReport = {
    orgId,
    ok: true,
    checked: 0,
    firstSeq: anchorSeq + 1,
    lastSeq: anchorSeq,
    anchorSeq,
    unsealed: Number(unsealedRow?.n ?? 0),
    broken: null,
  };
  const fail = (link: BrokenLink): ChainReport => ({ ...report, ok: false, broken: link });
  let expected = anchorSeq + 1;
  let prev = head?.anchor_hash ?? '';
  for (;;) {
    const rows = await db
      .selectFrom('audit_log')
      .selectAll()
      .where('org_id', '=', orgId)
      .where('seq', '>=', expected)
      .orderBy('seq')
      .limit(VERIFY_PAGE)
      .execute();
    for (const row of rows) {
      const seq = Number(row.seq);
      if (seq !== expected) return fail({ seq: expected, id: null, reason: 'missing_row' });
      if (row.prev_hash !== prev) return fail({ seq, id: row.id, reason: 'previous_hash_mismatch' });
      if (chainHash(keys, prev, row, seq) !== row.hash) return fail({ seq, id: row.id, reason: 'row_altered' });
      prev = row.hash;
      report.checked += 1;
      report.lastSeq = seq;
      expected += 1;
    }
    if (rows.length < VERIFY_PAGE) break;
  }
  // The head names the last row sealed: rows cut off the end (or a head moved back) show here.
  const headSeq = Number(head?.seq ?? 0);
  if (headSeq !== report.lastSeq || (head?.hash ?? '') !== prev)
    return fail({
      seq: Math.max(headSeq, report.lastSeq),
      id: null,
      reason: headSeq > report.lastSeq ? 'missing_row' : 'head_mismatch',
    });
  return report;
}

/** Every organization that has an audit trail. */
export async function auditedOrganizations(db: Db): Promise<string[]> {
  const rows = await db
    .selectFrom('audit_heads')
    .select('org_id')
    .union(db.selectFrom('audit_log').select('org_id').distinct())
    .execute();
  return [...new Set(rows.map((r) => r.org_id))].sort();
}
