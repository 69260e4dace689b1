import { sql } from 'kysely';
import type { Db } from '../../../core/db/connect.ts';
import {
  andInto,
  clearBit,
  fromDocs,
  newBitset,
  orInto,
  resized,
  setBit,
  wordsFor,
  type Bitset,
} from './search.bitset.ts';

/**
 * The embedded engine's in-memory index, one per organization, next to FTS5 (which stays the store
 * and the authority on which documents match a text term). Everything is typed arrays indexed by
 * doc_no, never an object per document:
 * - each document's state (live/deleted × current/older version) as 4 bitsets, its created and
 *   updated times, its security templates and its facet values (compressed rows, with the documents
 *   changed since the load kept aside);
 * - the answer of FTS5 for a text term (a token, a prefix or a phrase, over some fields), cached as a
 *   bitset when it is large (the common words, where FTS5 itself is the cost), least recently used
 *   first out under a byte budget;
 * - per viewer, the visibility bitset (templates the caller may view × allowed states), rebuilt
 *   when anything changed;
 * - per collection, its members' doc_nos in collection order.
 * It loads in the background (at start, or after the organization's first search; never inside a
 * search) and is brought up to date by every query: documents indexed since the last look (`search_docs (org_id, indexed_at)`) are
 * re-read, cached term bitsets are re-asked of FTS5 for those documents only, and removed
 * documents are dropped through the removal log (`noteRemovedDocuments`); more changed documents
 * than CATCHUP_LIMITS.inlineMax are read by a background catch-up instead. Idle organizations are
 * unloaded (IDLE_MS) and the total is bounded (MAX_TOTAL_BYTES).
 */
export const IDLE_MS = 24 * 3_600_000;
export const MAX_TOTAL_BYTES = 1024 * 1024 * 1024;
/** Cached term bitsets per organization. */
export const TERM_BUDGET_BYTES = 64 * 1024 * 1024;
/** Terms matching fewer documents are asked of FTS5 each time (cheap for FTS5 at that size). */
export const TERM_CACHE_MIN = 2000;
/** More changed documents than this in one look: cached terms are dropped instead of re-asked. */
const TERM_REASK_MAX = 2000;
/** Rows per slice of a load: a search arriving meanwhile waits for one slice at most. */
const CHUNK = 16_384;

/** States as the `acl` tokens of FTS5 name them: a live current, b deleted current, c live older, d deleted older. */
export const STATE_LIVE_CURRENT = 1;
export const STATE_DELETED_CURRENT = 2;
export const STATE_LIVE_OLDER = 3;
export const STATE_DELETED_OLDER = 4;
const stateOf = (deleted: boolean, current: boolean) =>
  current ? (deleted ? STATE_DELETED_CURRENT : STATE_LIVE_CURRENT) : deleted ? STATE_DELETED_OLDER : STATE_LIVE_OLDER;

export interface FacetEntry {
  facetKey: string;
  valueKey: string;
  facet: string;
  value: string;
}

interface CollectionMembers {
  updatedAt: number;
  epoch: number;
  generation: number;
  fileIds: string[];
  fileIdSet: Set<string>;
  /** Members' documents: docs[start[i] .. start[i+1]) belong to fileIds[i]. */
  start: Int32Array;
  docs: Int32Array;
}

// --- the removal log (process-wide; each index verifies entries against its own database) ---
const removals = { start: 0, docs: [] as number[] };
const REMOVAL_LOG_MAX = 100_000;

let forward: ((docNos: number[]) => void) | undefined;

/** The indexer's thread (indexing/indexer.worker.ts) sends its removals to the main thread's log instead. */
export function forwardRemovedDocuments(to: (docNos: number[]) => void): void {
  forward = to;
}

/** Called by removeDocuments: these doc_nos may be gone (verified against the database before use). */
export function noteRemovedDocuments(docNos: readonly number[]): void {
  if (forward) return forward([...docNos]);
  removals.docs.push(...docNos);
  if (removals.docs.length > REMOVAL_LOG_MAX) {
    const drop = removals.docs.length - REMOVAL_LOG_MAX / 2;
    removals.docs.splice(0, drop);
    removals.start += drop;
  }
}
const removalSeq = () => removals.start + removals.docs.length;

function grow<T extends Float64Array | Int32Array | Uint8Array>(a: T, capacity: number, fill = 0): T {
  const out = new (a.constructor as new (n: number) => T)(capacity);
  out.set(a);
  if (fill !== 0) out.fill(fill, a.length);
  return out;
}

