// A large library for browser tests, written straight into a running test server's SQLite database
// through the service layer (no HTTP loop): asset rows built by the assets feature's own newAssetRow,
// their index documents by the search feature's own buildDocuments, all written with multi-row
// inserts (SQLite). The product's indexer writes a document at a time — a few statements each — which
// takes minutes for 100,000 assets on a loaded machine; writeNewDocuments writes the same rows as
// upsertDocuments (search-index.repo.ts) for documents that are new, as bench/search-corpus.ts does.
// Start the server with TESSERA_WORKERS=false so its indexer loop does not race the seeding.
import { parseConfig } from '../../src/config.ts';
import { insertRows } from '../../src/core/db/insert-rows.ts';
import { createDeps } from '../../src/deps.ts';
import { newAssetRow } from '../../src/features/assets/assets.service.ts';
import { prepareCreate, templateForWrite } from '../../src/features/assets/metadata-seam/metadata-seam.ts';
import { defaultSecurityTemplateId, loadUserPrincipal } from '../../src/features/identity/index.ts';
import { defaultTemplateId } from '../../src/features/metadata/index.ts';
import { assetsForIndexing, type AssetRow } from '../../src/features/assets/assets.repo.ts';
import { buildDocuments } from '../../src/features/search/indexing/search.documents.ts';
import type { SearchDocumentInput } from '../../src/features/search/indexing/search-index.repo.ts';
import { aclText, documentTokens, foldKey } from '../../src/features/search/search.tokenize.ts';
import type { Trx } from '../../src/core/db/connect.ts';
import { sql } from 'kysely';

/** The name of the i-th seeded asset (0 is the oldest). */
export const seededName = (i: number): string => `library-${String(i).padStart(6, '0')}.jpg`;

/**
 * `count` metadata-only assets named seededName(i), owned by `username`, with the organization's
 * Default templates; asset i was created and last updated a millisecond after asset i - 1, so
 * every order is total (newest first: the last one is asset 0). Returns once they are all searchable.
 */
export async function seedLibrary(dataDir: string, username: string, count: number): Promise<void> {
  const config = parseConfig({
    ...process.env,
    TESSERA_DATA_DIR: dataDir,
    DATABASE_URL: '',
    TESSERA_LOG_LEVEL: 'warn',
  });
  const deps = createDeps(config);
  try {
    const user = await deps.db
      .selectFrom('users')
      .select('id')
      .where('username_key', '=', username.toLowerCase())
      .executeTakeFirstOrThrow();
    const principal = (await loadUserPrincipal(deps.db, user.id))!;
    const templateId = (await defaultTemplateId(deps.db, principal.orgId))!;
    const securityId = (await defaultSecurityTemplateId(deps.db, principal.orgId))!;
    const template = await templateForWrite(deps.db, principal, templateId);
    const metadata = prepareCreate(principal, template, []);
    // Assets i and i + 1 are a millisecond apart, so every order is total.
    let at = deps.clock.now() - count - 1000;
    const BATCH = 10_000;
    for (let from = 0; from < count; from += BATCH) {
      const rows: AssetRow[] = [];
      for (let i = from; i < Math.min(count, from + BATCH); i++)
        rows.push(
          newAssetRow(principal, at++, {
            filename: seededName(i),
            expectsContent: false,
            federated: false,
            templateId,
            metadata,
          }),
        );
      await deps.db.transaction().execute(async (trx) => {
        await insertRows(trx, 'assets', rows);
        await insertRows(
          trx,
          'asset_security',
          rows.map((r) => ({ org_id: r.org_id, asset_id: r.id, template_id: securityId })),
        );
        // Indexed in the same transaction, so the server's own indexer finds nothing to do for them.
        for (let i = 0; i < rows.length; i += 1000) {
          const assets = await assetsForIndexing(
            trx,
            rows.slice(i, i + 1000).map((r) => r.id),
          );
          await writeNewDocuments(trx, await buildDocuments(deps, trx, assets), deps.clock.now());
        }
      });
    }
  } finally {
    await deps.close();
  }
}

/** The rows upsertDocuments writes for new documents (SQLite), many per statement. */
async function writeNewDocuments(trx: Trx, docs: readonly SearchDocumentInput[], now: number): Promise<void> {
  const top = await trx
    .selectFrom('search_docs')
    .select((eb) => eb.fn.max('doc_no').as('n'))
    .executeTakeFirst();
  let next = Number(top?.n ?? 0) + 1;
  const numbered = docs.map((doc) => ({ doc, no: next++ }));
  await insertRows(
    trx,
    'search_docs',
    numbered.map(({ doc, no }) => ({
      doc_no: no,
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
      record: JSON.stringify(doc.record),
      indexed_at: now,
    })) as never,
  );
  for (let i = 0; i < numbered.length; i += 500) {
    const values = numbered.slice(i, i + 500).map(({ doc, no }) => {
      const tokens = documentTokens({
        filename: doc.filename,
        asset: [doc.assetId, doc.fileId ?? '', doc.originalFileId ?? ''].join(' '),
        metadata: doc.metadataText,
        content: doc.contentText,
      });
      const acl = aclText([...new Set(doc.securityTemplateIds)], doc.deleted, doc.currentVersion);
      return sql`(${no}, ${tokens.filename.join(' ')}, ${tokens.asset.join(' ')}, ${tokens.metadata.join(' ')}, ${tokens.content.join(' ')}, ${acl})`;
    });
    await sql`insert into search_fts (rowid, filename, asset, metadata, content, acl) values ${sql.join(values)}`.execute(
      trx,
    );
  }
  await insertRows(
    trx,
    'search_doc_templates',
    numbered.flatMap(({ doc, no }) =>
      [...new Set(doc.securityTemplateIds)].map((template_id) => ({ org_id: doc.orgId, doc_no: no, template_id })),
    ),
  );
  const facets = numbered.flatMap(({ doc, no }) => {
    const seen = new Map<string, { facet: string; value: string; facet_key: string; value_key: string }>();
    for (const f of doc.facets) {
      const facet_key = foldKey(f.facet);
      const value_key = foldKey(f.value);
      if (facet_key !== '' && value_key !== '')
        seen.set(`${facet_key}\u0000${value_key}`, {
          facet: f.facet.trim(),
          value: f.value.trim(),
          facet_key,
          value_key,
        });
    }
    return [...seen.values()].map((f) => ({ org_id: doc.orgId, doc_no: no, ...f }));
  });
  await insertRows(trx, 'search_doc_facets', facets);
  const sorts = numbered.flatMap(({ doc, no }) => {
    const seen = new Map<string, { num: number | null; txt: string | null }>();
    for (const x of doc.sorts)
      seen.set(x.field.toLowerCase(), { num: x.num ?? null, txt: x.txt == null ? null : x.txt.toLowerCase() });
    return [...seen].map(([field, v]) => ({ org_id: doc.orgId, doc_no: no, field, ...v }));
  });
  await insertRows(trx, 'search_doc_sorts', sorts);
}
