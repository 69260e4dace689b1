import type { Principal } from '../../core/authz/principal.ts';
import { invalidField } from '../../core/http/errors.ts';
import type { Deps } from '../../deps.ts';
import {
  countMatches,
  decodeScanCursor,
  facetCounts,
  pageOfHits,
  scanOrder,
  scanPage,
  totalAndFacets,
  wherePredicate,
  type FacetResult,
  type SearchScope,
} from './query/search.engine.ts';
import { fromJson } from '../../core/db/json.ts';
import { bag, hasOwn, lookupTable, ownPath } from '../../core/lookup.ts';
import { countFacets, memoryMatches, topDocs } from './memory-index/search.columns.ts';
import { boundedSearch } from './query/search.bounded.ts';
import {
  SYSTEM_SORTS,
  facetTerm,
  parseQuery,
  type KeywordField,
  type Operation,
  type RangeFilter,
  type SearchSpec,
  type SortKey,
  type TextTerm,
} from './query/search.query.ts';
import type { KeywordSearchBody, ScanBody, SearchBody } from './search.schemas.ts';
import { searchVisibility } from './access/visibility.ts';
import { syncForSearch } from './indexing/search.freshness.ts';
import { sensitiveView } from './access/sensitive.ts';

type CommonBody = Pick<
  SearchBody,
  | 'searchTerm'
  | 'operation'
  | 'keywordSearchField'
  | 'includeDeleted'
  | 'includeVersions'
  | 'sortBy'
  | 'filters'
  | 'dateRanges'
>;

const KEYWORD_FIELDS = lookupTable<KeywordField>({
  filename: 'filename',
  assetid: 'assetId',
  metadata: 'metadata',
  content: 'content',
});

function parseOperation(value: string | undefined): Operation {
  if (value === undefined || value === '') return 'AND';
  const op = value.trim().toUpperCase();
  if (op !== 'AND' && op !== 'OR') throw invalidField('body.operation', 'must be AND or OR');
  return op;
}

/** Dates as epoch ms, ISO 8601 or the reference's mm/dd/yyyy; a bare date as an upper bound covers its whole day. */
export function parseBound(value: number | string | undefined, field: string, upper: boolean): number | null {
  if (value === undefined || value === null || value === '') return null;
  // Bounds meet bigint columns (epoch ms): a fraction or a number past 2^53 is a 400, never SQL's error.
  const whole = (ms: number) => {
    if (!Number.isSafeInteger(ms))
      throw invalidField(
        field,
        'must be a whole number of epoch milliseconds (at most 2^53), an ISO 8601 date or mm/dd/yyyy',
      );
    return ms;
  };
  if (typeof value === 'number') return whole(value);
  const us = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(value.trim());
  const bare = us ? null : /^(\d{4})-(\d{2})-(\d{2})$/.exec(value.trim());
  let ms: number;
  if (us) ms = Date.UTC(Number(us[3]), Number(us[1]) - 1, Number(us[2]));
  else if (bare) ms = Date.UTC(Number(bare[1]), Number(bare[2]) - 1, Number(bare[3]));
  else if (/^-?\d+(\.\d+)?$/.test(value.trim())) ms = Number(value);
  else ms = Date.parse(value);
  if (!Number.isFinite(ms)) throw invalidField(field, 'is not a date (epoch ms, ISO 8601 or mm/dd/yyyy)');
  return whole(upper && (us || bare) ? ms + 86_400_000 - 1 : ms);
}

/** A request body of any of the asset search endpoints, as the engine-neutral spec. */
export function specFromBody(body: CommonBody & { relevancy?: boolean }): SearchSpec {
  const terms =
    body.searchTerm === undefined ? [] : typeof body.searchTerm === 'string' ? [body.searchTerm] : body.searchTerm;
  let keywordSearchField: KeywordField | undefined;
  if (body.keywordSearchField !== undefined && body.keywordSearchField.trim() !== '') {
    keywordSearchField = KEYWORD_FIELDS[body.keywordSearchField.trim().toLowerCase()];
    if (!keywordSearchField)
      throw invalidField('body.keywordSearchField', 'must be filename, assetId, metadata or content');
  }
  const sortBy: SortKey[] = (body.sortBy ?? []).map((s, i) => {
    const order = (s.order ?? 'desc').trim().toLowerCase();
    if (order !== 'asc' && order !== 'desc') throw invalidField(`body.sortBy.${i}.order`, 'must be asc or desc');
    return { field: s.metadataDefinitionSearchField, order };
  });
  const ranges: RangeFilter[] = (body.dateRanges ?? []).map((r, i) => {
    const from = parseBound(r.from, `body.dateRanges.${i}.from`, false);
    const to = parseBound(r.to, `body.dateRanges.${i}.to`, true);
    if (from !== null && to !== null && from > to) throw invalidField(`body.dateRanges.${i}`, 'from is after to');
    return { field: r.field, from, to };
  });
  return {
    searchTerm: terms,
    operation: body.relevancy ? 'OR' : parseOperation(body.operation),
    keywordSearchField,
    filters: body.filters ?? [],
    ranges,
    includeDeleted: body.includeDeleted ?? false,
    includeVersions: body.includeVersions ?? false,
    sortBy,
    relevancy: body.relevancy ?? false,
  };
}

