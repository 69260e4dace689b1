import { sql, type RawBuilder } from 'kysely';
import type { DbOrTrx, Engine } from '../../../core/db/connect.ts';
import { fromJson } from '../../../core/db/json.ts';
import { invalidField } from '../../../core/http/errors.ts';
import { aclMatch } from '../search.tokenize.ts';
import {
  SYSTEM_SORTS,
  fts5Expression,
  tsqueryExpression,
  type FacetTerm,
  type ParsedQuery,
  type TextTerm,
} from './search.query.ts';

/**
 * One query layer over both engines. Every filter — visibility included — is part of the WHERE
 * clause of the index query, so the hits, the total and the facet counts are all computed over
 * the same set: the assets this caller may view that match. Nothing is trimmed after paging.
 */
export interface SearchScope {
  orgId: string;
  /** Security templates through which the caller holds View. Empty: the caller sees nothing. */
  viewableTemplateIds: readonly string[];
  /** Restrict to the members of a collection (already checked visible to the caller). */
  collectionId?: string;
  /** Metadata templates the caller may not see: their assets are left out (reference §8.1). */
  hiddenMetadataTemplateIds?: readonly string[];
}

export interface FacetRequest {
  /** Facet names to compute (case-insensitive); undefined: every facet present in the result. */
  names?: readonly string[];
  /** Values per facet, most frequent first. */
  size: number;
}

export interface FacetResult {
  facet_name: string;
  values: { key: string; doc_count: number }[];
}

export interface SearchPage {
  total: number;
  hits: { docNo: number; record: Record<string, unknown> }[];
  facets: FacetResult[];
  /** For scans: the cursor after the last hit, or null when the scan is complete. */
  nextCursor: string | null;
}

const ORDER_SQL = { asc: sql`asc`, desc: sql`desc` } as const;

function textPredicate(engine: Engine, q: ParsedQuery, terms: TextTerm[], op: 'AND' | 'OR'): RawBuilder<boolean> {
  if (engine === 'sqlite') {
    return sql<boolean>`d.doc_no in (select rowid from search_fts where search_fts match ${fts5Expression(terms, q.fields, op)})`;
  }
  return sql<boolean>`d.tsv @@ ${tsqueryExpression(terms, q.fields, op)}::tsquery`;
}

function facetPredicate(engine: Engine, orgId: string, f: FacetTerm): RawBuilder<boolean> {
  if (engine === 'postgres') {
    // A probe of the primary key (doc_no, facet_key, value_key) per candidate document: cheap
    // whatever the planner believes of the table (see docs/decisions/0012-postgres-search-under-load.md).
    return sql<boolean>`exists (select 1 from search_doc_facets f where f.doc_no = d.doc_no and f.facet_key = ${f.facetKey} and f.value_key = ${f.valueKey})`;
  }
  return sql<boolean>`d.doc_no in (select f.doc_no from search_doc_facets f where f.org_id = ${orgId} and f.facet_key = ${f.facetKey} and f.value_key = ${f.valueKey})`;
}

/** The filter shared by the page, the total and the facets. */
export interface Predicate {
  where: RawBuilder<boolean>;
  /**
   * SQLite: when the whole filter is one FTS5 MATCH expression (organization, state, visibility
   * and text all intersected inside FTS5), it is here, so totals are counted in FTS5 alone.
   */
  ftsOnly: string | null;
}

function aclExpression(q: ParsedQuery, scope: SearchScope): string {
  return aclMatch(scope.viewableTemplateIds, q.includeDeleted, q.includeVersions);
}

