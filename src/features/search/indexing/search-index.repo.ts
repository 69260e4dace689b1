import { CompiledQuery, sql, type Insertable } from 'kysely';
import type { DbOrTrx, Engine } from '../../../core/db/connect.ts';
import { jsonRowsInsert } from '../../../core/db/batch-insert.ts';
import { insertRows } from '../../../core/db/insert-rows.ts';
import { toJson } from '../../../core/db/json.ts';
import type { SearchDocsTable } from '../../../core/db/schema.ts';
import { noteRemovedDocuments } from '../memory-index/search.memindex.ts';
import { aclText, documentTokens, foldKey, tsvectorLiteral } from '../search.tokenize.ts';

/** What the index keeps of one asset version. Built from an asset by search.documents.ts. */
export interface SearchDocumentInput {
  orgId: string;
  assetId: string;
  fileId: string | null;
  originalFileId: string | null;
  filename: string;
  /** Lower-case extension or kind (`jpg`, `pdf`, …); `none` for metadata-only assets. */
  fileType: string;
  metadataTemplateId: string | null;
  securityTemplateIds: readonly string[];
  deleted: boolean;
  currentVersion: boolean;
  createdEpoch: number;
  updatedEpoch: number;
  /** The version of the asset row it was built from (assetRowVersion; decision 0039); 0 when not known. */
  assetVersion?: number;
  /** Searchable text: metadata values (keywordSearchField `metadata`) and extracted content. */
  metadataText: string;
  contentText: string;
  /** Facet values (facetable vocabulary attributes, template, file type): `"Name: value"` terms. */
  facets: readonly { facet: string; value: string }[];
  /** Sortable and range-filterable values by search field: numbers (dates as epoch ms) or text. */
  sorts: readonly { field: string; num?: number | null; txt?: string | null }[];
  /** The asset record returned in results. */
  record: Record<string, unknown>;
}

const chunk = <T>(items: readonly T[], size: number): T[][] => {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
};

/**
 * Writes documents into the index (insert or replace; an asset keeps its doc_no for life).
 * Call inside a transaction so a document is never half-indexed. Up to 200 documents at a time go
 * in with one multi-row statement per table (search_docs, the FTS table, templates, facets, sorts):
 * a bulk creation of 1,000 assets is indexed with a few dozen statements, not five per asset.
 */
