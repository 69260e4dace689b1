import type { DbOrTrx } from './db/connect.ts';
import { insertRows } from './db/insert-rows.ts';
import { toJson } from './db/json.ts';
import type { AuditLogTable, AuditObjectsTable } from './db/schema.ts';
import { actingPrincipal } from './authz/acting.ts';
import type { Principal } from './authz/principal.ts';
import { EVENT_CATALOG, type EventType } from './events/catalog.ts';
import { requestOrigin } from './http/request-context.ts';
import { newId } from './ids.ts';

/**
 * The one way rows enter the audit trail (the table belongs to features/audit, which reads, seals,
 * verifies and prunes it; writing stays here because every feature, the events outbox and the CLI
 * record in their own transactions, and core never imports features). Rows are only inserted; the
 * audit feature chains them per organization after commit (features/audit/chain/chain.ts).
 *
 * Who, what, when and from where are filled in from the request being handled: the acting
 * principal (user, API key, OAuth client, impersonator; core/authz/acting.ts) and the request's
 * origin (client address, user agent, request id, operationId; core/http/request-context.ts).
 * Secrets never enter a row: keys that name one (password, secret, token, …) are redacted.
 */
export interface AuditEntry {
  orgId: string;
  at: number;
  actorId: string | null;
  action: string;
  targetType: string;
  targetId?: string | null;
  ip?: string | null;
  data?: Record<string, unknown>;
  /** Changed fields: previous → current (secrets are never listed). */
  changes?: Record<string, { before: unknown; after: unknown }>;
  /** Further objects the row is about (the target is always one); an asset's history lists rows naming it. */
  objects?: readonly { type: string; id: string }[];
  /** The operation; defaults to the route's operationId (or `system` outside a request). */
  operation?: string;
  /** The administrator acting as `actorId`; defaults to the impersonator of the request being handled. */
  impersonatorId?: string | null;
}

type Row = Omit<AuditLogTable, 'seq' | 'prev_hash' | 'hash'>;

/** A row as inserted: unsealed (the chain's columns left for the sealer), or sealed at insert by an AuditSeal. */
export type AuditInsertRow = Row & Partial<Pick<AuditLogTable, 'seq' | 'prev_hash' | 'hash'>>;

/**
 * Places rows in their organization's audit chain as they are inserted (features/audit's
 * `insertSealer`): sets `seq`, `prev_hash` and `hash` of each, under the chain head's lock, which the
 * transaction then holds to its commit. For a large writer (bulk creation) that is one write per row
 * instead of an insert and a later sealing `UPDATE`; other writers leave rows to the sealer.
 */
export type AuditSeal = (trx: DbOrTrx, rows: AuditInsertRow[]) => Promise<void>;

const SECRET_KEY = /pass(word)?|secret|token|credential|private|hash$|^key$|apikey/i;