export function wherePredicate(engine: Engine, q: ParsedQuery, scope: SearchScope): Predicate {
  const { orgId } = scope;
  if (scope.viewableTemplateIds.length === 0) return { where: sql<boolean>`1 = 0`, ftsOnly: null };
  const parts: RawBuilder<boolean>[] = [];
  const text = q.terms.filter((t): t is TextTerm => t.kind === 'text');
  const facets = q.terms.filter((t): t is FacetTerm => t.kind === 'facet');
  const anyAll = q.terms.some((t) => t.kind === 'all');
  // Text is a required conjunct when every term must match, or when only text terms are ORed.
  const textRequired = text.length > 0 && (q.operation === 'AND' || (facets.length === 0 && !anyAll));
  let ftsOnly: string | null = null;
  if (engine === 'sqlite') {
    const acl = aclExpression(q, scope);
    const match = textRequired ? `(${acl}) AND (${fts5Expression(text, q.fields, q.operation)})` : acl;
    parts.push(sql<boolean>`d.doc_no in (select rowid from search_fts where search_fts match ${match})`);
    ftsOnly = match;
  } else {
    parts.push(sql<boolean>`d.org_id = ${orgId}`);
    if (!q.includeDeleted) parts.push(sql<boolean>`d.deleted = 0`);
    if (!q.includeVersions) parts.push(sql<boolean>`d.current_version = 1`);
    // Visibility: a probe of search_doc_templates' primary key (doc_no, template_id) per candidate
    // document. The `doc_no in (select … where org_id and template_id)` form let a planner with
    // stale statistics (a table analyzed while empty, autovacuum off) rescan every document of the
    // template for each candidate: 126 ms instead of 2 ms at 1,500 assets, quadratic beyond.
    parts.push(
      sql<boolean>`exists (select 1 from search_doc_templates t where t.doc_no = d.doc_no and t.template_id in (${sql.join([...scope.viewableTemplateIds])}))`,
    );
    if (textRequired) parts.push(textPredicate(engine, q, text, q.operation));
  }
  const extra = parts.length;
  if (scope.hiddenMetadataTemplateIds && scope.hiddenMetadataTemplateIds.length > 0) {
    parts.push(
      sql<boolean>`(d.metadata_template_id is null or d.metadata_template_id not in (${sql.join([...scope.hiddenMetadataTemplateIds])}))`,
    );
  }
  if (scope.collectionId) {
    parts.push(
      sql<boolean>`d.file_id in (select m.file_id from collection_members m where m.collection_id = ${scope.collectionId})`,
    );
  }
  if (q.operation === 'AND') {
    for (const f of facets) parts.push(facetPredicate(engine, orgId, f));
  } else if (!anyAll && q.terms.length > 0 && !textRequired) {
    const any: RawBuilder<boolean>[] = [];
    if (text.length > 0) any.push(textPredicate(engine, q, text, 'OR'));
    for (const f of facets) any.push(facetPredicate(engine, orgId, f));
    parts.push(sql<boolean>`(${sql.join(any, sql` or `)})`);
  }
  for (const f of q.filters) parts.push(facetPredicate(engine, orgId, f));
  for (const r of q.ranges) {
    const column = SYSTEM_SORTS[r.field.toLowerCase()];
    if (column && column !== 'filename_key') {
      if (r.from !== null) parts.push(sql<boolean>`d.${sql.raw(column)} >= ${r.from}`);
      if (r.to !== null) parts.push(sql<boolean>`d.${sql.raw(column)} <= ${r.to}`);
    } else {
      const bounds: RawBuilder<boolean>[] = [
        sql<boolean>`s.org_id = ${orgId}`,
        sql<boolean>`s.field = ${r.field.toLowerCase()}`,
        sql<boolean>`s.num is not null`,
      ];
      if (r.from !== null) bounds.push(sql<boolean>`s.num >= ${r.from}`);
      if (r.to !== null) bounds.push(sql<boolean>`s.num <= ${r.to}`);
      parts.push(
        engine === 'postgres'
          ? sql<boolean>`exists (select 1 from search_doc_sorts s where s.doc_no = d.doc_no and ${sql.join(bounds, sql` and `)})`
          : sql<boolean>`d.doc_no in (select s.doc_no from search_doc_sorts s where ${sql.join(bounds, sql` and `)})`,
      );
    }
  }
  return {
    where: sql.join(parts, sql` and `) as RawBuilder<boolean>,
    ftsOnly: parts.length === extra && engine === 'sqlite' ? ftsOnly : null,
  };
}