export class OrgIndex {
  readonly orgId: string;
  capacity: number;
  /** Bumps on every change (visibility and collection caches compare it). */
  version = 0;
  lastUsed = Date.now();
  loadMs = 0;
  /** Searches answered from this index (diagnostics, tests). */
  searches = 0;
  /** `version` when the last snapshot was taken (the periodic writer skips unchanged indexes). */
  snapshotVersion = -1;
  state: Uint8Array;
  /** stateBits[s - 1]: the documents in state s. */
  stateBits: Bitset[];
  created: Float64Array;
  updated: Float64Array;
  // Security templates: the first in tpl1 (-1: none), documents with more in tplMore.
  tplIds = new Map<string, number>();
  tpl1: Int32Array;
  tplMore = new Map<number, Int32Array>();
  // Facet values: dictionary + compressed rows from the load + rows of documents changed since.
  dict: FacetEntry[] = [];
  dictIds = new Map<string, number>();
  facetStart: Int32Array = new Int32Array(1);
  facetIds: Int32Array = new Int32Array(0);
  facetChanged: Uint8Array;
  facetOverride = new Map<number, Int32Array>();
  // Where the next look starts.
  seenIndexedAt = -1;
  /** True once the clock was past seenIndexedAt at a look: no later write can carry that time. */
  settled = false;
  seenRemovals = 0;
  terms = new Map<string, Bitset>();
  termBytes = 0;
  visibility = new Map<string, { version: number; bits: Bitset }>();
  collections = new Map<string, CollectionMembers>();

  constructor(orgId: string, capacity: number) {
    this.orgId = orgId;
    this.capacity = capacity;
    this.state = new Uint8Array(capacity);
    this.stateBits = [1, 2, 3, 4].map(() => newBitset(capacity));
    this.created = new Float64Array(capacity);
    this.updated = new Float64Array(capacity);
    this.tpl1 = new Int32Array(capacity).fill(-1);
    this.facetChanged = new Uint8Array(capacity);
  }

  ensure(docNo: number): void {
    if (docNo < this.capacity) return;
    const capacity = Math.max(docNo + 1, Math.ceil(this.capacity * 1.5) + 1024);
    this.state = grow(this.state, capacity);
    this.stateBits = this.stateBits.map((b) => resized(b, capacity));
    this.created = grow(this.created, capacity);
    this.updated = grow(this.updated, capacity);
    this.tpl1 = grow(this.tpl1, capacity, -1);
    this.facetChanged = grow(this.facetChanged, capacity);
    for (const [k, b] of this.terms) this.terms.set(k, resized(b, capacity));
    this.termBytes = [...this.terms.values()].reduce((n, b) => n + b.byteLength, 0);
    this.capacity = capacity;
  }

  setDoc(docNo: number, deleted: boolean, current: boolean, created: number, updated: number): void {
    this.ensure(docNo);
    const old = this.state[docNo]!;
    if (old !== 0) clearBit(this.stateBits[old - 1]!, docNo);
    const s = stateOf(deleted, current);
    this.state[docNo] = s;
    setBit(this.stateBits[s - 1]!, docNo);
    this.created[docNo] = created;
    this.updated[docNo] = updated;
  }

  removeDoc(docNo: number): void {
    if (docNo >= this.capacity || this.state[docNo] === 0) return;
    clearBit(this.stateBits[this.state[docNo]! - 1]!, docNo);
    this.state[docNo] = 0;
    this.tpl1[docNo] = -1;
    this.tplMore.delete(docNo);
    this.facetChanged[docNo] = 1;
    this.facetOverride.set(docNo, new Int32Array(0));
  }

  templateId(id: string): number {
    let n = this.tplIds.get(id);
    if (n === undefined) this.tplIds.set(id, (n = this.tplIds.size));
    return n;
  }

  /** While loading: one more template of a document. */
  addTemplate(docNo: number, id: number): void {
    this.ensure(docNo);
    const first = this.tpl1[docNo]!;
    if (first < 0) {
      this.tpl1[docNo] = id;
      return;
    }
    const more = this.tplMore.get(docNo);
    if (more?.includes(id) || first === id) return;
    this.tplMore.set(docNo, Int32Array.from([...(more ?? [first]), id]));
  }

  setTemplates(docNo: number, ids: readonly number[]): void {
    this.tpl1[docNo] = ids.length > 0 ? ids[0]! : -1;
    if (ids.length > 1) this.tplMore.set(docNo, Int32Array.from(ids));
    else this.tplMore.delete(docNo);
  }

  valueId(facetKey: string, valueKey: string, facet: string, value: string): number {
    const key = `${facetKey}\u0000${valueKey}`;
    let id = this.dictIds.get(key);
    if (id === undefined) {
      id = this.dict.length;
      this.dictIds.set(key, id);
      this.dict.push({ facetKey, valueKey, facet, value });
    } else {
      const e = this.dict[id]!;
      // Display names as min() in SQL would pick them.
      if (facet < e.facet) e.facet = facet;
      if (value < e.value) e.value = value;
    }
    return id;
  }

