import type { Deps } from '../../../../deps.ts';
import { loadUserPrincipal } from '../../../identity/index.ts';
import { itemsWithoutRestricted, restrictedAttributes, seesSensitiveData } from '../../../metadata/index.ts';

/**
 * Event types whose payload carries metadata values (`collection.metadata.updated`: the changed
 * attributes with their values). Other payloads carry ids and names only.
 */
const CARRIES_METADATA_VALUES: ReadonlySet<string> = new Set(['collection.metadata.updated']);

interface MetadataItem {
  attributeId?: unknown;
  value?: unknown;
}

/**
 * Sensitive Data holds for webhooks too (issue 23, defect 3): a restricted (`isRestricted`)
 * attribute's value reaches an endpoint only while its owner — the person who made it — holds
 * the Sensitive Data privilege and is enabled in the endpoint's organization, checked at each
 * attempt (a demotion takes effect at the next delivery). Otherwise the attribute is left out of
 * the payload, and a table's restricted columns out of each row, as an API read leaves them out for
 * that person. An endpoint with no recorded owner (made before owners were recorded) never
 * receives restricted values.
 */
export async function payloadForEndpoint(
  deps: Deps,
  endpoint: { org_id: string; created_by?: string | null },
  eventType: string,
  body: string,
): Promise<string> {
  if (!CARRIES_METADATA_VALUES.has(eventType)) return body;
  const restricted = await restrictedAttributes(deps.db, endpoint.org_id);
  if (restricted.ids.size === 0) return body;
  const owner = endpoint.created_by ? await loadUserPrincipal(deps.db, endpoint.created_by) : null;
  if (owner && owner.orgId === endpoint.org_id && seesSensitiveData(owner)) return body;
  const parsed = JSON.parse(body) as { collection?: { metadata?: unknown } };
  const items = parsed.collection?.metadata;
  if (!Array.isArray(items)) return body;
  // In the shape the metadata rules read (legacy items), then back to the payload's.
  const kept = itemsWithoutRestricted(
    (items as MetadataItem[]).map((m) => ({ metadataDefinitionId: m.attributeId, value: m.value })),
    restricted,
  );
  parsed.collection!.metadata = kept.map((m) => ({ attributeId: m.metadataDefinitionId, value: m.value }));
  return JSON.stringify(parsed);
}
