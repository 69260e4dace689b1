import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import { sql, type Selectable } from 'kysely';
import type { Db, DbOrTrx, Engine } from '../../../core/db/connect.ts';
import type { AuditInsertRow, AuditSeal } from '../../../core/audit.ts';
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
 *
 * The chain's key outlives secret rotations (decision 0013): it is the `hash:audit-chain` subkey of the
 * secret the chain was started under, kept in `server_state` sealed by the keyring (re-sealed by
 * `tessera rotate-secrets`), so chains written before a rotation still verify after the old secret is gone.
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

export function chainHash(key: KeyObject, prevHash: string, row: AuditRow, seq: number): string {
  return createHmac('sha256', key)
    .update(`${prevHash}\n${canonicalRow(row, seq)}`)
    .digest('base64url');
}

/** server_state key of the chain's key, sealed (this module's own key there). */
export const CHAIN_KEY = 'audit.chain_key';
const chainKeys = new WeakMap<object, Promise<KeyObject>>();

/**
 * The chain's key, read once per database handle. The first time (a database from before the key was
 * kept), it is the subkey of whichever held secret verifies the chain already written (the current
 * secret when there is none), recorded once across racing processes.
 */
export function chainKey(db: Db, keys: Keyring): Promise<KeyObject> {
  let key = chainKeys.get(db);
  if (!key) {
    key = loadChainKey(db, keys);
    key.catch(() => chainKeys.delete(db));
    chainKeys.set(db, key);
  }
  return key;
}

async function loadChainKey(db: Db, keys: Keyring): Promise<KeyObject> {
  const read = async () =>
    (await db.selectFrom('server_state').select('value').where('key', '=', CHAIN_KEY).executeTakeFirst())?.value;
  let sealed = await read();
  if (sealed === undefined) {
    const row = await db
      .selectFrom('audit_log')
      .selectAll()
      .where('seq', 'is not', null)
      .orderBy('seq', 'desc')
      .limit(1)
      .executeTakeFirst();
    const subkeys = keys.keyIds.map((keyId) => keys.subkey(keyId, 'hash:audit-chain'));
    const started =
      (row &&
        subkeys.find(
          (subkey) => chainHash(createSecretKey(subkey), row.prev_hash ?? '', row, Number(row.seq)) === row.hash,
        )) ??
      subkeys[0]!;
    await db
      .insertInto('server_state')
      .values({ key: CHAIN_KEY, value: keys.encrypt(started.toString('base64url')), updated_at: Date.now() })
      .onConflict((oc) => oc.column('key').doNothing())
      .execute();
    sealed = await read();
  }
  return createSecretKey(Buffer.from(keys.decrypt(sealed!), 'base64url'));
}

/** Re-seals the chain's key under the current secret (`tessera rotate-secrets`). Returns whether it changed. */
export async function resealChainKey(db: Db, keys: Keyring): Promise<{ resealed: number; current: number }> {
  await chainKey(db, keys);
  const row = await db.selectFrom('server_state').select('value').where('key', '=', CHAIN_KEY).executeTakeFirst();
  if (!row) return { resealed: 0, current: 0 };
  if (keys.isCurrent(row.value)) return { resealed: 0, current: 1 };
  const result = await db
    .updateTable('server_state')
    .set({ value: keys.encrypt(keys.decrypt(row.value)), updated_at: Date.now() })
    .where('key', '=', CHAIN_KEY)
    .where('value', '=', row.value)
    .executeTakeFirst();
  return { resealed: Number(result.numUpdatedRows), current: 0 };
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
  const key = await chainKey(db, keys);
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
        const next = chainHash(key, hash, row, seq);
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

/**
 * An `AuditSeal` (core/audit.ts): rows sealed as they are inserted, in the writer's transaction. Per
 * organization (in id order, one lock order for every writer) it locks the head, gives the rows the
 * next `seq`s and their hashes, and moves the head; the lock is held to the writer's commit, so a
 * concurrent sealer or another sealing writer of that organization waits for it and continues from
 * the new head. Rows inserted unsealed by others meanwhile are sealed later by the sealer, after
 * these (the chain's order is the order of sealing). No second write of each row, no dead tuples.
 * The key is read here, before the writer's transaction (on SQLite one connection serves both).
 */
export async function insertSealer(db: Db, engine: Engine, keys: Keyring): Promise<AuditSeal> {
  const key = await chainKey(db, keys);
  return async (trx: DbOrTrx, rows: AuditInsertRow[]) => {
    const byOrg = new Map<string, AuditInsertRow[]>();
    for (const row of rows) {
      const list = byOrg.get(row.org_id);
      if (list) list.push(row);
      else byOrg.set(row.org_id, [row]);
    }
    for (const orgId of [...byOrg.keys()].sort()) {
      const head = await lockHead(trx, engine, orgId);
      let { seq, hash } = head;
      for (const row of byOrg.get(orgId)!) {
        seq += 1;
        const next = chainHash(key, hash, row as AuditRow, seq);
        row.seq = seq;
        row.prev_hash = hash;
        row.hash = next;
        hash = next;
      }
      await trx.updateTable('audit_heads').set({ seq, hash }).where('org_id', '=', orgId).execute();
    }
  };
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
  const key = await chainKey(db, keys);
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
      if (chainHash(key, prev, row, seq) !== row.hash) return fail({ seq, id: row.id, reason: 'row_altered' });
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