export interface RunOptions {
  from: number;
  limit: number;
  /** undefined: no facets; otherwise the facet names (or all) and values per facet. */
  facets?: { names?: string[]; size: number };
  collectionId?: string;
}

export interface RunResult {
  total: number;
  records: Record<string, unknown>[];
  facets: FacetResult[];
  /** True when the total and the facet counts are estimates (search.bounded.ts); the page is exact. */
  estimated?: boolean;
}

/**
 * Runs a search as `principal` sees the index: the caller's viewable templates are resolved
 * once and become part of the index query. Saved searches and collections use this too.
 */
export async function runSearch(
  deps: Deps,
  principal: Principal,
  spec: SearchSpec,
  options: RunOptions,
): Promise<RunResult> {
  const q = parseQuery(spec);
  if (options.from + options.limit > 10_000)
    throw invalidField(
      'body.from',
      'from + limit may reach at most 10000 results; use POST /v1/asset/scan to walk further',
    );
  const sensitive = await sensitiveView(deps.db, principal, q);
  await syncForSearch(deps);
  const scope: SearchScope = {
    orgId: principal.orgId,
    ...(await searchVisibility(deps.db, principal)),
    collectionId: options.collectionId,
  };
  const where = wherePredicate(deps.engine, q, scope);
  const fast = await columnarSearch(deps, q, where, scope, options);
  if (fast)
    return {
      total: fast.total,
      records: sensitive.records(fast.records),
      facets: sensitive.facets(fast.facets),
      ...(fast.estimated ? { estimated: true } : {}),
    };
  if (deps.engine === 'postgres') {
    // Two statements (two pooled connections) per search, not three: total and facets together.
    const [{ total, facets }, hits] = await Promise.all([
      totalAndFacets(deps.db, where, options.facets),
      pageOfHits(deps.db, deps.engine, q, where, options.from, options.limit),
    ]);
    return { total, records: sensitive.records(hits.map((h) => h.record)), facets: sensitive.facets(facets) };
  }
  const [total, hits, facets] = await Promise.all([
    countMatches(deps.db, where),
    pageOfHits(deps.db, deps.engine, q, where, options.from, options.limit),
    options.facets ? facetCounts(deps.db, deps.engine, principal.orgId, where, options.facets) : Promise.resolve([]),
  ]);
  return { total, records: sensitive.records(hits.map((h) => h.record)), facets: sensitive.facets(facets) };
}

/**
 * SQLite, when the whole filter is visibility ∩ text and the order is by time: the in-memory
 * index (search.memindex.ts, search.columns.ts) gives the matching documents as a bitset; the
 * total, the facets and the page come from its columns, and only the page's records are read.
 * Same answer as the SQL path (FTS5 still decides which documents match each text term).
 */
async function columnarSearch(
  deps: Deps,
  q: ReturnType<typeof parseQuery>,
  where: ReturnType<typeof wherePredicate>,
  scope: SearchScope,
  options: RunOptions,
): Promise<RunResult | null> {
  if (deps.engine !== 'sqlite' || where.ftsOnly === null || q.relevance || q.sort.length > 1) return null;
  const key = q.sort[0] ?? { field: 'lastUpdatedEpoch', order: 'desc' as const };
  const column = SYSTEM_SORTS[key.field.toLowerCase()];
  if (column !== 'created_epoch' && column !== 'updated_epoch') return null;
  const text = q.terms.filter((t): t is TextTerm => t.kind === 'text');
  const facetTerms = q.terms.some((t) => t.kind === 'facet');
  const anyAll = q.terms.some((t) => t.kind === 'all');
  const textRequired = text.length > 0 && (q.operation === 'AND' || (!facetTerms && !anyAll));
  const matches = await memoryMatches(
    deps.db,
    {
      orgId: scope.orgId,
      viewableTemplateIds: scope.viewableTemplateIds,
      includeDeleted: q.includeDeleted,
      includeVersions: q.includeVersions,
      text: textRequired ? text : [],
      operation: q.operation,
      fields: q.fields,
    },
    deps.clock.now(),
  );
  // The organization's index is loading or catching up (after a start, or its first search): a
  // bounded answer when many documents match, else the exact SQL path (search.bounded.ts).
  if (!matches)
    return boundedSearch(deps.db, {
      orgId: scope.orgId,
      match: where.ftsOnly,
      column,
      order: key.order,
      from: options.from,
      limit: options.limit,
      facets: options.facets,
    });
  const { idx, docs } = matches;
  const page = topDocs(idx, docs, column, key.order, options.from, options.limit);
  const records =
    page.length === 0
      ? []
      : await deps.db.selectFrom('search_docs').select(['doc_no', 'record']).where('doc_no', 'in', page).execute();
  const byNo = new Map(records.map((r) => [Number(r.doc_no), r.record]));
  return {
    total: docs.length,
    records: page.filter((no) => byNo.has(no)).map((no) => fromJson<Record<string, unknown>>(byNo.get(no)!, {})),
    facets: options.facets ? countFacets(idx, docs, options.facets) : [],
  };
}

