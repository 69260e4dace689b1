import type { Db } from '../../../core/db/connect.ts';
import { andInto, count, hasBit, newBitset, orInto, toDocs, type Bitset } from './search.bitset.ts';
import type { FacetRequest, FacetResult } from '../query/search.engine.ts';
import {
  STATE_DELETED_CURRENT,
  STATE_DELETED_OLDER,
  STATE_LIVE_CURRENT,
  STATE_LIVE_OLDER,
  collectionMembers,
  readyIndex,
  termBits,
  type OrgIndex,
} from './search.memindex.ts';
import { fts5Expression, type Operation, type TextTerm } from '../query/search.query.ts';
import type { TextField } from '../search.tokenize.ts';

/**
 * Queries over the embedded engine's in-memory index (search.memindex.ts): a search whose whole
 * filter is visibility ∩ text is bitset algebra — the viewer's visibility bitset AND the text
 * terms' bitsets (each the cached answer of FTS5) — then the total is the number of set bits, the
 * facets are counted over the facet columns of those documents and the page is the best
 * `from + limit` by the sort column. Only the page's records are read from SQLite.
 */
export interface MemoryQuery {
  orgId: string;
  viewableTemplateIds: readonly string[];
  includeDeleted: boolean;
  includeVersions: boolean;
  /** Text terms that must match (combined by `operation`); empty: visibility alone. */
  text: readonly TextTerm[];
  operation: Operation;
  fields: readonly TextField[];
}

export function allowedStates(includeDeleted: boolean, includeVersions: boolean): number[] {
  return [
    STATE_LIVE_CURRENT,
    ...(includeDeleted ? [STATE_DELETED_CURRENT] : []),
    ...(includeVersions ? [STATE_LIVE_OLDER] : []),
    ...(includeDeleted && includeVersions ? [STATE_DELETED_OLDER] : []),
  ];
}

/** The FTS5 expressions whose conjunction is one text term (a token each, or the whole phrase). */
function termParts(term: TextTerm, fields: readonly TextField[]): string[] {
  if (term.phrase) return [fts5Expression([term], fields, 'AND')];
  return term.tokens.map((t, i) =>
    fts5Expression(
      [{ kind: 'text', tokens: [t], phrase: false, prefix: term.prefix && i === term.tokens.length - 1 }],
      fields,
      'AND',
    ),
  );
}

async function textBits(db: Db, idx: OrgIndex, q: MemoryQuery): Promise<Bitset> {
  let out: Bitset | null = null;
  for (const term of q.text) {
    let bits: Bitset | null = null;
    for (const expr of termParts(term, q.fields)) {
      const b = await termBits(db, idx, expr);
      if (!bits) bits = b.slice();
      else andInto(bits, b);
    }
    if (!out) out = bits!;
    else if (q.operation === 'AND') andInto(out, bits!);
    else orInto(out, bits!);
  }
  return out ?? newBitset(idx.capacity);
}

/**
 * The matching doc_nos, ascending, and the index they were found in — or null while the
 * organization's index is loading (the caller answers the SQL way).
 */
export async function memoryMatches(
  db: Db,
  q: MemoryQuery,
  now: number,
): Promise<{ idx: OrgIndex; docs: Int32Array } | null> {
  const idx = await readyIndex(db, q.orgId, now);
  if (!idx) return null;
  idx.searches += 1;
  const visible = idx.visible(q.viewableTemplateIds, allowedStates(q.includeDeleted, q.includeVersions));
  if (q.text.length === 0) return { idx, docs: toDocs(visible) };
  const bits = await textBits(db, idx, q);
  andInto(bits, visible);
  return { idx, docs: toDocs(bits) };
}

export function countFacets(idx: OrgIndex, docNos: ArrayLike<number>, request: FacetRequest): FacetResult[] {
  const names = request.names?.map((n) =>
    n
      .normalize('NFKD')
      .replace(/\p{M}+/gu, '')
      .toLowerCase()
      .replace(/\s+/g, ' ')
      .trim(),
  );
  if (names && names.length === 0) return [];
  const wanted = names ? new Set(names) : null;
  const counts = new Int32Array(idx.dict.length);
  const { facetStart, facetIds, facetChanged } = idx;
  const base = facetStart.length - 1;
  for (let k = 0; k < docNos.length; k++) {
    const no = docNos[k]!;
    if (facetChanged[no] === 1 || no >= base) {
      const ids = idx.facetsOf(no);
      for (let i = 0; i < ids.length; i++) counts[ids[i]!]! += 1;
      continue;
    }
    for (let i = facetStart[no]!, end = facetStart[no + 1]!; i < end; i++) counts[facetIds[i]!]! += 1;
  }
  const byFacet = new Map<string, { name: string; values: { key: string; valueKey: string; doc_count: number }[] }>();
  for (let id = 0; id < counts.length; id++) {
    const n = counts[id]!;
    if (n === 0) continue;
    const e = idx.dict[id]!;
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
    entry.values.sort(
      (a, b) => b.doc_count - a.doc_count || (a.valueKey < b.valueKey ? -1 : a.valueKey > b.valueKey ? 1 : 0),
    );
    out.push({
      facet_name: entry.name,
      values: entry.values.slice(0, request.size).map(({ key: k, doc_count }) => ({ key: k, doc_count })),
    });
  }
  return out;
}

/** doc_nos of the page: by created/updated time (then doc_no ascending), skipping `from`. */
export function topDocs(
  idx: OrgIndex,
  docNos: Int32Array,
  column: 'created_epoch' | 'updated_epoch',
  order: 'asc' | 'desc',
  from: number,
  limit: number,
): number[] {
  const values = column === 'created_epoch' ? idx.created : idx.updated;
  const want = Math.min(from + limit, docNos.length);
  if (want <= from) return [];
  const sign = order === 'asc' ? 1 : -1;
  const cmp = (a: number, b: number) => sign * (values[a]! - values[b]!) || a - b;
  if (want > 512) return Array.from(docNos.slice().sort(cmp).subarray(from, want));
  // A bounded selection: keep the best `want` seen so far (sorted), insert by binary search.
  const best: number[] = [];
  for (let k = 0; k < docNos.length; k++) {
    const no = docNos[k]!;
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

/**
 * A collection's members (file ids, in collection order) whose document the viewer may see: one of
 * the viewer's templates, not in the recycle bin (any version), as the SQL of collections.repo.ts.
 * Null while the organization's index is loading: the caller reads them the SQL way.
 */
export async function visibleCollectionMemberIds(
  db: Db,
  orgId: string,
  collectionId: string,
  updatedAt: number,
  viewable: readonly string[],
  now: number,
): Promise<string[] | null> {
  if (viewable.length === 0) return [];
  const idx = await readyIndex(db, orgId, now);
  if (!idx) return null;
  const members = await collectionMembers(db, idx, collectionId, updatedAt);
  const visible = idx.visible(viewable, [STATE_LIVE_CURRENT, STATE_LIVE_OLDER]);
  const out: string[] = [];
  const { start, docs } = members;
  for (let i = 0; i < members.fileIds.length; i++) {
    for (let j = start[i]!; j < start[i + 1]!; j++) {
      if (hasBit(visible, docs[j]!)) {
        out.push(members.fileIds[i]!);
        break;
      }
    }
  }
  return out;
}

export { count as bitCount };
