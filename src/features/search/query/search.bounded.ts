import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../../core/db/connect.ts';
import { fromJson } from '../../../core/db/json.ts';
import { facetCountsOf, type FacetRequest, type FacetResult } from './search.engine.ts';

/**
 * SQLite, while an organization's in-memory index is not ready (loading after a start without a
 * snapshot, or catching up after an old one): the common search shape — visibility ∩ text, sorted
 * by a time — answered with bounded work instead of the SQL path, whose page (every match joined
 * and sorted) and facets (every match's facet rows) take seconds for a common word at 1,000,000
 * assets (docs/decisions/0020-bounded-search-while-loading.md).
 *
 * - The total is exact: FTS5 counts the MATCH (visibility is inside it) without reading documents.
 * - At most `exactMax` matches: null, and the caller runs the exact SQL path (cheap for so few), so
 *   a small library always gets the SQL path's answers.
 * - More: the page is exact — the time index is read in the sort's order and each document tested,
 *   stopping at `from + limit` hits: by a set of the matching doc_nos when the matches are few
 *   enough to read (under a twentieth of the documents), else by probing FTS5 per document by
 *   rowid. The facets are counted over the first `facetSample` matches (doc_no order) and scaled
 *   to the total, and the answer is flagged `estimated`.
 */
export const BOUNDED_LIMITS = {
  /** Matches up to which the exact SQL path answers. */
  exactMax: 10_000,
  /** Matches whose facet rows are counted (then scaled to the total). */
  facetSample: 5000,
  /** Documents of the time index read for one page before the page takes the exact SQL way. */
  walkMax: 100_000,
  /** Matches under this fraction of the documents are read as a set; more are probed per document. */
  readMatchesBelow: 0.05,
};

export interface BoundedAnswer {
  total: number;
  records: Record<string, unknown>[];
  facets: FacetResult[];
  estimated: true;
}

export interface BoundedQuery {
  orgId: string;
  /** The whole filter as one FTS5 MATCH expression (wherePredicate's ftsOnly). */
  match: string;
  column: 'created_epoch' | 'updated_epoch';
  order: 'asc' | 'desc';
  from: number;
  limit: number;
  facets?: FacetRequest;
}

/** Null when the matches are few (or the page is deep in sparse matches): the exact SQL path answers then. */
export async function boundedSearch(db: Db, q: BoundedQuery): Promise<BoundedAnswer | null> {
  const counted = await sql<{
    n: number;
  }>`select count(*) as n from search_fts where search_fts match ${q.match}`.execute(db);
  const total = Number(counted.rows[0]?.n ?? 0);
  if (total <= BOUNDED_LIMITS.exactMax) return null;
  const page = await walkPage(db, q, total);
  if (!page) return null;
  const sample = Math.min(total, BOUNDED_LIMITS.facetSample);
  const facets = q.facets
    ? await facetCountsOf(
        db,
        q.orgId,
        sql`select rowid from search_fts where search_fts match ${q.match} limit ${sample}`,
        q.facets,
        total / sample,
      )
    : [];
  return { total, records: page, facets, estimated: true };
}

/** Tests a chunk of doc_nos (in order), keeping those that match. */
type Tester = (docs: number[]) => Promise<number[]>;

async function matchTester(db: Db, q: BoundedQuery, total: number): Promise<{ test: Tester; chunk: number }> {
  const top = await sql<{ m: number | null }>`select max(doc_no) as m from search_docs`.execute(db);
  const maxDoc = Number(top.rows[0]?.m ?? 0);
  if (total < maxDoc * BOUNDED_LIMITS.readMatchesBelow) {
    // Few enough to read: one FTS5 read of the matching rowids, then a lookup per document.
    const set = new Uint8Array(maxDoc + 1);
    const rows = await sql<{ rowid: number }>`select rowid from search_fts where search_fts match ${q.match}`.execute(
      db,
    );
    for (const r of rows.rows) set[Number(r.rowid)] = 1;
    return { test: async (docs) => docs.filter((d) => set[d] === 1), chunk: 8192 };
  }
  // Dense: a hit every few documents; FTS5 seeks each rowid in the MATCH's posting lists.
  return {
    test: async (docs) =>
      (
        await sql<{ doc_no: number }>`
          select value as doc_no from json_each(${JSON.stringify(docs)})
          where exists (select 1 from search_fts where search_fts match ${q.match} and rowid = value)`.execute(db)
      ).rows.map((r) => Number(r.doc_no)),
    chunk: 1024,
  };
}

/**
 * The exact page: the time index read in the sort's order (keyset: the sort's time, then doc_no
 * ascending, as the SQL path breaks ties), each chunk tested, until `from + limit` hits.
 */
async function walkPage(db: Db, q: BoundedQuery, total: number): Promise<Record<string, unknown>[] | null> {
  const want = q.from + q.limit;
  const col = sql.ref(q.column);
  const dir = q.order === 'asc' ? sql`asc` : sql`desc`;
  const { test, chunk: size } = await matchTester(db, q, total);
  const hits: number[] = [];
  let after: [number, number] | null = null;
  for (let walked = 0; hits.length < want; ) {
    if (walked >= BOUNDED_LIMITS.walkMax) return null;
    // The time bound alone is the index range; the tie on doc_no is a filter within it.
    const past: RawBuilder<unknown> = after
      ? q.order === 'asc'
        ? sql`and ${col} >= ${after[0]} and (${col} > ${after[0]} or doc_no > ${after[1]})`
        : sql`and ${col} <= ${after[0]} and (${col} < ${after[0]} or doc_no > ${after[1]})`
      : sql``;
    const chunk: { doc_no: number; t: number }[] = (
      await sql<{ doc_no: number; t: number }>`
        select doc_no, ${col} as t from search_docs where org_id = ${q.orgId} ${past}
        order by ${col} ${dir}, doc_no asc limit ${size}`.execute(db)
    ).rows;
    if (chunk.length === 0) break;
    walked += chunk.length;
    const last = chunk[chunk.length - 1]!;
    after = [Number(last.t), Number(last.doc_no)];
    hits.push(...(await test(chunk.map((r) => Number(r.doc_no)))));
  }
  const docs = hits.slice(q.from, want);
  if (docs.length === 0) return [];
  const records = await db.selectFrom('search_docs').select(['doc_no', 'record']).where('doc_no', 'in', docs).execute();
  const byNo = new Map(records.map((r) => [Number(r.doc_no), r.record]));
  return docs.filter((no) => byNo.has(no)).map((no) => fromJson<Record<string, unknown>>(byNo.get(no)!, {}));
}
