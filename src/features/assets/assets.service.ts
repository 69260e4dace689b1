import type { Deps } from '../../deps.ts';
import { assertMayApplyTemplates, hasPrivilege } from '../../core/authz/authorize.ts';
import { permissionsFor, requireAction } from '../../core/authz/permissions.ts';
import type { Principal } from '../../core/authz/principal.ts';
import { isUniqueViolation, type DbOrTrx, type Trx } from '../../core/db/connect.ts';
import { fromJson, toJson } from '../../core/db/json.ts';
import { audit } from '../../core/audit.ts';
import { publishEvent, type EventInput } from '../../core/events/index.ts';
import { AppError, conflict, invalidField } from '../../core/http/errors.ts';
import { isUuid, newId } from '../../core/ids.ts';
import { checkSecurityTemplateIds, defaultSecurityTemplateId } from '../identity/index.ts';
import { lockTemplateAgainstDelete } from '../metadata/index.ts';
import { checkRoom, countUpload, reserveHoldings } from '../quotas/index.ts';
import { publishRightsChange, rightsOf } from './rights/rights.ts';
import {
  assetNotFound,
  callerPermissions,
  loadAsset,
  loadAssetFor,
  requirePermissions,
  visibleAmong,
} from './access.ts';
import {
  currentOfChain,
  previousVersionOf,
  findAsset,
  findChainId,
  sameContent,
  securityOf,
  setAssetSecurity,
  templateNames,
  versionsOfChain,
  type AssetRow,
  type AssetWithOrg,
} from './assets.repo.ts';
import { checkMediaType, typeFromFilename } from './upload/content-types.ts';
import { firstVersionRow } from './new-row.ts';
import {
  prepareCreate,
  preparePatch,
  project,
  templateForWrite,
  templateOf,
  withSystemValues,
  type LegacyItem,
  type PreparedMetadata,
} from './metadata-seam/metadata-seam.ts';
import { eventAsset } from './views/present.ts';
import {
  beginUpload,
  planUpload,
  recordUpload,
  uploadUrls,
  type NewUpload,
  type UploadTarget,
} from './upload/uploads.service.ts';

export type Encoding = 'legacy' | 'simplified';

export interface CreateAssetInput {
  metadataTemplateId?: string | null;
  metadata?: unknown;
  securityTemplateIds?: string[];
  filename?: string;
  originalFileId?: string;
  filesize?: number;
  /** Hand out part URLs (`uploadId`, `urls[]`) whatever the size: what a client sending `filesize` expects. */
  multipart?: boolean;
  /** SHA-256 (hex) of the content, verified on arrival */
  checksum?: string;
  contentType?: string;
  contentPath?: string;
  skipTranscode?: boolean;
  /** Embedded IPTC/XMP/EXIF values replace values already set (Tessera's own). */
  overwriteEmbeddedMetadata?: boolean;
  /** With checksum: report (default), refuse (409) or version content the organization already holds (Tessera's own). */
  onDuplicate?: 'report' | 'refuse' | 'version';
}

export interface CreatedAsset {
  asset: AssetRow;
  upload: UploadTarget | null;
  uploadRowId: string | null;
  /** Assets the caller may view holding the same bytes, when the checksum was sent. */
  duplicates?: string[];
}

/** Assets the caller may view whose content is these bytes (current versions first). */
export async function visibleDuplicates(db: DbOrTrx, principal: Principal, sha256: string, exceptId?: string) {
  const rows = await sameContent(db, principal.orgId, sha256, exceptId);
  if (rows.length === 0) return [];
  const security = await securityOf(
    db,
    principal.orgId,
    rows.map((r) => r.id),
  );
  const visible = new Set((await visibleAmong(db, principal, rows, security)).map((a) => a.id));
  return rows.filter((r) => visible.has(r.id)).sort((a, b) => b.is_current - a.is_current);
}

/** Security template ids, each existing in the caller's organization. */
export async function checkTemplates(
  db: DbOrTrx,
  orgId: string,
  ids: readonly string[],
  field = 'body.securityTemplateIds',
): Promise<string[]> {
  return (await checkTemplatesNamed(db, orgId, ids, field)).ids;
}