interface OrderPlan {
  joins: RawBuilder<unknown>[];
  order: RawBuilder<unknown>[];
}

/** Text sorts compare bytes on both engines (PostgreSQL's default collation depends on the locale). */
const textOrder = (engine: Engine, expr: RawBuilder<unknown>) =>
  engine === 'postgres' ? sql`${expr} collate "C"` : expr;

function orderPlan(engine: Engine, q: ParsedQuery): OrderPlan {
  const joins: RawBuilder<unknown>[] = [];
  const order: RawBuilder<unknown>[] = [];
  const text = q.terms.filter((t): t is TextTerm => t.kind === 'text');
  if (q.relevance && text.length > 0) {
    if (engine === 'sqlite') {
      joins.push(
        sql`left join (select rowid as r, rank from search_fts where search_fts match ${fts5Expression(text, q.fields, q.operation)}) m on m.r = d.doc_no`,
      );
      order.push(sql`coalesce(m.rank, 0) asc`);
    } else {
      order.push(sql`ts_rank(d.tsv, ${tsqueryExpression(text, q.fields, q.operation)}::tsquery) desc`);
    }
  }
  const keys =
    q.sort.length > 0 || (q.relevance && text.length > 0)
      ? q.sort
      : [{ field: 'lastUpdatedEpoch', order: 'desc' as const }];
  keys.forEach((key, i) => {
    const column = SYSTEM_SORTS[key.field.toLowerCase()];
    if (column) {
      const expr = column === 'filename_key' ? textOrder(engine, sql`d.filename_key`) : sql`d.${sql.raw(column)}`;
      order.push(sql`${expr} ${ORDER_SQL[key.order]}`);
      return;
    }
    const alias = sql.raw(`s${i}`);
    joins.push(
      sql`left join search_doc_sorts ${alias} on ${alias}.doc_no = d.doc_no and ${alias}.field = ${key.field.toLowerCase()}`,
    );
    // Assets without the value come last in both directions, on both engines.
    order.push(sql`case when ${alias}.num is null and ${alias}.txt is null then 1 else 0 end asc`);
    order.push(sql`${alias}.num ${ORDER_SQL[key.order]}`);
    order.push(sql`${textOrder(engine, sql`${alias}.txt`)} ${ORDER_SQL[key.order]}`);
  });
  order.push(sql`d.doc_no asc`);
  return { joins, order };
}