  /** The facet value ids of a document. */
  facetsOf(docNo: number): Int32Array {
    if (this.facetChanged[docNo] === 1) return this.facetOverride.get(docNo) ?? new Int32Array(0);
    if (docNo + 1 >= this.facetStart.length) return new Int32Array(0);
    return this.facetIds.subarray(this.facetStart[docNo]!, this.facetStart[docNo + 1]!);
  }

  bytes(): number {
    let n =
      this.state.byteLength +
      this.created.byteLength +
      this.updated.byteLength +
      this.tpl1.byteLength +
      this.facetChanged.byteLength +
      this.facetStart.byteLength +
      this.facetIds.byteLength +
      this.termBytes;
    for (const b of this.stateBits) n += b.byteLength;
    for (const v of this.tplMore.values()) n += v.byteLength + 64;
    for (const v of this.facetOverride.values()) n += v.byteLength + 64;
    for (const v of this.visibility.values()) n += v.bits.byteLength;
    for (const c of this.collections.values()) n += c.start.byteLength + c.docs.byteLength + c.fileIds.length * 120;
    n += this.dict.length * 200;
    return n;
  }

  // --- cached FTS5 answers ---

  cachedTerm(key: string): Bitset | undefined {
    const b = this.terms.get(key);
    if (b) {
      this.terms.delete(key);
      this.terms.set(key, b);
    }
    return b;
  }

  cacheTerm(key: string, bits: Bitset): void {
    if (bits.byteLength > TERM_BUDGET_BYTES) return;
    this.terms.set(key, bits);
    this.termBytes += bits.byteLength;
    for (const [k, b] of this.terms) {
      if (this.termBytes <= TERM_BUDGET_BYTES) break;
      this.terms.delete(k);
      this.termBytes -= b.byteLength;
    }
  }

  dropTerms(): void {
    this.terms.clear();
    this.termBytes = 0;
  }

  /** Documents in one of `states` holding one of the templates (any of them). */
  visible(templateIds: readonly string[], states: readonly number[]): Bitset {
    const key = `${states.join('')}|${templateIds.join(',')}`;
    const hit = this.visibility.get(key);
    if (hit && hit.version === this.version && hit.bits.length === wordsFor(this.capacity)) return hit.bits;
    const wanted = new Uint8Array(this.tplIds.size + 1);
    for (const t of templateIds) {
      const n = this.tplIds.get(t);
      if (n !== undefined) wanted[n] = 1;
    }
    const bits = newBitset(this.capacity);
    const tpl1 = this.tpl1;
    for (let d = 0; d < this.capacity; d++) {
      const t = tpl1[d]!;
      if (t >= 0 && wanted[t] === 1) setBit(bits, d);
    }
    for (const [d, ids] of this.tplMore) {
      for (let i = 0; i < ids.length; i++) if (wanted[ids[i]!] === 1) setBit(bits, d);
    }
    const allowed = newBitset(this.capacity);
    for (const s of states) orInto(allowed, this.stateBits[s - 1]!);
    andInto(bits, allowed);
    if (this.visibility.size >= 16) this.visibility.delete(this.visibility.keys().next().value!);
    this.visibility.set(key, { version: this.version, bits });
    return bits;
  }
}

// --- loading and refreshing ---

interface DocRow {
  doc_no: number;
  deleted: number;
  current_version: number;
  created_epoch: number;
  updated_epoch: number;
  indexed_at?: number;
  file_id?: string | null;
}

/** Calls `fn` with each integer of a list separated by `,` or `:` (no intermediate strings). */
function forEachInt(list: string, fn: (n: number) => void): void {
  let n = 0;
  let digits = false;
  let negative = false;
  for (let i = 0; i < list.length; i++) {
    const c = list.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      n = n * 10 + (c - 48);
      digits = true;
    } else if (c === 45) {
      negative = true;
    } else if (digits) {
      fn(negative ? -n : n);
      n = 0;
      digits = false;
      negative = false;
    }
  }
  if (digits) fn(negative ? -n : n);
}

/** Gives the event loop (and the SQLite connection) to requests between slices of a load. */
const breathe = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Reads the organization's index from SQLite in slices of at most CHUNK documents or rows (each
 * slice one short query over a covering index, then a turn of the event loop), so a search or a
 * write arriving meanwhile waits for one slice at most, never for the whole load. Documents written
 * during the load carry an `indexed_at` at or after the one read first, and are read again by the
 * first look (`settled` stays false); removals go through the removal log from `seenRemovals`.
 */
