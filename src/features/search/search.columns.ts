import { sql } from 'kysely';
import type { Db } from '../../core/db/connect.ts';
import type { FacetRequest, FacetResult } from './search.engine.ts';

/**
 * The embedded engine's columns: per organization, each document's facet value ids and its
 * created/updated times, in typed arrays indexed by doc_no. With them, a search whose whole filter
 * is one FTS5 MATCH (text ∩ visibility) needs from SQLite only the matching rowids: the total is
 * their number, facets are counted and the first page is chosen here, and only the page's records
 * are read. FTS5 stays the authority on which documents match (a removed document is never in its
 * answer), so these columns only have to be current for documents that do match: every query first
 * reloads the documents indexed since its previous look (`search_docs (org_id, indexed_at)`).
 */
interface Dictionary {
  ids: Map<string, number>;
  entries: { facetKey: string; valueKey: string; facet: string; value: string }[];
}

class OrgColumns {
  dict: Dictionary = { ids: new Map(), entries: [] };
  facets = new Map<number, Int32Array>();
  updated = new Map<number, number>();
  created = new Map<number, number>();
  seenIndexedAt = -1;
  loading: Promise<void> | null = null;

  valueId(facetKey: string, valueKey: string, facet: string, value: string): number {
    const key = `${facetKey}\u0000${valueKey}`;
    let id = this.dict.ids.get(key);
    if (id === undefined) {
      id = this.dict.entries.length;
      this.dict.ids.set(key, id);
      this.dict.entries.push({ facetKey, valueKey, facet, value });
    } else {
      const e = this.dict.entries[id]!;
      // Display names as min() in SQL would pick them.
      if (facet < e.facet) e.facet = facet;
      if (value < e.value) e.value = value;
    }
    return id;
  }
}

const cache = new WeakMap<object, Map<string, OrgColumns>>();

async function refresh(db: Db, orgId: string, cols: OrgColumns): Promise<void> {
  const since = cols.seenIndexedAt;
  const maxRow = await sql<{ m: number | null }>`select max(indexed_at) as m from search_docs where org_id = ${orgId}`.execute(db);
  const max = Number(maxRow.rows[0]?.m ?? -1);
  if (max < since) return;
  const docFacets = new Map<number, number[]>();
  const docs = sql<{ doc_no: number; created_epoch: number; updated_epoch: number }>`
    select doc_no, created_epoch, updated_epoch from search_docs where org_id = ${orgId} and indexed_at >= ${Math.max(0, since)}`;
  for (const d of (await docs.execute(db)).rows) {
    const no = Number(d.doc_no);
    cols.created.set(no, Number(d.created_epoch));
    cols.updated.set(no, Number(d.updated_epoch));
    docFacets.set(no, []);
  }
  if (docFacets.size > 0) {
    const facetRows = since < 0
      ? sql<{ doc_no: number; facet_key: string; value_key: string; facet: string; value: string }>`select doc_no, facet_key, value_key, facet, value from search_doc_facets where org_id = ${orgId}`
      : sql<{ doc_no: number; facet_key: string; value_key: string; facet: string; value: string }>`
          select f.doc_no, f.facet_key, f.value_key, f.facet, f.value from search_doc_facets f
          where f.doc_no in (select doc_no from search_docs where org_id = ${orgId} and indexed_at >= ${since})`;
    for (const f of (await facetRows.execute(db)).rows) {
      docFacets.get(Number(f.doc_no))?.push(cols.valueId(f.facet_key, f.value_key, f.facet, f.value));
    }
    for (const [no, ids] of docFacets) cols.facets.set(no, Int32Array.from(ids));
  }
  cols.seenIndexedAt = max;
}

export async function orgColumns(db: Db, orgId: string): Promise<OrgColumns> {
  let byOrg = cache.get(db);
  if (!byOrg) cache.set(db, (byOrg = new Map()));
  let cols = byOrg.get(orgId);
  if (!cols) byOrg.set(orgId, (cols = new OrgColumns()));
  while (cols.loading) await cols.loading;
  cols.loading = refresh(db, orgId, cols).finally(() => {
    cols.loading = null;
  });
  await cols.loading;
  return cols;
}

export function countFacets(cols: OrgColumns, docNos: readonly number[], request: FacetRequest): FacetResult[] {
  const names = request.names?.map((n) => n.normalize('NFKD').replace(/\p{M}+/gu, '').toLowerCase().replace(/\s+/g, ' ').trim());
  if (names && names.length === 0) return [];
  const wanted = names ? new Set(names) : null;
  const counts = new Map<number, number>();
  for (const no of docNos) {
    const ids = cols.facets.get(no);
    if (!ids) continue;
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!;
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
  }
  const byFacet = new Map<string, { name: string; values: { key: string; valueKey: string; doc_count: number }[] }>();
  for (const [id, n] of counts) {
    const e = cols.dict.entries[id]!;
    if (wanted && !wanted.has(e.facetKey)) continue;
    let entry = byFacet.get(e.facetKey);
    if (!entry) byFacet.set(e.facetKey, (entry = { name: e.facet, values: [] }));
    else if (e.facet < entry.name) entry.name = e.facet;
    entry.values.push({ key: e.value, valueKey: e.valueKey, doc_count: n });
  }
  const order = names ?? [...byFacet.keys()].sort();
  const out: FacetResult[] = [];
  for (const key of order) {
    const entry = byFacet.get(key);
    if (!entry) continue;
    entry.values.sort((a, b) => b.doc_count - a.doc_count || (a.valueKey < b.valueKey ? -1 : a.valueKey > b.valueKey ? 1 : 0));
    out.push({ facet_name: entry.name, values: entry.values.slice(0, request.size).map(({ key, doc_count }) => ({ key, doc_count })) });
  }
  return out;
}

/** doc_nos of the page: by created/updated time (then doc_no ascending), skipping `from`. */
export function topDocs(cols: OrgColumns, docNos: readonly number[], column: 'created_epoch' | 'updated_epoch', order: 'asc' | 'desc', from: number, limit: number): number[] {
  const values = column === 'created_epoch' ? cols.created : cols.updated;
  const want = from + limit;
  if (want === 0) return [];
  const sign = order === 'asc' ? 1 : -1;
  const cmp = (a: number, b: number) => sign * ((values.get(a) ?? 0) - (values.get(b) ?? 0)) || a - b;
  // A bounded selection: keep the best `want` seen so far (sorted), insert by binary search.
  const best: number[] = [];
  for (const no of docNos) {
    if (best.length === want && cmp(no, best[want - 1]!) >= 0) continue;
    let lo = 0;
    let hi = best.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cmp(best[mid]!, no) < 0) lo = mid + 1;
      else hi = mid;
    }
    best.splice(lo, 0, no);
    if (best.length > want) best.pop();
  }
  return best.slice(from);
}