/** As checkTemplates, with the templates' names (what events carry), from the same query. */
export async function checkTemplatesNamed(
  db: DbOrTrx,
  orgId: string,
  ids: readonly string[],
  field = 'body.securityTemplateIds',
): Promise<{ ids: string[]; named: { id: string; name: string }[] }> {
  return checkSecurityTemplateIds(db, orgId, ids, {
    field,
    required: 'Invalid Asset: Missing Security Template ID(s)',
    max: 50,
    ignoreCase: true,
    report: { all: 'Invalid security template ID(s): ' },
  });
}

export function sameTemplates(a: readonly string[], b: readonly string[]): boolean {
  const left = new Set(a.map((id) => id.toLowerCase()));
  const right = new Set(b.map((id) => id.toLowerCase()));
  return left.size === right.size && [...left].every((id) => right.has(id));
}

/** Action objects are kept by their metadata template (change the template instead). */
const actionObjectReadOnly = () =>
  new AppError(
    'conflict',
    'This is an Action object: it follows its action-type metadata template; change the template instead',
  );

function checkFilename(filename: string): string {
  const name = filename.trim();
  if (name === '' || name.length > 255 || /[\u0000-\u001f/\\]/.test(name) || name === '.' || name === '..') {
    throw invalidField(
      'body.filename',
      'Failed to parse Asset: must be a file name of 1 to 255 characters without slashes or control characters',
    );
  }
  return name;
}

/**
 * A new asset sent without securityTemplateIds by a caller who may not list security templates
 * (no Security Template Management: they cannot know the ids) gets the organization's Default
 * security template. Callers who can list them must still name them, as the reference requires.
 */
async function fallbackSecurityTemplates(db: DbOrTrx, principal: Principal): Promise<string[] | undefined> {
  if (hasPrivilege(principal, 'security_template_management')) return undefined;
  const fallback = await defaultSecurityTemplateId(db, principal.orgId);
  return fallback ? [fallback] : undefined;
}

/**
 * POST /v1/asset and /v1/assets/asset: a new asset, a new version (originalFileId), a
 * metadata-only asset (no filename) or a federated one (contentPath). With a filename the answer
 * carries where to upload the bytes; the asset becomes visible when they have arrived.
 */