export async function countMatches(db: DbOrTrx, p: Predicate): Promise<number> {
  const { rows } =
    p.ftsOnly !== null
      ? await sql<{
          n: number | string;
        }>`select count(*) as n from search_fts where search_fts match ${p.ftsOnly}`.execute(db)
      : await sql<{ n: number | string }>`select count(*) as n from search_docs d where ${p.where}`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

type FacetRow = { facet_key: string; value_key: string; facet: string; value: string; n: number | string };

/** Facet names as the index keys them (case- and accent-folded); undefined: every facet. */
function facetNames(request: FacetRequest): string[] | undefined {
  return request.names?.map((n) =>
    n
      .normalize('NFKD')
      .replace(/\p{M}+/gu, '')
      .toLowerCase()
      .replace(/\s+/g, ' ')
      .trim(),
  );
}

function shapeFacets(rows: readonly FacetRow[], names: string[] | undefined, size: number): FacetResult[] {
  const byFacet = new Map<string, { name: string; values: { key: string; valueKey: string; doc_count: number }[] }>();
  for (const row of rows) {
    let entry = byFacet.get(row.facet_key);
    if (!entry) byFacet.set(row.facet_key, (entry = { name: row.facet, values: [] }));
    entry.values.push({ key: row.value, valueKey: row.value_key, doc_count: Number(row.n) });
  }
  const order = names ?? [...byFacet.keys()].sort();
  const out: FacetResult[] = [];
  for (const key of order) {
    const entry = byFacet.get(key);
    if (!entry) continue;
    entry.values.sort(
      (a, b) => b.doc_count - a.doc_count || (a.valueKey < b.valueKey ? -1 : a.valueKey > b.valueKey ? 1 : 0),
    );
    out.push({
      facet_name: entry.name,
      values: entry.values.slice(0, size).map(({ key: k, doc_count }) => ({ key: k, doc_count })),
    });
  }
  return out;
}

export async function facetCounts(
  db: DbOrTrx,
  engine: Engine,
  orgId: string,
  p: Predicate,
  request: FacetRequest,
): Promise<FacetResult[]> {
  if (engine === 'postgres') return (await totalAndFacets(db, p, request)).facets;
  return facetCountsOf(
    db,
    orgId,
    p.ftsOnly !== null
      ? sql`select rowid from search_fts where search_fts match ${p.ftsOnly}`
      : sql`select d.doc_no from search_docs d where ${p.where}`,
    request,
  );
}

/**
 * SQLite: facet counts over the documents a subquery names (all the matches, or a bounded sample
 * of them: search.bounded.ts), each count multiplied by `scale` (1 unless sampled).
 */
export async function facetCountsOf(
  db: DbOrTrx,
  orgId: string,
  docs: RawBuilder<unknown>,
  request: FacetRequest,
  scale = 1,
): Promise<FacetResult[]> {
  const names = facetNames(request);
  if (names && names.length === 0) return [];
  const nameFilter = names ? sql`and f.facet_key in (${sql.join(names)})` : sql``;
  const { rows } = await sql<FacetRow>`
    select f.facet_key, f.value_key, min(f.facet) as facet, min(f.value) as value, count(*) as n
    from search_doc_facets f
    where f.org_id = ${orgId} ${nameFilter} and f.doc_no in (${docs})
    group by f.facet_key, f.value_key`.execute(db);
  if (scale !== 1) for (const r of rows) r.n = Math.max(1, Math.round(Number(r.n) * scale));
  return shapeFacets(rows, names, request.size);
}

/**
 * PostgreSQL: the total and the facet counts in one statement. The matching documents are found
 * once (a materialized CTE), counted, and joined to their facet rows by search_doc_facets' primary
 * key — one pass over the matches and one round trip, instead of two statements each evaluating
 * the whole filter (and each holding a pooled connection). Same numbers as countMatches + facetCounts.
 */
export async function totalAndFacets(
  db: DbOrTrx,
  p: Predicate,
  request: FacetRequest | undefined,
): Promise<{ total: number; facets: FacetResult[] }> {
  const names = request ? facetNames(request) : undefined;
  if (!request || (names && names.length === 0)) return { total: await countMatches(db, p), facets: [] };
  const nameFilter = names ? sql`where f.facet_key in (${sql.join(names)})` : sql``;
  const { rows } = await sql<FacetRow & { total: number | string | null }>`
    with m as materialized (select d.doc_no from search_docs d where ${p.where})
    select null as facet_key, null as value_key, null as facet, null as value, count(*) as n, 1 as total from m
    union all
    select f.facet_key, f.value_key, min(f.facet), min(f.value), count(*), null
    from m join search_doc_facets f on f.doc_no = m.doc_no ${nameFilter}
    group by f.facet_key, f.value_key`.execute(db);
  const totalRow = rows.find((r) => r.total !== null);
  return {
    total: Number(totalRow?.n ?? 0),
    facets: shapeFacets(
      rows.filter((r) => r.total === null),
      names,
      request.size,
    ),
  };
}

export async function pageOfHits(
  db: DbOrTrx,
  engine: Engine,
  q: ParsedQuery,
  p: Predicate,
  from: number,
  limit: number,
): Promise<SearchPage['hits']> {
  if (limit === 0) return [];
  const plan = orderPlan(engine, q);
  const { rows } = await sql<{ doc_no: number | string; record: string }>`
    select d.doc_no, d.record from search_docs d ${sql.join(plan.joins, sql` `)}
    where ${p.where}
    order by ${sql.join(plan.order, sql`, `)}
    limit ${limit} offset ${from}`.execute(db);
  return rows.map((r) => ({ docNo: Number(r.doc_no), record: fromJson<Record<string, unknown>>(r.record, {}) }));
}

// --- scans: keyset over (sort column, doc_no) ---

type ScanColumn = 'doc_no' | 'created_epoch' | 'updated_epoch' | 'filename_key';

export interface ScanOrder {
  column: ScanColumn;
  order: 'asc' | 'desc';
}

export function scanOrder(q: ParsedQuery): ScanOrder {
  const key = q.sort[0];
  if (!key) return { column: 'doc_no', order: 'asc' };
  const column = SYSTEM_SORTS[key.field.toLowerCase()];
  if (!column || q.sort.length > 1) {
    throw invalidField(
      'body.sortBy',
      'a scan sorts by one of createdEpoch, lastUpdatedEpoch or filename (or, when omitted, by index order)',
    );
  }
  return { column, order: key.order };
}

export function encodeScanCursor(values: (string | number)[]): string {
  return Buffer.from(JSON.stringify(['s1', ...values])).toString('base64url');
}

export function decodeScanCursor(cursor: string, order: ScanOrder): (string | number)[] {
  try {
    const values = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    const arity = order.column === 'doc_no' ? 1 : 2;
    if (Array.isArray(values) && values[0] === 's1' && values.length === arity + 1) {
      const rest = values.slice(1);
      const last = rest[rest.length - 1];
      // Every number a cursor carries meets a bigint column: whole and within ±2^53, or the cursor is not ours.
      const key = rest[0];
      const keyOk =
        arity === 1 ||
        (order.column === 'filename_key'
          ? typeof key === 'string'
          : typeof key === 'number' && Number.isSafeInteger(key));
      if (typeof last === 'number' && Number.isSafeInteger(last) && last >= 0 && keyOk) {
        return rest as (string | number)[];
      }
    }
  } catch {
    // below
  }
  throw invalidField(
    'body.cursor',
    'is not a cursor of this scan (its sort order changed, or it was not issued by this server)',
  );
}

export async function scanPage(
  db: DbOrTrx,
  engine: Engine,
  p: Predicate,
  order: ScanOrder,
  after: (string | number)[] | null,
  limit: number,
  skip = 0,
): Promise<{ hits: SearchPage['hits']; nextCursor: string | null }> {
  const parts: RawBuilder<boolean>[] = [p.where];
  const col = order.column === 'filename_key' ? textOrder(engine, sql`d.filename_key`) : sql.raw(`d.${order.column}`);
  if (after) {
    if (order.column === 'doc_no') {
      parts.push(sql<boolean>`d.doc_no > ${after[0]}`);
    } else {
      const cmp = order.order === 'asc' ? sql.raw('>') : sql.raw('<');
      parts.push(sql<boolean>`(${col} ${cmp} ${after[0]} or (${col} = ${after[0]} and d.doc_no > ${after[1]}))`);
    }
  }
  const orderBy = order.column === 'doc_no' ? sql`d.doc_no asc` : sql`${col} ${ORDER_SQL[order.order]}, d.doc_no asc`;
  const { rows } = await sql<{ doc_no: number | string; record: string; k: string | number }>`
    select d.doc_no, d.record, d.${sql.raw(order.column)} as k from search_docs d
    where ${sql.join(parts, sql` and `)}
    order by ${orderBy}
    limit ${limit + 1}${skip > 0 ? sql` offset ${skip}` : sql``}`.execute(db);
  const more = rows.length > limit;
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const nextCursor =
    more && last
      ? encodeScanCursor(
          order.column === 'doc_no'
            ? [Number(last.doc_no)]
            : [order.column === 'filename_key' ? String(last.k) : Number(last.k), Number(last.doc_no)],
        )
      : null;
  return {
    hits: page.map((r) => ({ docNo: Number(r.doc_no), record: fromJson<Record<string, unknown>>(r.record, {}) })),
    nextCursor,
  };
}