async function load(db: Db, orgId: string, cancelled: () => boolean = () => false): Promise<OrgIndex> {
  const started = performance.now();
  const seenRemovals = removalSeq();
  const hi = Number(
    (await sql<{ m: number | null }>`select max(doc_no) as m from search_docs`.execute(db)).rows[0]?.m ?? 0,
  );
  const idx = new OrgIndex(orgId, hi + 1024);
  idx.seenRemovals = seenRemovals;
  // The newest indexing time before reading: anything indexed later is read again by the first look.
  const maxIndexed = Number(
    (await sql<{ m: number | null }>`select max(indexed_at) as m from search_docs where org_id = ${orgId}`.execute(db))
      .rows[0]?.m ?? -1,
  );
  const step = async () => {
    await breathe();
    if (cancelled()) throw new LoadCancelled();
  };
  // States, from the (org_id, deleted, current_version, doc_no) index, a doc_no range at a time.
  for (const [deleted, current] of [
    [0, 1],
    [1, 1],
    [0, 0],
    [1, 0],
  ] as const) {
    for (let a = 0; a <= hi; a += CHUNK) {
      const { rows } = await sql<{
        docs: string | null;
      }>`select group_concat(doc_no) as docs from search_docs where org_id = ${orgId} and deleted = ${deleted} and current_version = ${current} and doc_no > ${a} and doc_no <= ${a + CHUNK}`.execute(
        db,
      );
      forEachInt(rows[0]?.docs ?? '', (d) => idx.setDoc(d, deleted === 1, current === 1, 0, 0));
      await step();
    }
  }
  // Times, from the (org_id, <time>, doc_no) indexes, CHUNK entries at a time (keyset).
  for (const column of ['created_epoch', 'updated_epoch'] as const) {
    const target = column === 'created_epoch' ? idx.created : idx.updated;
    let after = [Number.MIN_SAFE_INTEGER, 0];
    for (;;) {
      const { rows } = await sql<{ pairs: string | null; n: number }>`
        select group_concat(doc_no || ':' || t) as pairs, count(*) as n from (
          select doc_no, ${sql.ref(column)} as t from search_docs
          where org_id = ${orgId} and (${sql.ref(column)}, doc_no) > (${after[0]}, ${after[1]})
          order by ${sql.ref(column)}, doc_no limit ${CHUNK})`.execute(db);
      let doc = -1;
      forEachInt(rows[0]?.pairs ?? '', (n) => {
        if (doc < 0) doc = n;
        else {
          if (doc < target.length) target[doc] = n;
          after = [n, doc];
          doc = -1;
        }
      });
      await step();
      if (Number(rows[0]?.n ?? 0) < CHUNK) break;
    }
  }
  // Security templates, from the (org_id, template_id, doc_no) index, CHUNK rows at a time (keyset).
  let afterTpl = ['', 0] as [string, number];
  for (;;) {
    const { rows } = await sql<{ template_id: string; docs: string; last: number; n: number }>`
      select template_id, group_concat(doc_no) as docs, max(doc_no) as last, count(*) as n from (
        select template_id, doc_no from search_doc_templates
        where org_id = ${orgId} and (template_id, doc_no) > (${afterTpl[0]}, ${afterTpl[1]})
        order by template_id, doc_no limit ${CHUNK})
      group by template_id order by template_id`.execute(db);
    let n = 0;
    for (const t of rows) {
      const id = idx.templateId(t.template_id);
      forEachInt(t.docs, (d) => idx.addTemplate(d, id));
      afterTpl = [t.template_id, Number(t.last)];
      n += Number(t.n);
    }
    await step();
    if (n < CHUNK) break;
  }
  const facetDocs: number[] = [];
  const facetVals: number[] = [];
  // Facet rows in rowid chunks, grouped by SQLite (one row per value and chunk, doc_nos as one string).
  const facetMax = Number(
    (await sql<{ m: number | null }>`select max(rowid) as m from search_doc_facets`.execute(db)).rows[0]?.m ?? 0,
  );
  for (let a = 0; a <= facetMax; a += CHUNK) {
    const facets = await sql<{ facet_key: string; value_key: string; facet: string; value: string; docs: string }>`
      select facet_key, value_key, min(facet) as facet, min(value) as value, group_concat(doc_no) as docs from search_doc_facets
      where rowid > ${a} and rowid <= ${a + CHUNK} and +org_id = ${orgId} group by facet_key, value_key`.execute(db);
    for (const f of facets.rows) {
      const id = idx.valueId(f.facet_key, f.value_key, f.facet, f.value);
      forEachInt(f.docs, (d) => {
        facetDocs.push(d);
        facetVals.push(id);
      });
    }
    await step();
  }
  // Compressed rows: counting sort of (doc, value) by doc.
  const start = new Int32Array(idx.capacity + 1);
  for (const d of facetDocs) if (d < idx.capacity) start[d + 1]! += 1;
  for (let i = 0; i < idx.capacity; i++) start[i + 1]! += start[i]!;
  const fill = start.slice(0, idx.capacity);
  const values = new Int32Array(start[idx.capacity]!);
  for (let i = 0; i < facetDocs.length; i++) {
    const d = facetDocs[i]!;
    if (d < idx.capacity) values[fill[d]!++] = facetVals[i]!;
  }
  idx.facetStart = start;
  idx.facetIds = values;
  idx.seenIndexedAt = maxIndexed;
  // Documents of that very time may still be committed: the first look reads them again.
  idx.settled = false;
  idx.loadMs = performance.now() - started;
  return idx;
}