export async function createAsset(
  deps: Deps,
  principal: Principal,
  input: CreateAssetInput,
  _encoding: Encoding,
): Promise<CreatedAsset> {
  requireAction(principal, 'asset.create');
  checkMediaType(input.contentType, 'body.contentType');
  const now = deps.clock.now();
  const orgId = principal.orgId;
  const filename = input.filename !== undefined ? checkFilename(input.filename) : undefined;
  if (input.checksum !== undefined && !/^[0-9a-f]{64}$/i.test(input.checksum))
    throw invalidField('body.checksum', 'must be the SHA-256 of the content, as 64 hex digits');
  const onDuplicate = input.onDuplicate ?? 'report';
  if (onDuplicate !== 'report' && (input.checksum === undefined || filename === undefined))
    throw invalidField(
      'body.onDuplicate',
      `${onDuplicate} needs the content's checksum (SHA-256) and a filename, so duplicates are known before the upload`,
    );
  const duplicates =
    input.checksum !== undefined && filename !== undefined
      ? await visibleDuplicates(deps.db, principal, input.checksum.toLowerCase())
      : [];
  if (duplicates.length > 0 && onDuplicate === 'refuse') {
    throw conflict(
      `The organization already holds this content: asset ${duplicates.map((d) => d.id).join(', ')} (onDuplicate: refuse)`,
      'body.checksum',
    );
  }
  if (duplicates.length > 0 && onDuplicate === 'version' && input.originalFileId === undefined) {
    return createAsset(
      deps,
      principal,
      { ...input, originalFileId: duplicates[0]!.original_file_id, onDuplicate: 'report' },
      _encoding,
    );
  }

  let chain: AssetWithOrg | undefined;
  if (input.originalFileId !== undefined) {
    const chainId = await findChainId(deps.db, orgId, input.originalFileId);
    chain = chainId ? await currentOfChain(deps.db, orgId, chainId) : undefined;
    if (!chain)
      throw invalidField('body.originalFileId', 'Invalid Response from Create Asset: no asset has this originalFileId');
    const security = (await securityOf(deps.db, orgId, [chain.id])).get(chain.id)!;
    const permissions = callerPermissions(principal, security);
    if (!permissions.has('view'))
      throw invalidField('body.originalFileId', 'Invalid Response from Create Asset: no asset has this originalFileId');
    requireAction(principal, 'asset.version');
    requirePermissions(permissions, permissionsFor('asset.version'));
    // A new version with other security templates changes who may do what to the chain.
    if (input.securityTemplateIds !== undefined) {
      const named = await checkTemplates(deps.db, orgId, input.securityTemplateIds);
      await assertMayApplyTemplates(deps.db, principal, permissions, security.templateIds, named);
    }
    if (chain.deleted_at !== null)
      throw new AppError('conflict', 'The asset is in the recycle bin: restore it before adding a version');
    if (chain.object_type === 'Action') throw actionObjectReadOnly();
  }

  const templateId = input.metadataTemplateId ?? chain?.metadata_template_id ?? null;
  if (templateId === null && !chain) throw invalidField('body.metadataTemplateId', MISSING_METADATA_TEMPLATE);
  if (templateId !== null && !isUuid(templateId)) throw invalidField('body.metadataTemplateId', 'must be a UUID');
  const securityTemplateIds =
    input.securityTemplateIds ?? (chain ? undefined : await fallbackSecurityTemplates(deps.db, principal));
  const checked =
    securityTemplateIds !== undefined || !chain
      ? await checkTemplatesNamed(deps.db, orgId, securityTemplateIds ?? [])
      : null;
  const templates = checked ? checked.ids : (await securityOf(deps.db, orgId, [chain!.id])).get(chain!.id)!.templateIds;
  const template =
    input.metadataTemplateId || !chain
      ? await templateForWrite(deps.db, principal, templateId!)
      : await templateOf(deps.db, orgId, templateId);
  const chainDoc = chain ? fromJson<LegacyItem[]>(chain.metadata, []) : [];
  let metadata: PreparedMetadata;
  if (!chain) {
    metadata = prepareCreate(principal, template!, input.metadata ?? []);
  } else if (template && input.metadata !== undefined && input.metadata !== null) {
    metadata = preparePatch(principal, template, input.metadata, chainDoc);
  } else if (template) {
    metadata = project(template, chainDoc);
  } else {
    metadata = { doc: chainDoc, denormalized: fromJson(chain.metadata_denormalized, {}) };
  }
  if (filename)
    metadata =
      withSystemValues(template, metadata.doc, {
        filename,
        type: input.contentType ?? typeFromFilename(filename) ?? null,
      }) ?? metadata;

  const federated = input.contentPath !== undefined;
  if (federated && !/^s3:\/\/[^/]+\/.+/.test(input.contentPath!))
    throw invalidField('body.contentPath', 'must be an S3 path: s3://bucket/path/file');
  const expectsContent = filename !== undefined && !federated;
  const row = newAssetRow(principal, now, {
    chain,
    filename,
    contentType: input.contentType,
    expectsContent,
    federated,
    filesize: input.filesize,
    contentPath: input.contentPath,
    skipTranscode: input.skipTranscode,
    templateId,
    metadata,
  });
  const id = row.id;
  // Refused early, before an upload is started anywhere: the quota checks that hold run in the transaction.
  await checkRoom(deps.db, deps.config, orgId, {
    bytes: expectsContent ? (input.filesize ?? 0) : 0,
    assets: chain ? 0 : 1,
  });
  let newUpload: NewUpload | null = null;
  let s3UploadId: string | null = null;
  if (expectsContent) {
    newUpload = {
      id: newId(now),
      orgId,
      assetId: id,
      target: 'original',
      filename: row.filename,
      expectedSize: input.filesize ?? null,
      expectedSha256: input.checksum?.toLowerCase() ?? null,
      contentType: input.contentType ?? null,
      createdBy: principal.userId,
      ...(input.overwriteEmbeddedMetadata || input.filesize !== undefined
        ? {
            options: {
              ...(input.overwriteEmbeddedMetadata ? { overwriteEmbedded: true } : {}),
              // A declared size counts against the storage quota now (reserved below), not on arrival.
              ...(input.filesize !== undefined ? { reservedBytes: input.filesize } : {}),
            },
          }
        : {}),
      plan: planUpload(deps, input.filesize, input.multipart === true),
    };
    s3UploadId = await beginUpload(deps, newUpload);
  }
  let upload;
  try {
    upload = await deps.db.transaction().execute(async (trx) => {
      if (chain) {
        // The chain's state as of now, with its head locked (PostgreSQL) against a move to the
        // recycle bin until this version is in: a delete running at the same time either came first
        // (and this version is refused) or waits and then moves this version with the rest.
        if (!(await lockChain(deps, trx, orgId, chain.original_file_id)))
          throw new AppError('conflict', 'The asset is in the recycle bin: restore it before adding a version');
        const top = await trx
          .selectFrom('assets')
          .select((eb) => eb.fn.max('version_number').as('v'))
          .where('original_file_id', '=', chain.original_file_id)
          .executeTakeFirst();
        row.version_number = Number(top?.v ?? 0) + 1;
        // The new version is the latest at once, its content pending or not (it exists from now on).
        await trx
          .updateTable('assets')
          .set({ is_current: 0 })
          .where('original_file_id', '=', chain.original_file_id)
          .execute();
      }
      // On PostgreSQL the metadata template is locked against deletion until the asset is in: a
      // delete running at the same time waits, then finds the template in use (SQLite writes one
      // transaction at a time, so its delete already sees the asset or comes first).
      if (deps.engine === 'postgres' && row.metadata_template_id) {
        if (!(await lockTemplateAgainstDelete(trx, orgId, row.metadata_template_id)))
          throw invalidField('body.metadataTemplateId', 'metadata template not found');
      }
      // Quotas (features/quotas): a new asset counts against the asset quota, a declared size against
      // the storage quota, an upload against the uploader's hourly limit; all are checked and counted
      // here, so a refused create leaves nothing.
      await reserveHoldings(trx, deps.config, orgId, now, {
        assets: chain ? 0 : 1,
        bytes: expectsContent ? (input.filesize ?? 0) : 0,
      });
      if (expectsContent) await countUpload(trx, deps.config, { orgId, userId: principal.userId }, now);
      await trx.insertInto('assets').values(row).execute();
      await setAssetSecurity(trx, orgId, id, templates, { fresh: true });
      // Rights given at creation (a new version carries its chain's: no change there).
      await publishRightsChange(
        trx,
        now,
        row,
        principal.userId,
        chain ? rightsOf(chain.metadata_denormalized) : null,
        rightsOf(row.metadata_denormalized),
      );
      if (!expectsContent)
        await publishCreated(
          trx,
          now,
          principal,
          row,
          checked?.named ?? (await templateNames(trx, orgId, templates)),
          chain,
        );
      // Its event waits for the content; the record exists now, so the audit trail says so now.
      else
        await audit(trx, {
          orgId,
          at: now,
          actorId: principal.userId,
          action: chain ? 'version.registered' : 'asset.registered',
          targetType: 'asset',
          targetId: row.id,
          objects: chain ? [{ type: 'asset', id: chain.id }] : [],
          data: { filename: row.filename, versionNumber: row.version_number },
        });
      return newUpload ? recordUpload(deps, trx, now, newUpload, s3UploadId) : null;
    });
  } catch (error) {
    if (s3UploadId && newUpload)
      await deps.blobs.presign?.abort(`uploads/${orgId}/${newUpload.id}/object`, s3UploadId).catch(() => {});
    if (isUniqueViolation(error))
      throw new AppError('conflict', 'Another version of this asset was created at the same moment; try again');
    throw error;
  }
  deps.jobs.wake();
  return {
    asset: row,
    upload: upload ? await uploadUrls(deps, upload) : null,
    uploadRowId: upload?.id ?? null,
    ...(input.checksum !== undefined && filename !== undefined ? { duplicates: duplicates.map((d) => d.id) } : {}),
  };
}

