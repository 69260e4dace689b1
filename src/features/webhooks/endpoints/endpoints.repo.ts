import type { Selectable } from 'kysely';
import type { DbOrTrx } from '../../../core/db/connect.ts';
import { fromJson } from '../../../core/db/json.ts';
import type { WebhookEndpointsTable } from '../../../core/db/schema.ts';
import type { TargetAuth } from './target-auth.ts';
import type { Endpoint } from '../webhooks.schemas.ts';

export type EndpointRow = Selectable<WebhookEndpointsTable>;

export interface OAuthConfig {
  clientId: string;
  tokenUrl: string;
  scope: string[];
  extraParams: Record<string, string>;
  authMethod: 'client_secret_basic' | 'client_secret_post';
}

export function toEndpoint(row: EndpointRow): Endpoint {
  return {
    id: row.id,
    description: row.description,
    url: row.url,
    eventTypes: fromJson<string[]>(row.event_types, []),
    disabled: row.disabled === 1,
    disabledReason: row.disabled_reason,
    rateLimit: row.rate_limit,
    timeoutSeconds: Math.round(row.timeout_ms / 1000),
    oauth: row.oauth ? fromJson<OAuthConfig>(row.oauth, null as never) : null,
    authentication: row.target_auth ? fromJson<TargetAuth>(row.target_auth, null as never) : null,
    payloadFormat: row.payload_format === 'legacy' ? 'legacy' : 'standard',
    createdDate: new Date(row.created_at).toISOString(),
    lastUpdatedDate: new Date(row.updated_at).toISOString(),
  };
}

export async function findEndpoint(db: DbOrTrx, orgId: string, id: string): Promise<EndpointRow | undefined> {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function listEndpointRows(
  db: DbOrTrx,
  orgId: string,
  page: { before?: string; after?: string; limit: number },
): Promise<EndpointRow[]> {
  let q = db.selectFrom('webhook_endpoints').selectAll().where('org_id', '=', orgId);
  if (page.after !== undefined) q = q.where('id', '>', page.after);
  if (page.before !== undefined) {
    const rows = await q.where('id', '<', page.before).orderBy('id', 'desc').limit(page.limit).execute();
    return rows.reverse();
  }
  return q.orderBy('id', 'asc').limit(page.limit).execute();
}