class LoadCancelled extends Error {
  constructor() {
    super('search index load cancelled');
  }
}

async function applyRemovals(db: Db, idx: OrgIndex): Promise<void> {
  const seq = removalSeq();
  if (idx.seenRemovals === seq) return;
  const from = Math.max(0, idx.seenRemovals - removals.start);
  const candidates = removals.docs.slice(from).filter((d) => d < idx.capacity && idx.state[d] !== 0);
  idx.seenRemovals = seq;
  if (candidates.length === 0) return;
  const unique = [...new Set(candidates)];
  const alive = new Set<number>();
  for (let i = 0; i < unique.length; i += 500) {
    const rows = await db
      .selectFrom('search_docs')
      .select('doc_no')
      .where('doc_no', 'in', unique.slice(i, i + 500))
      .where('org_id', '=', idx.orgId)
      .execute();
    for (const r of rows) alive.add(Number(r.doc_no));
  }
  const gone = unique.filter((d) => !alive.has(d));
  if (gone.length === 0) return;
  for (const d of gone) idx.removeDoc(d);
  const goneSet = new Set(gone);
  for (const [id, c] of idx.collections) if (c.docs.some((d) => goneSet.has(d))) idx.collections.delete(id);
  idx.version += 1;
}

async function applyChanges(db: Db, idx: OrgIndex, now: number): Promise<void> {
  // Writes of this process are serialized with this look (one SQLite connection), and each carries
  // the clock at its transaction: once the clock has passed the newest time seen, documents of that
  // time are final and the next look starts after it; until then they are read again.
  const since = idx.seenIndexedAt;
  const after = idx.settled ? sql`indexed_at > ${since}` : sql`indexed_at >= ${since}`;
  const head = (
    await sql<{
      m: number | null;
    }>`select max(indexed_at) as m from search_docs where org_id = ${idx.orgId} and ${after}`.execute(db)
  ).rows[0];
  if (!head || head.m === null) {
    idx.settled = now > since;
    return;
  }
  const max = Number(head.m);
  const docs = (
    await sql<DocRow>`select doc_no, deleted, current_version, created_epoch, updated_epoch, indexed_at, file_id from search_docs where org_id = ${idx.orgId} and ${after}`.execute(
      db,
    )
  ).rows;
  await applyDocs(db, idx, docs);
  idx.seenIndexedAt = max;
  idx.settled = now > max;
  idx.version += 1;
}

/** Re-reads these documents' templates and facets into the index (a look, or a slice of a catch-up). */
async function applyDocs(db: Db, idx: OrgIndex, docs: readonly DocRow[]): Promise<void> {
  const changed = docs.map((d) => Number(d.doc_no));
  const templates = new Map<number, number[]>(changed.map((d) => [d, []]));
  const facets = new Map<number, number[]>(changed.map((d) => [d, []]));
  for (let i = 0; i < changed.length; i += 500) {
    const batch = changed.slice(i, i + 500);
    for (const t of await db
      .selectFrom('search_doc_templates')
      .select(['doc_no', 'template_id'])
      .where('doc_no', 'in', batch)
      .execute()) {
      templates.get(Number(t.doc_no))?.push(idx.templateId(t.template_id));
    }
    for (const f of await db
      .selectFrom('search_doc_facets')
      .select(['doc_no', 'facet_key', 'value_key', 'facet', 'value'])
      .where('doc_no', 'in', batch)
      .execute()) {
      facets.get(Number(f.doc_no))?.push(idx.valueId(f.facet_key, f.value_key, f.facet, f.value));
    }
  }
  const fileIds = new Set<string>();
  for (const d of docs) {
    const no = Number(d.doc_no);
    idx.setDoc(
      no,
      Number(d.deleted) === 1,
      Number(d.current_version) === 1,
      Number(d.created_epoch),
      Number(d.updated_epoch),
    );
    idx.setTemplates(no, templates.get(no)!);
    idx.facetChanged[no] = 1;
    idx.facetOverride.set(no, Int32Array.from(facets.get(no)!));
    if (d.file_id) fileIds.add(d.file_id);
  }
  for (const [id, c] of idx.collections) if ([...fileIds].some((f) => c.fileIdSet.has(f))) idx.collections.delete(id);
  await reaskTerms(db, idx, changed);
}