/**
 * Locks a version chain's first version `for update` on PostgreSQL (SQLite writes one transaction
 * at a time): a new version and a move to or from the recycle bin take turns, and the one that
 * waited reads the chain as the other left it (each statement after the lock sees its commit).
 * Returns whether the chain is out of the recycle bin.
 */
async function lockChain(deps: Deps, trx: Trx, orgId: string, originalFileId: string): Promise<boolean> {
  let query = trx
    .selectFrom('assets')
    .select('deleted_at')
    .where('org_id', '=', orgId)
    .where('original_file_id', '=', originalFileId)
    .orderBy('version_number')
    .limit(1);
  if (deps.engine === 'postgres') query = query.forUpdate();
  const head = await query.executeTakeFirst();
  return head !== undefined && head.deleted_at === null;
}

export const MISSING_METADATA_TEMPLATE = 'Invalid Asset: Missing Metadata Template ID';

/** The row of a new asset or version: createAsset and createAssetsBulk build rows the same way. */
export function newAssetRow(
  principal: Principal,
  now: number,
  p: {
    chain?: AssetWithOrg;
    filename?: string;
    contentType?: string;
    expectsContent: boolean;
    federated: boolean;
    filesize?: number;
    contentPath?: string;
    skipTranscode?: boolean;
    templateId: string | null;
    metadata: PreparedMetadata;
  },
): AssetRow {
  const { chain, filename, expectsContent, federated } = p;
  const id = newId(now);
  const fileId = newId(now);
  return firstVersionRow(
    { id, fileId, orgId: principal.orgId, templateId: p.templateId, userId: principal.userId, now },
    {
      original_file_id: chain?.original_file_id ?? fileId,
      filename: filename ?? (chain ? chain.filename : 'metadata-only'),
      content_type: filename ? (p.contentType ?? typeFromFilename(filename) ?? null) : null,
      content_state: expectsContent ? 'pending' : federated ? 'available' : 'none',
      size: federated ? (p.filesize ?? null) : null,
      federated: federated ? 1 : 0,
      content_path: p.contentPath ?? null,
      skip_transcode: p.skipTranscode ? 1 : 0,
      metadata: toJson(p.metadata.doc),
      metadata_denormalized: toJson(p.metadata.denormalized),
      created_event_sent: expectsContent ? 0 : 1,
    },
  );
}