export async function upsertDocuments(
  db: DbOrTrx,
  engine: Engine,
  docs: readonly SearchDocumentInput[],
  now: number,
  /** The documents' existing numbers (by asset id; absent: none yet), read by the caller in this transaction. */
  known?: ReadonlyMap<string, number>,
): Promise<void> {
  if (docs.length === 0) return;
  // SQLite: the FTS5 rows of every batch, written last. FTS5 keeps new terms in memory and writes
  // them out as a new segment when the next statement of the transaction begins (or at commit):
  // one segment per call instead of one per batch, and no segment write charged to the side tables.
  const ftsRows: unknown[] = [];
  for (const batch of chunk(docs, 200)) {
    const existing = known
      ? batch.flatMap((d) => (known.has(d.assetId) ? [{ asset_id: d.assetId, doc_no: known.get(d.assetId)! }] : []))
      : await db
          .selectFrom('search_docs')
          .select(['doc_no', 'asset_id'])
          .where(
            'asset_id',
            'in',
            batch.map((d) => d.assetId),
          )
          .execute();
    const docNo = new Map(existing.map((r) => [r.asset_id, Number(r.doc_no)]));
    if (existing.length > 0) await clearSideRows(db, engine, [...docNo.values()]);
    const prepared = batch.map((doc) => {
      const tokens = documentTokens({
        filename: doc.filename,
        asset: [doc.assetId, doc.fileId ?? '', doc.originalFileId ?? ''].join(' '),
        metadata: doc.metadataText,
        content: doc.contentText,
      });
      const row = {
        org_id: doc.orgId,
        asset_id: doc.assetId,
        file_id: doc.fileId,
        original_file_id: doc.originalFileId,
        filename: doc.filename,
        filename_key: doc.filename.toLowerCase(),
        file_type: doc.fileType,
        metadata_template_id: doc.metadataTemplateId,
        deleted: doc.deleted ? 1 : 0,
        current_version: doc.currentVersion ? 1 : 0,
        created_epoch: doc.createdEpoch,
        updated_epoch: doc.updatedEpoch,
        record: toJson(doc.record),
        indexed_at: now,
        asset_version: doc.assetVersion ?? 0,
        // A plain parameter: PostgreSQL types it from the column and parses it as `::tsvector` would.
        ...(engine === 'postgres' ? { tsv: tsvectorLiteral(tokens) } : {}),
      };
      return { doc, tokens, row };
    });
    const fresh = prepared.filter((p) => !docNo.has(p.doc.assetId));
    if (fresh.length > 0) {
      // Plain multi-row insert (no Kysely tree for 200 × 15 values), then the numbers it was given:
      // on PostgreSQL returned by the insert itself, on SQLite read back with one indexed select.
      const rows = fresh.map((p) => p.row as Insertable<SearchDocsTable>);
      if (engine === 'postgres') {
        const insert = jsonRowsInsert('search_docs', Object.keys(rows[0]!), rows);
        const { rows: inserted } = await db.executeQuery<{ doc_no: number | string; asset_id: string }>(
          CompiledQuery.raw(`${insert.sql} returning doc_no, asset_id`, [...insert.parameters]),
        );
        for (const r of inserted) docNo.set(r.asset_id, Number(r.doc_no));
      } else {
        await insertRows(db, 'search_docs', rows);
        const inserted = await db
          .selectFrom('search_docs')
          .select(['doc_no', 'asset_id'])
          .where(
            'asset_id',
            'in',
            fresh.map((p) => p.doc.assetId),
          )
          .execute();
        for (const r of inserted) docNo.set(r.asset_id, Number(r.doc_no));
      }
    }
    const isFresh = new Set(fresh);
    for (const p of prepared) {
      if (isFresh.has(p)) continue;
      await db
        .updateTable('search_docs')
        .set(p.row as never)
        .where('doc_no', '=', docNo.get(p.doc.assetId)!)
        .execute();
    }
    const templateRows: { org_id: string; doc_no: number; template_id: string }[] = [];
    const facetRows: {
      org_id: string;
      doc_no: number;
      facet: string;
      value: string;
      facet_key: string;
      value_key: string;
    }[] = [];
    const sortRows: { org_id: string; doc_no: number; field: string; num: number | null; txt: string | null }[] = [];
    for (const { doc, tokens } of prepared) {
      const no = docNo.get(doc.assetId)!;
      const templates = [...new Set(doc.securityTemplateIds)];
      if (engine === 'sqlite') {
        const acl = aclText(templates, doc.deleted, doc.currentVersion);
        ftsRows.push(
          no,
          tokens.filename.join(' '),
          tokens.asset.join(' '),
          tokens.metadata.join(' '),
          tokens.content.join(' '),
          acl,
        );
      }
      for (const template_id of templates) templateRows.push({ org_id: doc.orgId, doc_no: no, template_id });
      const facets = new Map<string, { facet: string; value: string; facet_key: string; value_key: string }>();
      for (const f of doc.facets) {
        const facet_key = foldKey(f.facet);
        const value_key = foldKey(f.value);
        if (facet_key === '' || value_key === '') continue;
        facets.set(`${facet_key}\u0000${value_key}`, {
          facet: f.facet.trim(),
          value: f.value.trim(),
          facet_key,
          value_key,
        });
      }
      for (const f of facets.values()) facetRows.push({ org_id: doc.orgId, doc_no: no, ...f });
      const sorts = new Map<string, { num: number | null; txt: string | null }>();
      for (const s of doc.sorts)
        sorts.set(s.field.toLowerCase(), {
          num: s.num ?? null,
          txt: s.txt === undefined || s.txt === null ? null : s.txt.toLowerCase(),
        });
      for (const [field, v] of sorts) sortRows.push({ org_id: doc.orgId, doc_no: no, field, ...v });
    }
    await insertRows(db, 'search_doc_templates', templateRows);
    await insertRows(db, 'search_doc_facets', facetRows);
    await insertRows(db, 'search_doc_sorts', sortRows);
  }
  await insertFtsRows(db, ftsRows);
}

const FTS_COLUMNS = 6;
/** Rows per FTS5 insert (6 values each, well within the bind parameter budget). */
const FTS_ROWS_PER_INSERT = 500;

/** Multi-row inserts into search_fts from flattened (rowid, filename, asset, metadata, content, acl) values. */
async function insertFtsRows(db: DbOrTrx, values: readonly unknown[]): Promise<void> {
  const step = FTS_ROWS_PER_INSERT * FTS_COLUMNS;
  for (let i = 0; i < values.length; i += step) {
    const part = values.slice(i, i + step);
    const rows = part.length / FTS_COLUMNS;
    const text = `insert into search_fts (rowid, filename, asset, metadata, content, acl) values ${Array.from({ length: rows }, () => '(?, ?, ?, ?, ?, ?)').join(', ')}`;
    await db.executeQuery(CompiledQuery.raw(text, part));
  }
}

async function clearSideRows(db: DbOrTrx, engine: Engine, docNos: number[]): Promise<void> {
  await db.deleteFrom('search_doc_templates').where('doc_no', 'in', docNos).execute();
  await db.deleteFrom('search_doc_facets').where('doc_no', 'in', docNos).execute();
  await db.deleteFrom('search_doc_sorts').where('doc_no', 'in', docNos).execute();
  if (engine === 'sqlite') {
    for (const no of docNos) await sql`delete from search_fts where rowid = ${no}`.execute(db);
  }
}

/** Removes assets (purged) from the index. */
export async function removeDocuments(db: DbOrTrx, engine: Engine, assetIds: readonly string[]): Promise<void> {
  if (assetIds.length === 0) return;
  for (const batch of chunk(assetIds, 500)) {
    const rows = await db.selectFrom('search_docs').select('doc_no').where('asset_id', 'in', batch).execute();
    const nos = rows.map((r) => Number(r.doc_no));
    if (nos.length === 0) continue;
    await clearSideRows(db, engine, nos);
    await db.deleteFrom('search_docs').where('doc_no', 'in', nos).execute();
    // The in-memory index checks these against the database on its next look.
    if (engine === 'sqlite') noteRemovedDocuments(nos);
  }
}