/**
 * More documents indexed since the last look than `inlineMax` (a crash left an old snapshot, or a
 * bulk write): they are read in the background in slices (catchUp) while the organization's
 * searches take the bounded path (search.bounded.ts), so no search runs a large look inline.
 */
export const CATCHUP_LIMITS = { inlineMax: 2000, slice: 4096 };

/**
 * Whether more than `inlineMax` documents were indexed after the index's last look's time (those of
 * that very time, when it is not settled, were read by it and are read again inline).
 */
async function farBehind(db: Db, idx: OrgIndex): Promise<boolean> {
  const { rows } = await sql<{ n: number }>`select count(*) as n from (select 1 from search_docs
    where org_id = ${idx.orgId} and indexed_at > ${idx.seenIndexedAt} limit ${CATCHUP_LIMITS.inlineMax + 1})`.execute(
    db,
  );
  return Number(rows[0]?.n ?? 0) > CATCHUP_LIMITS.inlineMax;
}

/**
 * Reads the documents indexed since the last look, a slice at a time in (indexed_at, doc_no) order
 * with a turn of the event loop between slices. Cached term bitsets are dropped (re-asking FTS5
 * for that many documents costs more than asking again). Unless the clock is past the last slice's
 * time, the next look reads that time's documents again, with any written meanwhile.
 */
async function catchUp(db: Db, idx: OrgIndex, now: () => number, cancelled: () => boolean): Promise<void> {
  idx.dropTerms();
  let after: [number, number] = [idx.seenIndexedAt, idx.settled ? Number.MAX_SAFE_INTEGER : -1];
  for (;;) {
    const { rows } = await sql<DocRow>`
      select doc_no, deleted, current_version, created_epoch, updated_epoch, indexed_at, file_id from search_docs
      where org_id = ${idx.orgId} and (indexed_at > ${after[0]} or (indexed_at = ${after[0]} and doc_no > ${after[1]}))
      order by indexed_at, doc_no limit ${CATCHUP_LIMITS.slice}`.execute(db);
    if (rows.length === 0) break;
    await applyDocs(db, idx, rows);
    idx.version += 1;
    const last = rows[rows.length - 1]!;
    after = [Number(last.indexed_at), Number(last.doc_no)];
    if (rows.length < CATCHUP_LIMITS.slice) break;
    await breathe();
    if (cancelled()) throw new LoadCancelled();
  }
  idx.seenIndexedAt = after[0];
  idx.settled = now() > after[0];
}

/**
 * Cached term bitsets: FTS5 says again, for the changed documents only, which of them match — one
 * rowid-range query per run of nearby doc_nos (FTS5 seeks a rowid range; it does not for IN lists).
 */
async function reaskTerms(db: Db, idx: OrgIndex, changed: readonly number[]): Promise<void> {
  if (idx.terms.size === 0 || changed.length === 0) return;
  if (changed.length > TERM_REASK_MAX) {
    idx.dropTerms();
    return;
  }
  const sorted = [...new Set(changed)].sort((a, b) => a - b);
  const runs: [number, number][] = [];
  for (const d of sorted) {
    const last = runs[runs.length - 1];
    if (last && d - last[1] <= 64) last[1] = d;
    else runs.push([d, d]);
  }
  const isChanged = new Set(sorted);
  for (const [expr, bits] of idx.terms) {
    for (const d of sorted) clearBit(bits, d);
    for (const [a, b] of runs) {
      const { rows } = await sql<{
        rowid: number;
      }>`select rowid from search_fts where search_fts match ${expr} and rowid >= ${a} and rowid <= ${b}`.execute(db);
      for (const r of rows) if (isChanged.has(Number(r.rowid))) setBit(bits, Number(r.rowid));
    }
  }
}

// --- the cache of organizations ---

interface Entry {
  idx: OrgIndex | null;
  /** A look (removals and changes) under way: looks of one organization are serialized. */
  busy: Promise<void> | null;
  /** The load under way, in the background (never awaited by a search). */
  loading: Promise<void> | null;
  /** A catch-up under way (catchUp): until it ends, the index answers no search. */
  catchingUp: Promise<void> | null;
}
const cache = new Map<object, Map<string, Entry>>();
let sweeper: NodeJS.Timeout | null = null;

