import { sql, type Kysely } from 'kysely';

/**
 * Collections, saved searches and the search index (issue 11).
 *
 * The index is one row per asset version in `search_docs`, keyed by a dense integer `doc_no`
 * (stable across re-indexing, so scans by key never skip or repeat). Text lives in FTS5
 * (SQLite, contentless, rowid = doc_no) or in a weighted tsvector with a GIN index (PostgreSQL).
 * Security templates, facet values and sort values are side tables indexed for the filters the
 * query layer puts inside the index query (visibility is never a post-filter).
 */
// Never edit after it lands: add a new migration instead.
export async function up(db: Kysely<any>): Promise<void> {
  // PostgreSQL's adapter runs DDL in transactions; SQLite's does not.
  const postgres = db.getExecutor().adapter.supportsTransactionalDdl;

  // --- search index ---
  let docs = db.schema.createTable('search_docs');
  docs = postgres
    ? docs.addColumn('doc_no', 'bigserial', (c) => c.primaryKey())
    : docs.addColumn('doc_no', 'integer', (c) => c.primaryKey().autoIncrement());
  docs = docs
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('asset_id', 'text', (c) => c.notNull().unique())
    .addColumn('file_id', 'text')
    .addColumn('original_file_id', 'text')
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('filename_key', 'text', (c) => c.notNull())
    .addColumn('file_type', 'text', (c) => c.notNull())
    .addColumn('metadata_template_id', 'text')
    .addColumn('deleted', 'integer', (c) => c.notNull())
    .addColumn('current_version', 'integer', (c) => c.notNull())
    .addColumn('created_epoch', 'bigint', (c) => c.notNull())
    .addColumn('updated_epoch', 'bigint', (c) => c.notNull())
    /** The asset record returned in results (JSON), so a page of hits needs no further reads. */
    .addColumn('record', 'text', (c) => c.notNull())
    .addColumn('indexed_at', 'bigint', (c) => c.notNull());
  if (postgres) docs = docs.addColumn('tsv', sql`tsvector`, (c) => c.notNull());
  await docs.execute();
  await db.schema
    .createIndex('search_docs_org_idx')
    .on('search_docs')
    .columns(['org_id', 'deleted', 'current_version', 'doc_no'])
    .execute();
  await db.schema.createIndex('search_docs_file_idx').on('search_docs').columns(['org_id', 'file_id']).execute();
  await db.schema
    .createIndex('search_docs_updated_idx')
    .on('search_docs')
    .columns(['org_id', 'updated_epoch', 'doc_no'])
    .execute();
  await db.schema.createIndex('search_docs_indexed_idx').on('search_docs').columns(['org_id', 'indexed_at']).execute();
  await db.schema
    .createIndex('search_docs_created_idx')
    .on('search_docs')
    .columns(['org_id', 'created_epoch', 'doc_no'])
    .execute();
  if (postgres) {
    await sql`create index search_docs_tsv_idx on search_docs using gin (tsv)`.execute(db);
  } else {
    // Tokens are produced by Tessera (search.tokenize.ts) and joined by spaces, so both engines see
    // exactly the same tokens; unicode61 only splits on the spaces. The `acl` column holds the
    // organization, state and security-template tokens, so visibility is intersected inside FTS5.
    await sql`create virtual table search_fts using fts5(filename, asset, metadata, content, acl, content='', contentless_delete=1, tokenize='unicode61', prefix='1 2 3')`.execute(
      db,
    );
  }

  await db.schema
    .createTable('search_doc_templates')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('doc_no', 'bigint', (c) => c.notNull())
    .addColumn('template_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('search_doc_templates_pk', ['doc_no', 'template_id'])
    .execute();
  await db.schema
    .createIndex('search_doc_templates_tpl_idx')
    .on('search_doc_templates')
    .columns(['org_id', 'template_id', 'doc_no'])
    .execute();

  await db.schema
    .createTable('search_doc_facets')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('doc_no', 'bigint', (c) => c.notNull())
    .addColumn('facet_key', 'text', (c) => c.notNull())
    .addColumn('value_key', 'text', (c) => c.notNull())
    .addColumn('facet', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('search_doc_facets_pk', ['doc_no', 'facet_key', 'value_key'])
    .execute();
  await db.schema
    .createIndex('search_doc_facets_value_idx')
    .on('search_doc_facets')
    .columns(['org_id', 'facet_key', 'value_key', 'doc_no'])
    .execute();

  await db.schema
    .createTable('search_doc_sorts')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('doc_no', 'bigint', (c) => c.notNull())
    .addColumn('field', 'text', (c) => c.notNull())
    .addColumn('num', 'double precision')
    .addColumn('txt', 'text')
    .addPrimaryKeyConstraint('search_doc_sorts_pk', ['doc_no', 'field'])
    .execute();
  await db.schema
    .createIndex('search_doc_sorts_num_idx')
    .on('search_doc_sorts')
    .columns(['org_id', 'field', 'num', 'doc_no'])
    .execute();
  await db.schema
    .createIndex('search_doc_sorts_txt_idx')
    .on('search_doc_sorts')
    .columns(['org_id', 'field', 'txt', 'doc_no'])
    .execute();

  // --- collections ---
  await db.schema
    .createTable('collections')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', 'text', (c) => c.notNull())
    .addColumn('collection_type', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'text', (c) => c.notNull())
    .addColumn('metadata_template_id', 'text')
    .addColumn('metadata', 'text', (c) => c.notNull())
    .addColumn('shared', 'text', (c) => c.notNull())
    .addColumn('share_document', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('collections_org_name_unique', ['org_id', 'name_key'])
    .execute();
  await db.schema.createIndex('collections_owner_idx').on('collections').columns(['org_id', 'owner_id']).execute();

  await db.schema
    .createTable('collection_members')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('collection_id', 'text', (c) => c.notNull().references('collections.id').onDelete('cascade'))
    .addColumn('file_id', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('added_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('collection_members_pk', ['collection_id', 'file_id'])
    .execute();
  await db.schema
    .createIndex('collection_members_file_idx')
    .on('collection_members')
    .columns(['org_id', 'file_id'])
    .execute();

  await db.schema
    .createTable('collection_templates')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('collection_id', 'text', (c) => c.notNull().references('collections.id').onDelete('cascade'))
    .addColumn('template_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('collection_templates_pk', ['collection_id', 'template_id'])
    .execute();
  await db.schema
    .createIndex('collection_templates_tpl_idx')
    .on('collection_templates')
    .columns(['org_id', 'template_id'])
    .execute();

  // --- saved searches ---
  await db.schema
    .createTable('saved_searches')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('owner_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('visibility', 'text', (c) => c.notNull())
    /** The stored query (JSON, the body of POST /v1/search without paging). */
    .addColumn('query', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('saved_searches_owner_idx')
    .on('saved_searches')
    .columns(['org_id', 'owner_id'])
    .execute();

  await db.schema
    .createTable('saved_search_templates')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('saved_search_id', 'text', (c) => c.notNull().references('saved_searches.id').onDelete('cascade'))
    .addColumn('template_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('saved_search_templates_pk', ['saved_search_id', 'template_id'])
    .execute();
  await db.schema
    .createIndex('saved_search_templates_tpl_idx')
    .on('saved_search_templates')
    .columns(['org_id', 'template_id'])
    .execute();

  // The indexer finds changed assets by updated_at (search.indexer.ts).
  await db.schema.createIndex('search_assets_updated_idx').on('assets').columns(['updated_at']).execute();
  // ...and purged ones by their asset.purged events.
  await db.schema.createIndex('search_events_type_idx').on('events').columns(['type', 'created_at']).execute();

  // Indexer progress (see search.indexer.ts).
  await db.schema
    .createTable('search_index_state')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only');
}