/** The `asset.created` event of a new asset (single and bulk create publish the same). */
export function assetCreatedEvent(
  principal: Principal,
  row: AssetRow,
  templates: { id: string; name: string }[],
): EventInput<'asset.created'> {
  return {
    orgId: row.org_id,
    type: 'asset.created',
    actor: principal.userId,
    data: { asset: eventAsset(row, templates) },
  };
}

async function publishCreated(
  trx: Trx,
  now: number,
  principal: Principal,
  row: AssetRow,
  templates: { id: string; name: string }[],
  chain: AssetWithOrg | undefined,
): Promise<void> {
  if (!chain) {
    await publishEvent(trx, now, assetCreatedEvent(principal, row, templates));
  } else {
    const data = eventAsset(row, templates);
    const previous = await previousVersionOf(trx, row.org_id, row.original_file_id, row.version_number);
    await publishEvent(trx, now, {
      orgId: row.org_id,
      type: 'version.created',
      actor: principal.userId,
      data: {
        asset: data,
        version: {
          latest: true,
          versionNumber: row.version_number,
          previousVersionNumber: previous?.versionNumber ?? chain.version_number,
          number: row.version_number,
          previous,
        },
      },
    });
  }
}

/** GET /v1/asset/{id}/latest: the current version of the asset's chain. */
export async function getLatest(deps: Deps, principal: Principal, id: string) {
  const chainId = await findChainId(deps.db, principal.orgId, id);
  const current = chainId ? await currentOfChain(deps.db, principal.orgId, chainId) : undefined;
  if (!current) throw assetNotFound();
  return loadAssetFor(deps.db, principal, current.id, 'asset.view');
}

