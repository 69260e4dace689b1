import { sql } from 'kysely';
import { requireAction } from '../../core/authz/permissions.ts';
import type { Principal } from '../../core/authz/principal.ts';
import { fromJson } from '../../core/db/json.ts';
import { invalidField } from '../../core/http/errors.ts';
import { lookupTable } from '../../core/lookup.ts';
import type { Deps } from '../../deps.ts';
import { parseQuery, runSearch, searchVisibility, specFromBody, type RunResult } from '../search/index.ts';
import { customerIdOf } from '../identity/index.ts';
import { loadVisibleCollection } from './collections.service.ts';
import { visibleMemberFileIds } from './collections.repo.ts';
import type { CollectionSearchBody } from './collections.schemas.ts';

export interface CollectionAssetsOptions {
  from?: number;
  limit?: number;
  sortBy?: { field: string; order: 'asc' | 'desc' }[];
  searchTerm?: string[];
  facets?: boolean;
}

/**
 * A page of a collection's assets as this viewer may see them, with full asset records. The total
 * and the facets count only those assets: two viewers of one collection get different, consistent
 * answers and neither learns what the other sees. No privilege is needed (story boards use it).
 */
export async function collectionAssetsForViewer(
  deps: Deps,
  principal: Principal,
  collectionId: string,
  options: CollectionAssetsOptions = {},
): Promise<RunResult> {
  await loadVisibleCollection(deps.db, principal, collectionId);
  const spec = specFromBody({
    searchTerm: options.searchTerm ?? ['*'],
    sortBy: (options.sortBy ?? []).map((s) => ({ metadataDefinitionSearchField: s.field, order: s.order })),
  });
  return runSearch(deps, principal, spec, {
    from: options.from ?? 0,
    limit: options.limit ?? 50,
    collectionId,
    facets: options.facets ? { size: 20 } : undefined,
  });
}

export async function listCollectionAssets(
  deps: Deps,
  principal: Principal,
  id: string,
  query: { from?: number; limit?: number; sortBy?: string; order?: string; aggregations?: boolean },
) {
  requireAction(principal, 'collection.view');
  const order = (query.order ?? 'desc').toLowerCase();
  if (order !== 'asc' && order !== 'desc') throw invalidField('query.order', 'must be asc or desc');
  const from = query.from ?? 0;
  const limit = query.limit ?? 50;
  const result = await collectionAssetsForViewer(deps, principal, id, {
    from,
    limit,
    facets: query.aggregations ?? false,
    sortBy: query.sortBy ? [{ field: query.sortBy, order }] : undefined,
  });
  return {
    hitCount: result.records.length,
    totalCount: result.total,
    from,
    limit,
    result: result.records,
    facets: result.facets,
  };
}

/** POST /v1/collection/{id}/search: the keyword search, inside one collection. */
export async function searchInCollection(
  deps: Deps,
  principal: Principal,
  id: string,
  body: Parameters<typeof specFromBody>[0] & { from?: number; limit?: number; aggregations?: boolean },
) {
  requireAction(principal, 'collection.view');
  await loadVisibleCollection(deps.db, principal, id);
  const from = body.from ?? 0;
  const limit = body.limit ?? 50;
  const result = await runSearch(deps, principal, specFromBody(body), {
    from,
    limit,
    collectionId: id,
    facets: body.aggregations === false ? undefined : { size: 20 },
  });
  return {
    hitCount: result.records.length,
    totalCount: result.total,
    from,
    limit,
    result: result.records,
    facets: result.facets,
  };
}

const COLLECTION_SORTS = lookupTable({
  name: 'c.name_key',
  createdepoch: 'c.created_at',
  lastupdatedepoch: 'c.updated_at',
});

