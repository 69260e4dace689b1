import { Readable } from 'node:stream';
import type { Principal } from '../../core/authz/principal.ts';
import { requireAction } from '../../core/authz/permissions.ts';
import { invalidField } from '../../core/http/errors.ts';
import { decodeCursor, encodeCursor } from '../../core/http/pagination.ts';
import type { Deps } from '../../deps.ts';
import { loadAsset } from '../assets/index.ts';
import { hasUnsealed, listRows, type AuditFilter } from './audit.repo.ts';
import type { AuditExportQuery, AuditQuery, HistoryQuery } from './audit.schemas.ts';
import { sealOrg, verifyChain, type AuditRow, type ChainReport } from './chain/chain.ts';
import { csvLine } from './export/csv.ts';

/** Rows committed since the last pass of the sealer are chained before a read, so a reader sees its own writes. */
async function sealBeforeRead(deps: Deps, orgId: string): Promise<void> {
  if (await hasUnsealed(deps.db, orgId)) await sealOrg(deps.db, deps.engine, deps.keys, orgId);
}

function time(value: string | undefined, field: string): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || !Number.isFinite(ms))
    throw invalidField(field, 'must be an ISO-8601 date-time such as 2026-01-31T12:00:00Z');
  return ms;
}

function filterOf(query: Omit<AuditQuery, 'limit' | 'cursor'>): AuditFilter {
  const from = time(query.from, 'querystring.from');
  const to = time(query.to, 'querystring.to');
  if (from !== undefined && to !== undefined && to <= from) throw invalidField('querystring.to', 'must be after from');
  return { actor: query.actor, apiKey: query.apiKey, object: query.object, operation: query.operation, from, to };
}

function parseData(text: string): Record<string, unknown> {
  try {
    const value = JSON.parse(text) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : { value };
  } catch {
    return { raw: text };
  }
}

export function presentRow(row: AuditRow, withOrigin: boolean) {
  return {
    id: row.id,
    seq: Number(row.seq),
    at: new Date(Number(row.at)).toISOString(),
    actor: {
      userId: row.actor_id,
      impersonatorId: row.impersonator_id,
      apiKeyId: row.api_key_id,
      oauthClientId: row.oauth_client_id,
      via: row.via,
    },
    operation: row.operation,
    action: row.action,
    target: { type: row.target_type, id: row.target_id },
    data: parseData(row.data),
    ...(withOrigin ? { origin: { ip: row.ip, userAgent: row.user_agent, requestId: row.request_id } } : {}),
    hash: row.hash ?? '',
    prevHash: row.prev_hash ?? '',
  };
}

async function page(
  deps: Deps,
  orgId: string,
  filter: AuditFilter,
  limit: number,
  cursor: string | undefined,
  withOrigin: boolean,
) {
  const beforeSeq = cursor === undefined ? undefined : Number(decodeCursor(cursor, 'querystring.cursor', 1)[0]);
  if (beforeSeq !== undefined && !Number.isSafeInteger(beforeSeq))
    throw invalidField('querystring.cursor', 'is not a cursor this server issued');
  await sealBeforeRead(deps, orgId);
  const rows = await listRows(deps.db, orgId, { ...filter, beforeSeq }, limit + 1);
  const more = rows.length > limit;
  const items = rows.slice(0, limit);
  return {
    items: items.map((r) => presentRow(r, withOrigin)),
    next: more ? encodeCursor([Number(items[items.length - 1]!.seq)]) : null,
  };
}

/** GET /v1/audit: the organization's trail, newest first (Audit Log). */
export async function listAudit(deps: Deps, principal: Principal, query: AuditQuery) {
  requireAction(principal, 'audit.read');
  return page(deps, principal.orgId, filterOf(query), query.limit ?? 100, query.cursor, true);
}

const EXPORT_PAGE = 1000;
const CSV_HEADER = [
  'seq',
  'at',
  'actor_user_id',
  'impersonator_id',
  'api_key_id',
  'oauth_client_id',
  'via',
  'operation',
  'action',
  'target_type',
  'target_id',
  'ip',
  'user_agent',
  'request_id',
  'data',
  'hash',
  'prev_hash',
];

/** GET /v1/audit/export: every matching row, newest first, streamed page by page as JSON or CSV (Audit Log). */
export async function exportAudit(
  deps: Deps,
  principal: Principal,
  query: AuditExportQuery,
): Promise<{ contentType: string; filename: string; body: Readable }> {
  requireAction(principal, 'audit.read');
  const filter = filterOf(query);
  const csv = query.format === 'csv';
  const orgId = principal.orgId;
  await sealBeforeRead(deps, orgId);
  async function* lines(): AsyncGenerator<string> {
    yield csv ? csvLine(CSV_HEADER) : '[';
    let beforeSeq: number | undefined;
    let first = true;
    for (;;) {
      const rows = await listRows(deps.db, orgId, { ...filter, beforeSeq }, EXPORT_PAGE);
      let chunk = '';
      for (const row of rows) {
        if (csv) {
          chunk += csvLine([
            row.seq,
            new Date(Number(row.at)).toISOString(),
            row.actor_id,
            row.impersonator_id,
            row.api_key_id,
            row.oauth_client_id,
            row.via,
            row.operation,
            row.action,
            row.target_type,
            row.target_id,
            row.ip,
            row.user_agent,
            row.request_id,
            row.data,
            row.hash,
            row.prev_hash,
          ]);
        } else {
          chunk += `${first ? '' : ','}\n${JSON.stringify(presentRow(row, true))}`;
          first = false;
        }
      }
      if (chunk) yield chunk;
      if (rows.length < EXPORT_PAGE) break;
      beforeSeq = Number(rows[rows.length - 1]!.seq);
    }
    if (!csv) yield '\n]\n';
  }
  const stamp = new Date(deps.clock.now()).toISOString().slice(0, 10);
  return {
    contentType: csv ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8',
    filename: `audit-${stamp}.${csv ? 'csv' : 'json'}`,
    body: Readable.from(lines()),
  };
}

/** GET /v1/asset/{id}/history: the rows naming an asset, for whoever may view it (a hidden asset is a 404). */
export async function assetHistory(deps: Deps, principal: Principal, id: string, query: HistoryQuery) {
  const { asset } = await loadAsset(deps.db, principal, id);
  // Where each change came from (addresses, user agents) is for holders of Audit Log only.
  return page(
    deps,
    principal.orgId,
    { object: asset.id },
    query.limit ?? 100,
    query.cursor,
    principal.privileges.has('audit_log'),
  );
}

/** The chain check of one organization (sealing what is committed first). */
export async function verifyOrganization(deps: Deps, orgId: string): Promise<ChainReport> {
  await sealOrg(deps.db, deps.engine, deps.keys, orgId);
  return verifyChain(deps.db, deps.keys, orgId);
}