/** GET /v1/asset/{id}/version: every version the caller may view, newest first. */
export async function getVersions(deps: Deps, principal: Principal, id: string) {
  const chainId = await findChainId(deps.db, principal.orgId, id);
  if (!chainId) throw assetNotFound();
  const versions = await versionsOfChain(deps.db, principal.orgId, chainId);
  const security = await securityOf(
    deps.db,
    principal.orgId,
    versions.map((v) => v.id),
  );
  const visible = await visibleAmong(deps.db, principal, versions, security);
  if (visible.length === 0) throw assetNotFound();
  return visible.map((asset) => ({ asset, security: security.get(asset.id)! }));
}

export interface UpdateAssetInput {
  metadata?: unknown;
  securityTemplateIds?: string[];
  metadataTemplateId?: string;
}

/** PATCH /v1/asset/{id} and /v1/assets/asset/{id}: only what is sent changes. */
export async function updateAsset(
  deps: Deps,
  principal: Principal,
  id: string,
  input: UpdateAssetInput,
  _encoding: Encoding,
): Promise<void> {
  const { asset, security, permissions } = await loadAsset(deps.db, principal, id);
  if (
    input.metadata === undefined &&
    input.securityTemplateIds === undefined &&
    input.metadataTemplateId === undefined
  ) {
    throw invalidField('body', 'send metadata, securityTemplateIds or metadataTemplateId');
  }
  const templates =
    input.securityTemplateIds !== undefined
      ? await checkTemplates(deps.db, principal.orgId, input.securityTemplateIds)
      : undefined;
  // Metadata needs Edit Metadata; a change of security templates needs Apply Security Template
  // (within what the caller holds), and the same templates sent back change nothing.
  const securityChange = templates !== undefined && !sameTemplates(templates, security.templateIds);
  if (input.metadata !== undefined || input.metadataTemplateId !== undefined || !securityChange)
    requirePermissions(permissions, permissionsFor('asset.edit_metadata'));
  if (templates !== undefined)
    await assertMayApplyTemplates(deps.db, principal, permissions, security.templateIds, templates);
  if (asset.object_type === 'Action') throw actionObjectReadOnly();
  if (asset.deleted_at !== null)
    throw new AppError('conflict', 'The asset is in the recycle bin: restore it before editing');
  if (input.metadataTemplateId !== undefined && !isUuid(input.metadataTemplateId))
    throw invalidField('body.metadataTemplateId', 'must be a UUID');
  const templateId = input.metadataTemplateId ?? asset.metadata_template_id;
  const template =
    input.metadataTemplateId !== undefined
      ? await templateForWrite(deps.db, principal, input.metadataTemplateId)
      : await templateOf(deps.db, principal.orgId, templateId);
  const current = fromJson<LegacyItem[]>(asset.metadata, []);
  let doc: LegacyItem[] | undefined;
  if (input.metadata !== undefined && input.metadata !== null) {
    if (!template) throw invalidField('body.metadataTemplateId', 'the asset has no metadata template; send one');
    doc = preparePatch(principal, template, input.metadata, current).doc;
  } else if (input.metadataTemplateId !== undefined && template) {
    doc = project(template, current).doc;
  }
  await applyChanges(deps, principal.userId, asset, security.templateIds, {
    doc,
    denormalized: doc && template ? project(template, doc).denormalized : undefined,
    templates,
    templateId,
  });
}