/** A copy of `value` with every property that names a secret replaced by "[redacted]". */
export function redactSecrets(value: unknown, depth = 0): unknown {
  if (depth > 8 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => redactSecrets(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = SECRET_KEY.test(k) ? '[redacted]' : redactSecrets(v, depth + 1);
  return out;
}

function rowOf(entry: AuditEntry): Row {
  const acting = actingPrincipal();
  const own: Principal | undefined = acting?.orgId === entry.orgId ? acting : undefined;
  const origin = requestOrigin();
  const impersonatorId = entry.impersonatorId !== undefined ? entry.impersonatorId : (own?.impersonatorId ?? null);
  const data: Record<string, unknown> = {
    ...(entry.data ? (redactSecrets(entry.data) as Record<string, unknown>) : {}),
  };
  if (entry.changes) data.changes = redactSecrets(entry.changes);
  // Part of the hashed record, so the object index (audit_objects) can be checked against it.
  if (entry.objects && entry.objects.length > 0) data.objects = entry.objects.map((o) => ({ type: o.type, id: o.id }));
  if (impersonatorId) data.impersonatorId = impersonatorId;
  return {
    id: newId(entry.at),
    org_id: entry.orgId,
    at: entry.at,
    actor_id: entry.actorId,
    action: entry.action,
    target_type: entry.targetType,
    target_id: entry.targetId ?? null,
    ip: entry.ip ?? origin?.ip ?? null,
    data: toJson(data),
    impersonator_id: impersonatorId,
    operation: entry.operation ?? origin?.operation ?? 'system',
    via: own?.via ?? null,
    api_key_id: own?.apiKeyId ?? null,
    oauth_client_id: own?.clientId ?? null,
    user_agent: origin?.userAgent ?? null,
    request_id: origin?.requestId ?? null,
  };
}

function objectRows(row: Row, entry: AuditEntry): AuditObjectsTable[] {
  const seen = new Set<string>();
  const out: AuditObjectsTable[] = [];
  const add = (type: string, id: string | null | undefined) => {
    if (!id || seen.has(id)) return;
    seen.add(id);
    out.push({ audit_id: row.id, org_id: row.org_id, object_id: id, object_type: type });
  };
  add(entry.targetType, entry.targetId);
  for (const o of entry.objects ?? []) add(o.type, o.id);
  return out;
}

/** Records who did what; write it in the same transaction as the change it describes. */
export async function audit(db: DbOrTrx, entry: AuditEntry): Promise<void> {
  await auditMany(db, [entry]);
}

/**
 * Records many entries with multi-row inserts (bulk operations), in the caller's transaction;
 * with `seal`, sealed as they are inserted (`AuditSeal`).
 */
export async function auditMany(db: DbOrTrx, entries: readonly AuditEntry[], seal?: AuditSeal): Promise<void> {
  if (entries.length === 0) return;
  const rows: AuditInsertRow[] = [];
  const objects: AuditObjectsTable[] = [];
  for (const entry of entries) {
    const row = rowOf(entry);
    rows.push(row);
    objects.push(...objectRows(row, entry));
  }
  if (seal) await seal(db, rows);
  await insertRows(db, 'audit_log', rows);
  await insertRows(db, 'audit_objects', objects);
}

/**
 * Changes whose events are the audit record: the features that make them (assets, collections,
 * relationships, CDN, rights) publish a typed event in the change's transaction, and the outbox
 * turns it into an audit row there (publishEvent). The other topics' features (users, metadata,
 * security, story boards, API keys) call `audit` themselves with more detail, so their events are
 * not recorded twice. Rendition completion is the system's own work, not a change anyone made.
 */
const AUDITED_TOPICS = new Set(['assets', 'versions', 'collections', 'relationships', 'cdn', 'rights']);
const NOT_AUDITED = new Set<string>(['asset.renditions.created', 'asset.thumbnail.created']);

export function isAuditedEvent(type: EventType): boolean {
  return AUDITED_TOPICS.has(EVENT_CATALOG[type].topic) && !NOT_AUDITED.has(type);
}

interface Named {
  id?: unknown;
  filename?: unknown;
  name?: unknown;
}
const idOf = (v: unknown): string | undefined =>
  v && typeof v === 'object' && typeof (v as Named).id === 'string'
    ? ((v as Named).id as string)
    : typeof v === 'string'
      ? v
      : undefined;

/** The audit entry an event stands for (its objects read from the topic objects). */
export function eventAuditEntry(
  type: EventType,
  orgId: string,
  at: number,
  actorId: string | null,
  eventId: string,
  data: Record<string, unknown>,
): AuditEntry {
  const objects: { type: string; id: string }[] = [];
  const push = (kind: string, v: unknown) => {
    const id = idOf(v);
    if (id) objects.push({ type: kind, id });
  };
  const asset = data.asset;
  const assets = Array.isArray(data.assets) ? data.assets : [];
  const share = data.share as { assets?: unknown[] } | undefined;
  for (const a of [asset, ...assets, ...(share?.assets ?? [])]) push('asset', a);
  push('collection', data.collection);
  const relationship = data.relationship as { parent?: unknown } | undefined;
  if (relationship) push('asset', relationship.parent);
  push('pull_zone', data.pullZone);
  push('rm_project', data.project);
  push('rm_agreement', data.agreement);
  push('rm_entity', data.entity);
  const target = objects[0];
  return {
    orgId,
    at,
    actorId,
    action: type,
    targetType: target?.type ?? EVENT_CATALOG[type].topic,
    targetId: target?.id ?? null,
    objects: objects.slice(1),
    data: { eventId, ...data },
  };
}