function sweep(now = Date.now()): void {
  let total = 0;
  const all: { byOrg: Map<string, Entry>; orgId: string; idx: OrgIndex }[] = [];
  for (const [db, byOrg] of cache) {
    for (const [orgId, e] of byOrg) {
      if (!e.idx || e.busy || e.catchingUp) continue;
      if (now - e.idx.lastUsed > IDLE_MS) byOrg.delete(orgId);
      else {
        total += e.idx.bytes();
        all.push({ byOrg, orgId, idx: e.idx });
      }
    }
    if (byOrg.size === 0) cache.delete(db);
  }
  all.sort((a, b) => a.idx.lastUsed - b.idx.lastUsed);
  for (const x of all) {
    if (total <= MAX_TOTAL_BYTES) break;
    total -= x.idx.bytes();
    x.byOrg.delete(x.orgId);
  }
  if (cache.size === 0 && sweeper) {
    clearInterval(sweeper);
    sweeper = null;
  }
}

function entryOf(db: Db, orgId: string): Entry {
  let byOrg = cache.get(db);
  if (!byOrg) cache.set(db, (byOrg = new Map()));
  let e = byOrg.get(orgId);
  if (!e) byOrg.set(orgId, (e = { idx: null, busy: null, loading: null, catchingUp: null }));
  return e;
}

export interface LoadOptions {
  /** Checked between slices: true ends the load (the organization stays unloaded). */
  cancelled?: () => boolean;
  /** The load starts reading once this settles (tests hold a load under way with it). */
  startAfter?: Promise<unknown>;
}

/**
 * Starts loading the organization's index in the background, unless it is loaded or loading; the
 * promise settles when the load is over (a failed load leaves it unloaded, for a later try).
 */
export function loadMemoryIndex(db: Db, orgId: string, options: LoadOptions = {}): Promise<void> {
  const entry = entryOf(db, orgId);
  if (entry.idx) return Promise.resolve();
  entry.loading ??= (async () => {
    try {
      await options.startAfter;
      const idx = await load(db, orgId, options.cancelled);
      idx.lastUsed = Date.now();
      // Unloaded meanwhile (unloadMemoryIndex): the load is dropped.
      if (cache.get(db)?.get(orgId) !== entry) return;
      entry.idx = idx;
      if (!sweeper) {
        sweeper = setInterval(() => sweep(), 60_000);
        sweeper.unref();
      }
      sweep();
    } finally {
      entry.loading = null;
    }
  })();
  return entry.loading;
}

/**
 * The organization's index brought up to date with every document indexed or removed before the
 * call — or null when it is not loaded yet: then its load is started in the background and the
 * caller answers the SQL way (a search never waits for a load). Looks of one organization are
 * serialized.
 */
export async function readyIndex(db: Db, orgId: string, now: number): Promise<OrgIndex | null> {
  const entry = entryOf(db, orgId);
  if (!entry.idx) {
    if (!entry.loading) void loadMemoryIndex(db, orgId).catch(() => {});
    return null;
  }
  // Another caller's failed look is retried by this one, not reported to it.
  while (entry.busy) await entry.busy.catch(() => {});
  if (!entry.idx || entry.catchingUp) return null;
  const idx = entry.idx;
  let behind = false;
  entry.busy = (async () => {
    await applyRemovals(db, idx);
    behind = await farBehind(db, idx);
    if (behind) startCatchUp(db, entry, idx, () => now);
    else await applyChanges(db, idx, now);
  })()
    .catch((error: unknown) => {
      if (entry.idx === idx) entry.idx = null;
      throw error;
    })
    .finally(() => {
      entry.busy = null;
    });
  await entry.busy;
  idx.lastUsed = Date.now();
  if (behind) return null;
  sweep();
  return idx;
}

function startCatchUp(
  db: Db,
  entry: Entry,
  idx: OrgIndex,
  now: () => number,
  cancelled: () => boolean = () => false,
): void {
  entry.catchingUp ??= catchUp(db, idx, now, cancelled)
    .catch(() => {
      // Half caught up is not an index to answer from: unloaded, loaded again by a later search.
      if (entry.idx === idx) entry.idx = null;
    })
    .finally(() => {
      entry.catchingUp = null;
    });
}

/**
 * After a snapshot is installed (search.warmup.ts): starts the catch-up in the background when the
 * database indexed many documents since the snapshot's time; the promise settles when it is over.
 */
export async function catchUpInBackground(
  db: Db,
  orgId: string,
  now: () => number,
  cancelled?: () => boolean,
): Promise<void> {
  const entry = entryOf(db, orgId);
  const idx = entry.idx;
  if (!idx || entry.busy || entry.catchingUp) return;
  if (await farBehind(db, idx)) startCatchUp(db, entry, idx, now, cancelled);
  await entry.catchingUp;
}

/** The organization's loaded index as it is (no look), or null. */
export function loadedIndex(db: object, orgId: string): OrgIndex | null {
  return cache.get(db)?.get(orgId)?.idx ?? null;
}