/** Removes dot paths (`technicalMetadata`, `metadataDocument.text_content`) from a record. */
export function applyExcludes(record: Record<string, unknown>, excludes: readonly string[]): Record<string, unknown> {
  if (excludes.length === 0) return record;
  const out = structuredClone(record);
  for (const path of excludes) {
    // Own properties only: `__proto__.hasOwnProperty` walked into Object.prototype and deleted
    // from it, which ended the server at its next use.
    const parts = path.split('.');
    const node = ownPath(out, parts.slice(0, -1));
    const last = parts[parts.length - 1]!;
    if (hasOwn(node, last)) delete (node as Record<string, unknown>)[last];
  }
  return out;
}

const SLIM_FIELDS = [
  'objectId',
  'fileId',
  'originalFileId',
  'filename',
  'objectType',
  'fileState',
  'metadataState',
  'currentVersion',
  'versionNumber',
  'createdEpoch',
  'lastUpdatedEpoch',
  'renditions',
];

/** The 1.5 search returns a few fields, plus those named in `includes` (reference §8.3). */
export function slimRecord(record: Record<string, unknown>, includes: readonly string[]): Record<string, unknown> {
  const out = bag();
  for (const key of SLIM_FIELDS) if (hasOwn(record, key)) out[key] = record[key];
  const denormalized = hasOwn(record, 'metadataDenormalized') ? record.metadataDenormalized : undefined;
  for (const include of includes) {
    if (include.startsWith('metadataDocument.')) {
      const field = include.slice('metadataDocument.'.length);
      if (hasOwn(denormalized, field)) {
        const doc = (out.metadataDocument ??= bag()) as Record<string, unknown>;
        doc[field] = (denormalized as Record<string, unknown>)[field];
      }
    } else if (hasOwn(record, include)) {
      out[include] = record[include];
    }
  }
  return out;
}

export async function keywordSearch(deps: Deps, principal: Principal, body: KeywordSearchBody) {
  const spec = specFromBody(body);
  const from = body.from ?? 0;
  const limit = body.limit ?? 50;
  const result = await runSearch(deps, principal, spec, {
    from,
    limit,
    facets: body.aggregations === false ? undefined : { names: body.facets, size: body.facetSize ?? 20 },
  });
  return {
    hitCount: result.records.length,
    totalCount: result.total,
    from,
    limit,
    result: result.records.map((r) => applyExcludes(r, body.excludes ?? [])),
    facets: result.facets,
    ...(result.estimated ? { estimated: true } : {}),
  };
}

export async function streamlinedSearch(deps: Deps, principal: Principal, body: SearchBody) {
  const spec = specFromBody(body);
  const from = body.from ?? 0;
  const limit = body.limit ?? 50;
  const facets =
    body.facets === false
      ? undefined
      : { names: Array.isArray(body.facets) ? body.facets : undefined, size: body.facetSize ?? 20 };
  const result = await runSearch(deps, principal, spec, { from, limit, facets });
  return {
    hitCount: result.records.length,
    totalCount: result.total,
    from,
    limit,
    result: result.records.map((r) => slimRecord(r, body.includes ?? [])),
    facets: result.facets,
    ...(result.estimated ? { estimated: true } : {}),
  };
}

export async function scanAssets(deps: Deps, principal: Principal, body: ScanBody) {
  const spec = specFromBody(body);
  if (body.assetType !== undefined && body.assetType.trim() !== '') {
    const t = facetTerm('Metadata Template', body.assetType);
    spec.filters = [...spec.filters, `("${t.facet}":"${t.value}")`];
  }
  const q = parseQuery(spec);
  const order = scanOrder(q);
  if (body.cursor && body.from)
    throw invalidField('body.from', 'from starts a scan: send it on the first call only, not with a cursor');
  const after = body.cursor ? decodeScanCursor(body.cursor, order) : null;
  const sensitive = await sensitiveView(deps.db, principal, q);
  await syncForSearch(deps);
  const scope: SearchScope = { orgId: principal.orgId, ...(await searchVisibility(deps.db, principal)) };
  const where = wherePredicate(deps.engine, q, scope);
  const page = await scanPage(deps.db, deps.engine, where, order, after, body.limit ?? 100, body.from ?? 0);
  const facets =
    body.aggregations && !body.cursor
      ? await facetCounts(deps.db, deps.engine, principal.orgId, where, { size: 20 })
      : [];
  return {
    hitCount: page.hits.length,
    cursor: page.nextCursor,
    result: sensitive.records(page.hits.map((h) => h.record)),
    facets: sensitive.facets(facets),
  };
}
