// Test support: security set-ups and index documents written straight into the index.
import { writeTemplatePermissions } from '../../src/core/authz/authorize.ts';
import { PERMISSIONS, type Permission } from '../../src/core/authz/catalog.ts';
import type { DbOrTrx } from '../../src/core/db/connect.ts';
import { toJson } from '../../src/core/db/json.ts';
import { newId } from '../../src/core/ids.ts';
import type { TestContext } from './context.ts';
import { upsertDocuments, type SearchDocumentInput } from '../../src/features/search/indexing/search-index.repo.ts';

export async function createGroup(
  ctx: TestContext,
  orgId: string,
  name = `g-${Math.random().toString(36).slice(2, 9)}`,
): Promise<string> {
  const now = ctx.deps.clock.now();
  const id = newId(now);
  await ctx.deps.db
    .insertInto('groups')
    .values({
      id,
      org_id: orgId,
      name,
      name_key: name.toLowerCase(),
      description: '',
      created_at: now,
      updated_at: now,
    })
    .execute();
  return id;
}

/** A security template granting each listed group the listed permissions. */
export async function createTemplate(
  ctx: TestContext,
  orgId: string,
  grants: Record<string, Permission[]>,
  name = `t-${Math.random().toString(36).slice(2, 9)}`,
): Promise<string> {
  const now = ctx.deps.clock.now();
  const id = newId(now);
  await ctx.deps.db
    .insertInto('security_templates')
    .values({
      id,
      org_id: orgId,
      name,
      name_key: name.toLowerCase(),
      description: '',
      created_at: now,
      updated_at: now,
    })
    .execute();
  const rows = Object.entries(grants).map(([group_id, perms]) => ({
    org_id: orgId,
    template_id: id,
    group_id,
    permissions: toJson(perms.map((p) => PERMISSIONS[p].id)),
  }));
  if (rows.length > 0) await ctx.deps.db.insertInto('security_template_grants').values(rows).execute();
  await writeTemplatePermissions(
    ctx.deps.db,
    orgId,
    id,
    new Map(Object.entries(grants).map(([g, perms]) => [g, perms.map((p) => PERMISSIONS[p].id)])),
  );
  return id;
}

export function docInput(
  orgId: string,
  over: Partial<SearchDocumentInput> & { securityTemplateIds: string[] },
): SearchDocumentInput {
  const now = 1_700_000_000_000;
  const assetId = over.assetId ?? newId();
  const fileId = over.fileId === undefined ? newId() : over.fileId;
  const filename = over.filename ?? 'file.jpg';
  const base: SearchDocumentInput = {
    orgId,
    assetId,
    fileId,
    originalFileId: fileId,
    filename,
    fileType: filename.includes('.') ? filename.split('.').pop()!.toLowerCase() : 'none',
    metadataTemplateId: null,
    deleted: false,
    currentVersion: true,
    createdEpoch: now,
    updatedEpoch: now,
    metadataText: '',
    contentText: '',
    facets: [],
    sorts: [],
    record: {},
    ...over,
  };
  base.record = {
    objectId: assetId,
    fileId,
    originalFileId: base.originalFileId,
    filename,
    createdEpoch: base.createdEpoch,
    lastUpdatedEpoch: base.updatedEpoch,
    ...over.record,
  };
  return base;
}

export async function indexDocs(ctx: TestContext, docs: SearchDocumentInput[]): Promise<void> {
  await ctx.deps.db.transaction().execute((trx) => upsertDocuments(trx, ctx.deps.engine, docs, ctx.deps.clock.now()));
}

/**
 * A secured collection written straight into its tables (no API, no events): through `templateId`,
 * owned by `ownerId`, holding `fileIds` in that order. The search property test and the search
 * benchmarks' corpus use it.
 */
export async function insertSecuredCollection(
  db: DbOrTrx,
  c: { id: string; orgId: string; name: string; ownerId: string; templateId: string; fileIds: string[]; now: number },
): Promise<void> {
  await db
    .insertInto('collections')
    .values({
      id: c.id,
      org_id: c.orgId,
      name: c.name,
      name_key: c.name,
      collection_type: 'secured',
      owner_id: c.ownerId,
      metadata_template_id: null,
      metadata: '[]',
      shared: 'Y',
      share_document: '[]',
      created_at: c.now,
      updated_at: c.now,
    })
    .execute();
  await db
    .insertInto('collection_templates')
    .values({ org_id: c.orgId, collection_id: c.id, template_id: c.templateId })
    .execute();
  for (let i = 0; i < c.fileIds.length; i += 1000) {
    await db
      .insertInto('collection_members')
      .values(
        c.fileIds.slice(i, i + 1000).map((file_id, j) => ({
          org_id: c.orgId,
          collection_id: c.id,
          file_id,
          position: i + j,
          added_at: c.now,
        })),
      )
      .execute();
  }
}

/** POST /v1/search/keyword for one term: the answer's totalCount. */
export async function keywordTotal(ctx: TestContext, headers: Record<string, string>, term: string): Promise<number> {
  const res = await ctx.inject({ method: 'POST', url: '/v1/search/keyword', headers, payload: { searchTerm: [term] } });
  return (JSON.parse(res.body) as { totalCount: number }).totalCount;
}