/** POST /v1/search/collection: the collections this caller may see whose name matches. */
export async function searchCollections(deps: Deps, principal: Principal, body: CollectionSearchBody) {
  requireAction(principal, 'collection.search');
  const spec = specFromBody({ ...body, filters: [], dateRanges: [] });
  const q = parseQuery(spec);
  const { viewableTemplateIds: viewable, hiddenMetadataTemplateIds: hidden } = await searchVisibility(
    deps.db,
    principal,
  );
  const orgId = principal.orgId;
  const conds = [sql`c.org_id = ${orgId}`];
  const visibleSecured =
    viewable.length > 0
      ? sql`(c.collection_type = 'secured' and exists (select 1 from collection_templates t where t.collection_id = c.id and t.template_id in (${sql.join(viewable)})))`
      : sql`1 = 0`;
  conds.push(sql`(c.owner_id = ${principal.userId} or ${visibleSecured})`);
  const termConds = q.terms.flatMap((t) => {
    if (t.kind === 'all') return [];
    if (t.kind === 'facet') {
      if (t.facetKey === 'collection type')
        return [sql`c.collection_type = ${t.valueKey === 'shared' ? 'secured' : t.valueKey}`];
      return [sql`1 = 0`];
    }
    const words = t.phrase ? [t.tokens.join(' ')] : t.tokens;
    return [
      sql`(${sql.join(
        words.map((w) => sql`lower(c.name) like ${`%${w}%`}`),
        sql` and `,
      )})`,
    ];
  });
  if (termConds.length > 0 && !(q.operation === 'OR' && q.terms.some((t) => t.kind === 'all'))) {
    conds.push(sql`(${sql.join(termConds, q.operation === 'AND' ? sql` and ` : sql` or `)})`);
  }
  const where = sql.join(conds, sql` and `);
  const orderKeys = q.sort.map((s) => {
    const col = COLLECTION_SORTS[s.field.toLowerCase()];
    if (!col) throw invalidField('body.sortBy', 'collections sort by name, createdEpoch or lastUpdatedEpoch');
    const expr = col === 'c.name_key' && deps.engine === 'postgres' ? sql`c.name_key collate "C"` : sql.raw(col);
    return sql`${expr} ${sql.raw(s.order)}`;
  });
  orderKeys.push(sql`c.id asc`);
  const from = body.from ?? 0;
  const limit = body.limit ?? 50;
  const [{ rows }, count, types] = await Promise.all([
    sql<{
      id: string;
      name: string;
      collection_type: string;
      shared: string;
      share_document: string;
      owner_id: string;
      created_at: number;
      updated_at: number;
    }>`
      select c.id, c.name, c.collection_type, c.shared, c.share_document, c.owner_id, c.created_at, c.updated_at
      from collections c where ${where} order by ${sql.join(orderKeys, sql`, `)} limit ${limit} offset ${from}`.execute(
      deps.db,
    ),
    sql<{ n: number | string }>`select count(*) as n from collections c where ${where}`.execute(deps.db),
    body.aggregations === false
      ? Promise.resolve({ rows: [] as { t: string; n: number | string }[] })
      : sql<{
          t: string;
          n: number | string;
        }>`select c.collection_type as t, count(*) as n from collections c where ${where} group by c.collection_type`.execute(
          deps.db,
        ),
  ]);
  const customerId = await customerIdOf(deps.db, orgId);
  const result = [];
  for (const r of rows) {
    result.push({
      collectionId: r.id,
      name: r.name,
      collectionType: r.collection_type,
      shared: r.shared,
      shareDocument: fromJson<string[]>(r.share_document, []),
      collectionDocument: await visibleMemberFileIds(deps.db, orgId, r.id, viewable, hidden),
      userCognitoId: r.owner_id,
      customerId: Number(customerId || 0),
      createdEpoch: Number(r.created_at),
      lastUpdatedEpoch: Number(r.updated_at),
    });
  }
  const facetValues = types.rows
    .map((t) => ({ key: t.t, doc_count: Number(t.n) }))
    .sort((a, b) => b.doc_count - a.doc_count || a.key.localeCompare(b.key));
  return {
    hitCount: result.length,
    totalCount: Number(count.rows[0]?.n ?? 0),
    result,
    facets: facetValues.length > 0 ? [{ facet_name: 'Collection Type', values: facetValues }] : [],
  };
}