/** Every loaded index of `db` (snapshots at close). */
export function loadedIndexes(db: object): OrgIndex[] {
  return [...(cache.get(db)?.values() ?? [])].flatMap((e) => (e.idx ? [e.idx] : []));
}

/** Installs an index read from a snapshot (search.snapshot.ts), unless one is loaded or loading. */
export function installIndex(db: Db, idx: OrgIndex): boolean {
  const entry = entryOf(db, idx.orgId);
  if (entry.idx || entry.loading) return false;
  idx.lastUsed = Date.now();
  entry.idx = idx;
  if (!sweeper) {
    sweeper = setInterval(() => sweep(), 60_000);
    sweeper.unref();
  }
  return true;
}

/** The removal log's position now (a snapshot's reader starts from it). */
export const removalPosition = () => removalSeq();

/** Waits for the organization's load under way, if any (tests, benchmarks). */
export async function memoryIndexSettled(db: object, orgId: string): Promise<void> {
  const e = cache.get(db)?.get(orgId);
  await e?.loading?.catch(() => {});
  await e?.catchingUp;
}

/** Loaded organizations and their bytes (benchmarks, diagnostics). */
export function memoryIndexStats(
  db: object,
): { orgId: string; bytes: number; loadMs: number; cachedTerms: number; searches: number }[] {
  return [...(cache.get(db)?.values() ?? [])]
    .filter((e) => e.idx)
    .map((e) => ({
      orgId: e.idx!.orgId,
      bytes: e.idx!.bytes(),
      loadMs: e.idx!.loadMs,
      cachedTerms: e.idx!.terms.size,
      searches: e.idx!.searches,
    }));
}

/** Whether the organization's index is loaded (and so answers its searches). */
export function memoryIndexLoaded(db: object, orgId: string): boolean {
  const e = cache.get(db)?.get(orgId);
  return e?.idx != null && e.catchingUp === null;
}

/** Unloads every organization of `db` (tests; memory). */
export function unloadMemoryIndex(db: object): void {
  cache.delete(db);
}

// --- text terms ---

/** The documents matching one FTS5 expression (one token, prefix or phrase over some fields). */
export async function termBits(db: Db, idx: OrgIndex, expr: string): Promise<Bitset> {
  const hit = idx.cachedTerm(expr);
  if (hit) return hit;
  const { rows } = await sql<{ rowid: number }>`select rowid from search_fts where search_fts match ${expr}`.execute(
    db,
  );
  const docs = rows.map((r) => Number(r.rowid));
  for (const d of docs) idx.ensure(d);
  const bits = fromDocs(idx.capacity, docs);
  if (docs.length >= Math.min(TERM_CACHE_MIN, idx.capacity >> 6)) idx.cacheTerm(expr, bits);
  return bits;
}

// --- collections ---

/** Membership writes of this process (another process's are seen through the collection's updated_at). */
const collectionEpochs = new Map<string, number>();
let epochCounter = 0;
let epochGeneration = 0;

/** Called when a collection's members change: its cached members are read again. */
export function forgetCollectionMembers(collectionId: string): void {
  if (collectionEpochs.size >= 100_000) {
    collectionEpochs.clear();
    epochGeneration += 1;
  }
  collectionEpochs.set(collectionId, ++epochCounter);
}

/** The collection's members with their documents, read once per collection version. */
export async function collectionMembers(
  db: Db,
  idx: OrgIndex,
  collectionId: string,
  updatedAt: number,
): Promise<CollectionMembers> {
  const hit = idx.collections.get(collectionId);
  const epoch = collectionEpochs.get(collectionId) ?? 0;
  if (hit && hit.updatedAt === updatedAt && hit.epoch === epoch && hit.generation === epochGeneration) return hit;
  const { rows } = await sql<{ file_id: string; doc_no: number | null }>`
    select m.file_id, d.doc_no from collection_members m left join search_docs d on d.org_id = ${idx.orgId} and d.file_id = m.file_id
    where m.collection_id = ${collectionId} order by m.position, m.file_id, d.doc_no`.execute(db);
  const fileIds: string[] = [];
  const start: number[] = [];
  const docs: number[] = [];
  for (const r of rows) {
    if (fileIds[fileIds.length - 1] !== r.file_id) {
      fileIds.push(r.file_id);
      start.push(docs.length);
    }
    if (r.doc_no !== null) docs.push(Number(r.doc_no));
  }
  start.push(docs.length);
  const c: CollectionMembers = {
    updatedAt,
    epoch,
    generation: epochGeneration,
    fileIds,
    fileIdSet: new Set(fileIds),
    start: Int32Array.from(start),
    docs: Int32Array.from(docs),
  };
  idx.collections.set(collectionId, c);
  return c;
}
