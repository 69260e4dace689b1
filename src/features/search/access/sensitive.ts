import type { Principal } from '../../../core/authz/principal.ts';
import type { DbOrTrx } from '../../../core/db/connect.ts';
import {
  hiddenAttributesFor,
  restrictedAttributeRefused,
  withoutRestricted,
  type RestrictedAttributes,
} from '../../metadata/index.ts';
import type { FacetResult } from '../query/search.engine.ts';
import type { ParsedQuery } from '../query/search.query.ts';
import { foldKey } from '../search.tokenize.ts';

/**
 * Sensitive Data in searches (scan, search, keyword search, saved searches, collection searches):
 * for a caller without the privilege, restricted attributes do not exist. Naming one in a facet
 * term or filter, `sortBy` or `dateRanges` is a 403 naming the attribute (an order or a count over
 * their values would show them); records come back without them and facets never list them. Their
 * values are not free text in the index (search.documents.ts), so no text term matches them.
 */
export interface SensitiveView {
  records(records: Record<string, unknown>[]): Record<string, unknown>[];
  facets(facets: FacetResult[]): FacetResult[];
}

const OPEN: SensitiveView = { records: (r) => r, facets: (f) => f };

export async function sensitiveView(db: DbOrTrx, principal: Principal, q: ParsedQuery): Promise<SensitiveView> {
  const hidden = await hiddenAttributesFor(db, principal);
  if (hidden.ids.size === 0) return OPEN;
  assertNotNamed(hidden, q);
  const facetKeys = new Set([...hidden.names].map(foldKey));
  return {
    records: (records) => records.map((r) => withoutRestricted(r, hidden)),
    facets: (facets) => facets.filter((f) => !facetKeys.has(foldKey(f.facet_name))),
  };
}

function assertNotNamed(hidden: RestrictedAttributes, q: ParsedQuery): void {
  const facetKeys = new Map([...hidden.names].map((n) => [foldKey(n), n]));
  for (const t of [...q.terms, ...q.filters]) {
    if (t.kind === 'facet' && facetKeys.has(t.facetKey))
      throw restrictedAttributeRefused(hidden, facetKeys.get(t.facetKey)!, 'a facet term or filter');
  }
  for (const r of q.ranges)
    if (hidden.searchFields.has(r.field.toLowerCase()))
      throw restrictedAttributeRefused(hidden, r.field, 'body.dateRanges');
  for (const s of q.sort)
    if (hidden.searchFields.has(s.field.toLowerCase()))
      throw restrictedAttributeRefused(hidden, s.field, 'body.sortBy');
}