/** Writes a metadata and/or security change and publishes the matching events (bulk edit uses it too). */
export async function applyChanges(
  deps: Deps,
  actorId: string,
  asset: AssetRow,
  currentTemplates: string[],
  change: {
    doc?: LegacyItem[];
    denormalized?: Record<string, unknown>;
    templates?: string[];
    templateId?: string | null;
  },
  /** Run first in the change's transaction (bulk edit records the item done there; throwing rolls the change back). */
  first?: (trx: Trx) => Promise<void>,
): Promise<void> {
  const now = deps.clock.now();
  const metadataChanged =
    (change.doc !== undefined && toJson(change.doc) !== asset.metadata) ||
    (change.templateId !== undefined && change.templateId !== asset.metadata_template_id);
  const securityChanged =
    change.templates !== undefined && toJson([...change.templates].sort()) !== toJson([...currentTemplates].sort());
  await deps.db.transaction().execute(async (trx) => {
    if (first) await first(trx);
    const patch: Partial<AssetRow> = { updated_at: now, updated_by: actorId };
    if (change.doc !== undefined)
      Object.assign(patch, { metadata: toJson(change.doc), metadata_denormalized: toJson(change.denormalized ?? {}) });
    if (change.templateId !== undefined) patch.metadata_template_id = change.templateId;
    await trx.updateTable('assets').set(patch).where('id', '=', asset.id).where('org_id', '=', asset.org_id).execute();
    if (securityChanged) await setAssetSecurity(trx, asset.org_id, asset.id, change.templates!);
    const current = await templateNames(trx, asset.org_id, change.templates ?? currentTemplates);
    const data = eventAsset(
      { ...asset, metadata_template_id: change.templateId ?? asset.metadata_template_id },
      current,
    );
    if (metadataChanged) {
      await publishEvent(trx, now, {
        orgId: asset.org_id,
        type: 'asset.metadata.updated',
        actor: actorId,
        data: { asset: data },
      });
      // Usage rights are metadata: their changes are also the reference's rm.agreement.* events.
      if (change.denormalized !== undefined)
        await publishRightsChange(
          trx,
          now,
          asset,
          actorId,
          rightsOf(asset.metadata_denormalized),
          rightsOf(change.denormalized),
        );
    }
    if (securityChanged) {
      const previous = await templateNames(trx, asset.org_id, currentTemplates);
      await publishEvent(trx, now, {
        orgId: asset.org_id,
        type: 'asset.security.updated',
        actor: actorId,
        data: { asset: data, changes: { securityTemplates: { current, previous } } },
      });
    }
  });
}

/** POST /v1/asset/{id}/delete: to the recycle bin and back (Delete permission). */
export async function deleteOrRestore(
  deps: Deps,
  principal: Principal,
  id: string,
  action: 'delete' | 'undelete',
): Promise<AssetWithOrg> {
  const { asset, security } = await loadAssetFor(deps.db, principal, id, 'asset.delete');
  const now = deps.clock.now();
  if (action === 'delete' && asset.deleted_at !== null)
    throw new AppError('conflict', 'Failed to Delete Asset: it is already in the recycle bin');
  if (action === 'undelete' && asset.deleted_at === null)
    throw new AppError('conflict', 'Failed to UnDelete Asset: it is not in the recycle bin');
  const deletedAt = action === 'delete' ? now : null;
  await deps.db.transaction().execute(async (trx) => {
    // Only the lock matters here (the update below re-checks the state): SQLite needs no read for it.
    if (deps.engine === 'postgres') await lockChain(deps, trx, principal.orgId, asset.original_file_id);
    // The whole version chain moves together, if it is still where this call found it: of two
    // requests at once, the second finds nothing to move and gets the answer it would get after.
    const moved = await trx
      .updateTable('assets')
      .set({
        deleted_at: deletedAt,
        deleted_by: action === 'delete' ? principal.userId : null,
        updated_at: now,
        updated_by: principal.userId,
      })
      .where('org_id', '=', principal.orgId)
      .where('original_file_id', '=', asset.original_file_id)
      .where('deleted_at', action === 'delete' ? 'is' : 'is not', null)
      .executeTakeFirst();
    if (Number(moved.numUpdatedRows) === 0)
      throw new AppError(
        'conflict',
        action === 'delete'
          ? 'Failed to Delete Asset: it is already in the recycle bin'
          : 'Failed to UnDelete Asset: it is not in the recycle bin',
      );
    const data = eventAsset(asset, await templateNames(trx, asset.org_id, security.templateIds));
    await publishEvent(trx, now, {
      orgId: asset.org_id,
      type: action === 'delete' ? 'asset.deleted' : 'asset.restored',
      actor: principal.userId,
      data: { asset: data },
    });
  });
  return {
    ...asset,
    deleted_at: deletedAt,
    deleted_by: action === 'delete' ? principal.userId : null,
    updated_at: now,
    updated_by: principal.userId,
  };
}

export async function findAssetForCaller(deps: Deps, principal: Principal, id: string) {
  return findAsset(deps.db, principal.orgId, id);
}
