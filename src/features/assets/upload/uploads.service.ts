import type { Readable } from 'node:stream';
import type { Selectable } from 'kysely';
import type { Deps } from '../../../deps.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import type { DbOrTrx, Trx } from '../../../core/db/connect.ts';
import type { AssetUploadsTable } from '../../../core/db/schema.ts';
import { publishEvent } from '../../../core/events/index.ts';
import { AppError, invalidField, notFound } from '../../../core/http/errors.ts';
import { BlobTooLarge } from '../../../core/storage/index.ts';
import { checkRoom, releaseHoldings, reserveHoldings } from '../../quotas/index.ts';
import { outageOf } from '../../../core/outage.ts';
import { enqueueJob, RetryJob } from '../../../core/jobs/queue.ts';
import type { HandlersFor } from '../../../core/jobs/catalog.ts';
import { previousVersionOf, sameContent, securityOf, templateNames, type AssetRow } from '../assets.repo.ts';
import { EMBEDDED_JOB, mayHoldEmbedded } from '../embedded/read-embedded.ts';
import { declaredUploadType, verifyContentType } from './content-types.ts';
import { templateOf, withSystemValues, type LegacyItem } from '../metadata-seam/metadata-seam.ts';
import { fromJson, toJson } from '../../../core/db/json.ts';
import { eventAsset } from '../views/present.ts';
import { signedUrl } from './signed-urls.ts';
import { concatenateParts, HEAD_BYTES, HeadKeeper, measureStream } from './upload-streams.ts';

export type UploadRow = Selectable<AssetUploadsTable>;

export const RENDITIONS_JOB = 'assets.renditions';
export const UPLOAD_WATCH_JOB = 'assets.upload.watch';
export const UPLOAD_EXPIRE_JOB = 'assets.upload.expire';

export interface UploadPlan {
  kind: 'single' | 'multipart';
  partCount: number;
  partSize: number;
}

/** The most parts one multipart upload may have (S3's limit), and so the most URLs one upload is handed. */
export const MAX_UPLOAD_PARTS = 10_000;

/**
 * Single presigned PUT up to the part size (reference: 100 MB); above it, or whenever `parts` is
 * asked for (a create request carrying `filesize`: the reference's training says that selects
 * multipart, and its upload client expects `urls[]` whatever the size), parts of that size, at most
 * MAX_UPLOAD_PARTS of them: a larger size is a 400 naming `body.filesize`, not a response of
 * millions of signed URLs built in memory.
 */
export function planUpload(deps: Deps, filesize: number | undefined, parts = false): UploadPlan {
  const partSize = deps.config.uploadPartSizeBytes;
  if (filesize === undefined || (filesize <= partSize && !parts)) return { kind: 'single', partCount: 1, partSize };
  const partCount = Math.max(1, Math.ceil(filesize / partSize));
  if (partCount > MAX_UPLOAD_PARTS)
    throw invalidField(
      'body.filesize',
      `must be at most ${MAX_UPLOAD_PARTS * partSize} bytes (${MAX_UPLOAD_PARTS} parts of ${partSize} bytes)`,
    );
  return { kind: 'multipart', partCount, partSize };
}

/** What the upload asked for that matters when its content arrives. */
export interface UploadOptions {
  /** Embedded metadata replaces values already set (see embedded/apply-embedded.ts). */
  overwriteEmbedded?: boolean;
  /**
   * Bytes counted against the storage quota when the upload was started (its size was declared):
   * nothing more is counted when they arrive, and they are given back if the upload is discarded.
   */
  reservedBytes?: number;
}

export interface NewUpload {
  id: string;
  orgId: string;
  assetId: string;
  target: 'original' | 'preview';
  filename: string;
  expectedSize: number | null;
  expectedSha256: string | null;
  contentType: string | null;
  /** Applied when the content arrives. */
  options?: UploadOptions;
  createdBy: string;
  plan: UploadPlan;
}

const stagingKey = (orgId: string, uploadId: string) => `uploads/${orgId}/${uploadId}/object`;
const partKey = (orgId: string, uploadId: string, n: number) => `uploads/${orgId}/${uploadId}/part-${n}`;
const uploadPrefix = (orgId: string, uploadId: string) => `uploads/${orgId}/${uploadId}`;
export const contentKey = (orgId: string, sha256: string) => `content/${orgId}/${sha256.slice(0, 2)}/${sha256}`;

/** Starts the store's side of an upload (an S3 multipart upload); call before the transaction. */
export async function beginUpload(deps: Deps, input: NewUpload): Promise<string | null> {
  if (input.plan.kind === 'multipart' && deps.blobs.presign) {
    return deps.blobs.presign.createMultipart(stagingKey(input.orgId, input.id), input.contentType ?? undefined);
  }
  return null;
}

/** Records the upload and its housekeeping jobs in the caller's transaction. */
export async function recordUpload(
  deps: Deps,
  trx: DbOrTrx,
  now: number,
  input: NewUpload,
  s3UploadId: string | null,
): Promise<UploadRow> {
  const row: UploadRow = {
    id: input.id,
    org_id: input.orgId,
    asset_id: input.assetId,
    kind: input.plan.kind,
    target: input.target,
    staging_key: stagingKey(input.orgId, input.id),
    s3_upload_id: s3UploadId,
    filename: input.filename,
    expected_size: input.expectedSize,
    expected_sha256: input.expectedSha256,
    content_type: input.contentType,
    part_size: input.plan.partSize,
    part_count: input.plan.partCount,
    status: 'open',
    options: input.options ? toJson(input.options) : null,
    assembled: null,
    created_by: input.createdBy,
    created_at: now,
    expires_at: now + deps.config.uploadUrlTtlSeconds * 1000,
  };
  await trx.insertInto('asset_uploads').values(row).execute();
  await enqueueJob(trx, now, {
    type: UPLOAD_EXPIRE_JOB,
    orgId: input.orgId,
    payload: { uploadId: input.id },
    runAt: row.expires_at + 60_000,
    maxAttempts: 10,
  });
  // Presigned single PUTs go straight to S3, which tells nobody: watch for the object.
  if (row.kind === 'single' && deps.blobs.presign) {
    await enqueueJob(trx, now, {
      type: UPLOAD_WATCH_JOB,
      orgId: input.orgId,
      payload: { uploadId: input.id },
      runAt: now + 5000,
      maxAttempts: 100_000,
    });
  }
  return row;
}

export type UploadTarget =
  | { url: string }
  | { uploadId: string; urls: { partNumber: number; url: string }[]; partSize: number };

/** Where the client sends the bytes: S3 presigned URLs, or Tessera's own signed URLs on local disk. */
export async function uploadUrls(deps: Deps, upload: UploadRow): Promise<UploadTarget> {
  const ttl = Math.max(1, Math.floor((upload.expires_at - deps.clock.now()) / 1000));
  const presign = deps.blobs.presign;
  if (upload.kind === 'single') {
    if (presign) return { url: await presign.put(upload.staging_key, ttl) };
    return { url: signedUrl(deps, 'PUT', `/v1/uploads/${upload.id}`, ttl).url };
  }
  const urls: { partNumber: number; url: string }[] = [];
  for (let n = 1; n <= (upload.part_count ?? 1); n++) {
    const url = presign
      ? await presign.part(upload.staging_key, upload.s3_upload_id!, n, ttl)
      : signedUrl(deps, 'PUT', `/v1/uploads/${upload.id}/parts/${n}`, ttl).url;
    urls.push({ partNumber: n, url });
  }
  return { uploadId: upload.id, urls, partSize: upload.part_size ?? deps.config.uploadPartSizeBytes };
}

async function openUpload(deps: Deps, id: string): Promise<UploadRow> {
  const upload = await deps.db.selectFrom('asset_uploads').selectAll().where('id', '=', id).executeTakeFirst();
  if (!upload) throw notFound('Upload');
  if (upload.status === 'completed') throw new AppError('conflict', 'This upload is already complete');
  if (upload.status !== 'open') throw new AppError('gone', `This upload was ${upload.status}`);
  if (upload.expires_at < deps.clock.now()) throw new AppError('gone', 'This upload has expired');
  return upload;
}

/**
 * Runs the part of an upload's completion that a concurrent request for the same upload (a second
 * PUT, a complete or a cancel) can overtake: its staged bytes moved or deleted under it, or its
 * claim of the upload taken. When the upload is no longer open, that is the answer (as if this
 * request had come a moment later), not a server error.
 */
async function unlessOvertaken(deps: Deps, upload: UploadRow, work: () => Promise<boolean>): Promise<void> {
  let won: boolean;
  try {
    won = await work();
  } catch (error) {
    if (error instanceof AppError) throw error;
    await openUpload(deps, upload.id);
    throw error;
  }
  if (!won) await openUpload(deps, upload.id);
}

interface Received {
  size: number;
  sha256: string;
  head: Buffer;
}

/** Streams a single-PUT upload to storage (local disk), verifies it and makes it the asset's content. */
export async function receiveSingle(
  deps: Deps,
  uploadId: string,
  body: Readable,
  declaredType: string | undefined,
  contentLength: number | undefined,
): Promise<{ etag: string }> {
  const upload = await openUpload(deps, uploadId);
  if (upload.kind !== 'single')
    throw new AppError('conflict', 'This is a multipart upload: PUT each part to its own URL');
  if (upload.expected_size !== null && contentLength !== undefined && contentLength !== upload.expected_size) {
    body.resume();
    throw invalidField(
      'header.content-length',
      `the asset was declared as ${upload.expected_size} bytes but ${contentLength} are being sent`,
    );
  }
  // The store hashes, counts and checks the size as it writes (one pass per chunk); only the first
  // bytes (for the content-type check) are kept here, by a listener that leaves after them.
  const head = new HeadKeeper();
  const keepHead = (chunk: Buffer) => {
    head.keep(chunk);
    if (head.head.length >= HEAD_BYTES) body.off('data', keepHead);
  };
  // Paused first, so no chunk flows before the store's pipe is attached (pipe resumes it).
  body.pause();
  body.on('data', keepHead);
  let put: { size: number; sha256: string };
  try {
    put = await deps.blobs.put(upload.staging_key, body, {
      contentType: declaredUploadType(upload.content_type, declaredType),
      maxBytes: upload.expected_size ?? undefined,
    });
  } catch (error) {
    if (error instanceof BlobTooLarge) {
      throw invalidField(
        'body.filesize',
        `the asset was declared as ${upload.expected_size} bytes but ${error.received} arrived; nothing was kept`,
      );
    }
    throw error;
  } finally {
    body.off('data', keepHead);
  }
  const received: Received = { size: put.size, sha256: put.sha256, head: head.head };
  await unlessOvertaken(deps, upload, () => verifyAndFinalize(deps, upload, received, declaredType));
  return { etag: `"${received.sha256}"` };
}

/** Stores one part of a local multipart upload; the ETag identifies its bytes. */
export async function receivePart(
  deps: Deps,
  uploadId: string,
  partNumber: number,
  body: Readable,
): Promise<{ etag: string }> {
  const upload = await openUpload(deps, uploadId);
  if (upload.kind !== 'multipart')
    throw new AppError('conflict', 'This is a single upload: PUT the whole file to its URL');
  const count = upload.part_count ?? 0;
  if (!Number.isInteger(partNumber) || partNumber < 1 || partNumber > count)
    throw invalidField('path.partNumber', `must be 1 to ${upload.part_count}`);
  // A part holds at most the part size, and the last at most what the declared size leaves for it:
  // a body that grows past that stops being written at once.
  const partSize = upload.part_size ?? deps.config.uploadPartSizeBytes;
  const maxBytes =
    upload.expected_size !== null && partNumber === count
      ? Math.max(0, upload.expected_size - (count - 1) * partSize)
      : partSize;
  try {
    const put = await deps.blobs.put(partKey(upload.org_id, upload.id, partNumber), body, { maxBytes });
    return { etag: `"${put.sha256.slice(0, 32)}"` };
  } catch (error) {
    if (error instanceof BlobTooLarge) {
      const declared =
        upload.expected_size !== null ? ` (the asset was declared as ${upload.expected_size} bytes)` : '';
      throw invalidField(
        'body.filesize',
        `part ${partNumber} may hold at most ${maxBytes} bytes${declared} but ${error.received} arrived; nothing was kept`,
      );
    }
    throw error;
  }
}

const unquote = (etag: string) => etag.trim().replace(/^W\//, '').replace(/^"|"$/g, '');

/** Hashes an object already in the store (S3 uploads that did not pass through Tessera). */
async function measureStored(deps: Deps, key: string): Promise<Received | null> {
  const stream = await deps.blobs.get(key);
  if (!stream) return null;
  return measureStream(stream);
}

export interface CompleteInput {
  action: 'complete' | 'cancel';
  uploadId?: string;
  fileId?: string;
  parts?: { partNumber: number; etag: string }[];
  filesize?: number;
}

async function uploadForCaller(deps: Deps, principal: Principal, input: CompleteInput): Promise<UploadRow> {
  let query = deps.db.selectFrom('asset_uploads').selectAll().where('org_id', '=', principal.orgId);
  if (input.uploadId) {
    query = query.where('id', '=', input.uploadId);
  } else if (input.fileId) {
    const asset = await deps.db
      .selectFrom('assets')
      .select('id')
      .where('org_id', '=', principal.orgId)
      .where('file_id', '=', input.fileId)
      .executeTakeFirst();
    if (!asset) throw notFound('Upload');
    query = query.where('asset_id', '=', asset.id).orderBy('created_at', 'desc');
  } else {
    throw invalidField('body.uploadId', 'is required (or fileId for a single upload)');
  }
  const upload = await query.executeTakeFirst();
  // Only whoever started an upload finishes or cancels it.
  if (!upload || upload.created_by !== principal.userId) throw notFound('Upload');
  return upload;
}

/** POST /v1/asset/complete: finishes (or cancels) a multipart upload, or confirms a single one. */
export async function completeUpload(
  deps: Deps,
  principal: Principal,
  input: CompleteInput,
): Promise<{ upload: UploadRow; status: 'completed' | 'cancelled' }> {
  const upload = await uploadForCaller(deps, principal, input);
  const alreadyComplete = () => new AppError('conflict', 'This upload is already complete and cannot be cancelled');
  if (input.action === 'cancel') {
    if (upload.status === 'completed') throw alreadyComplete();
    // A completion that claimed the upload first wins; a second cancel finds it cancelled already.
    if (!(await discardUpload(deps, upload, 'cancelled')) && (await uploadStatus(deps, upload.id)) === 'completed')
      throw alreadyComplete();
    return { upload, status: 'cancelled' };
  }
  if (upload.status === 'completed') return { upload, status: 'completed' };
  if (upload.status !== 'open' || upload.expires_at < deps.clock.now())
    throw new AppError('gone', `This upload was ${upload.status === 'open' ? 'expired' : upload.status}`);
  if (input.filesize !== undefined && upload.expected_size !== null && input.filesize !== upload.expected_size) {
    throw invalidField(
      'body.filesize',
      `does not match the ${upload.expected_size} bytes declared when the asset was created`,
    );
  }
  try {
    await unlessOvertaken(deps, upload, () => assembleAndFinalize(deps, upload, input));
  } catch (error) {
    // Two completions at once: the one that lost finds it complete, as a second one would after.
    if (error instanceof AppError && error.code === 'conflict' && (await uploadStatus(deps, upload.id)) === 'completed')
      return { upload, status: 'completed' };
    throw error;
  }
  return { upload, status: 'completed' };
}

const uploadStatus = async (deps: Deps, id: string) =>
  (await deps.db.selectFrom('asset_uploads').select('status').where('id', '=', id).executeTakeFirst())?.status;

/** The bytes of a completion (assembled from local parts, or as stored), verified and made the asset's content. */
async function assembleAndFinalize(deps: Deps, upload: UploadRow, input: CompleteInput): Promise<boolean> {
  // An earlier completion verified the bytes and recorded them, then stopped (a crash, a lost
  // connection) before or after moving them: this one finishes with them (no orphaned object).
  const assembled = fromJson<AssembledContent | null>(upload.assembled, null);
  if (assembled) return finalizeUpload(deps, upload, assembled);
  let received: Received | null;
  if (upload.kind === 'multipart') {
    const parts = [...(input.parts ?? [])].sort((a, b) => a.partNumber - b.partNumber);
    const count = upload.part_count ?? 0;
    if (parts.length !== count || parts.some((p, i) => p.partNumber !== i + 1)) {
      throw invalidField(
        'body.parts',
        `must list each of the ${count} parts once, numbered 1 to ${count}, with the ETag each PUT returned`,
      );
    }
    if (deps.blobs.presign) {
      try {
        await deps.blobs.presign.complete(upload.staging_key, upload.s3_upload_id!, parts);
      } catch (error) {
        // An earlier completion completed the S3 upload (which is then gone) and stopped before
        // recording it: its assembled object is there, and this completion takes it from here.
        // (A store that cannot answer fails this look too: 503, and the completion may be sent again.)
        const stored = await deps.blobs.head(upload.staging_key);
        if (!stored) {
          if (outageOf(error)) throw error;
          // A concurrent completion got further: it moved the bytes (recorded) or finished the upload.
          const now = await deps.db
            .selectFrom('asset_uploads')
            .select(['status', 'assembled'])
            .where('id', '=', upload.id)
            .executeTakeFirst();
          const recorded = fromJson<AssembledContent | null>(now?.assembled ?? null, null);
          if (recorded) return finalizeUpload(deps, upload, recorded);
          if (now?.status === 'completed') throw new AppError('conflict', 'This upload was completed meanwhile');
          throw invalidField('body.parts', `the storage refused the parts: ${(error as Error).message}`);
        }
        // Not all there yet: a concurrent completion is still writing it (the caller may send it again).
        if (upload.expected_size !== null && stored.size !== upload.expected_size)
          throw new AppError('conflict', 'Another completion of this upload is assembling it; send the request again');
      }
      received = await measureStored(deps, upload.staging_key);
    } else {
      received = await assembleLocalParts(deps, upload, parts);
    }
  } else {
    received = await measureStored(deps, upload.staging_key);
    if (!received) throw invalidField('body.fileId', 'no content has been uploaded to the URL yet');
  }
  if (!received) throw invalidField('body.parts', 'the assembled upload is missing');
  return verifyAndFinalize(deps, upload, received, undefined);
}

async function assembleLocalParts(
  deps: Deps,
  upload: UploadRow,
  parts: { partNumber: number; etag: string }[],
): Promise<Received> {
  // Check every part before writing anything.
  for (const part of parts) {
    const key = partKey(upload.org_id, upload.id, part.partNumber);
    if (!(await deps.blobs.head(key)))
      throw invalidField(`body.parts.${part.partNumber - 1}`, `part ${part.partNumber} has not been uploaded`);
  }
  const blobs = deps.blobs;
  const hashes: string[] = [];
  const head = new HeadKeeper();
  const open = async (index: number) => {
    const stream = await blobs.get(partKey(upload.org_id, upload.id, parts[index]!.partNumber));
    if (!stream) throw new Error(`part ${parts[index]!.partNumber} vanished`);
    return stream;
  };
  // The parts are read once: each chunk updates its part's hash here and the whole's in the store.
  const put = await blobs.put(upload.staging_key, concatenateParts(parts.length, open, hashes, head));
  for (const [i, part] of parts.entries()) {
    if (hashes[i]?.slice(0, 32) !== unquote(part.etag)) {
      await blobs.delete(upload.staging_key);
      throw invalidField(
        `body.parts.${part.partNumber - 1}.etag`,
        `does not match the ETag returned when part ${part.partNumber} was uploaded`,
      );
    }
  }
  return { size: put.size, sha256: put.sha256, head: head.head };
}

/** Whether this call made the bytes the asset's content (false: a concurrent request settled the upload first). */
async function verifyAndFinalize(
  deps: Deps,
  upload: UploadRow,
  received: Received,
  declaredType: string | undefined,
): Promise<boolean> {
  const reject = async (field: string, message: string): Promise<never> => {
    await deps.blobs.delete(upload.staging_key);
    throw invalidField(field, message);
  };
  if (upload.expected_size !== null && received.size !== upload.expected_size) {
    await reject(
      'body.filesize',
      `the asset was declared as ${upload.expected_size} bytes but ${received.size} arrived; nothing was kept`,
    );
  }
  if (upload.expected_sha256 !== null && received.sha256 !== upload.expected_sha256) {
    await reject(
      'body.checksum',
      `the SHA-256 of the content (${received.sha256}) does not match the declared checksum; nothing was kept`,
    );
  }
  // The type declared at create stands; the request's Content-Type counts only without one (curl's
  // default application/x-www-form-urlencoded never does); the bytes are the check on both.
  const type = verifyContentType(received.head, declaredUploadType(upload.content_type, declaredType), upload.filename);
  if ('problem' in type) await reject('header.content-type', `${type.problem}; nothing was kept`);
  const content: AssembledContent = {
    size: received.size,
    sha256: received.sha256,
    contentType: (type as { type: string }).type,
  };
  // Recorded before the bytes move to their content address, so a completion repeated after a
  // crash between the move and the claim below finds them (see assembleAndFinalize).
  await deps.db
    .updateTable('asset_uploads')
    .set({ assembled: toJson(content) })
    .where('id', '=', upload.id)
    .where('status', '=', 'open')
    .execute();
  return finalizeUpload(deps, upload, content);
}

/** What a completion verified, recorded on the upload (asset_uploads.assembled, migration 0031). */
interface AssembledContent {
  size: number;
  sha256: string;
  contentType: string;
}

/**
 * Makes verified bytes the asset's content: content-addressed (identical content is stored once),
 * then the asset row, the renditions job and the event in one transaction. Returns whether this
 * call claimed the upload (false: a concurrent request completed or cancelled it first).
 */
export async function finalizeUpload(
  deps: Deps,
  upload: UploadRow,
  content: { size: number; sha256: string; contentType: string },
): Promise<boolean> {
  const key = contentKey(upload.org_id, content.sha256);
  // Bytes not counted when the upload started (no declared size) count now, against the storage
  // quota (features/quotas): first without a reservation, so refused bytes are deleted before they
  // are moved anywhere; the check that holds is the reservation in the transaction below.
  const counted =
    upload.target === 'original' && fromJson<UploadOptions>(upload.options, {}).reservedBytes === undefined;
  if (counted) {
    try {
      await checkRoom(deps.db, deps.config, upload.org_id, { bytes: content.size });
    } catch (error) {
      await deps.blobs.delete(upload.staging_key);
      throw error;
    }
  }
  let moved = false;
  if (await deps.blobs.head(key)) {
    await deps.blobs.delete(upload.staging_key);
  } else {
    // A second PUT of the same bytes may have moved them a moment ago: the claim below decides.
    await deps.blobs.move(upload.staging_key, key).then(
      () => {
        moved = true;
      },
      async (error: unknown) => {
        if (!(await deps.blobs.head(key))) throw error;
      },
    );
  }
  const now = deps.clock.now();
  let won: boolean;
  try {
    won = await deps.db.transaction().execute(async (trx) => {
      const claimed = await trx
        .updateTable('asset_uploads')
        .set({ status: 'completed' })
        .where('id', '=', upload.id)
        .where('status', '=', 'open')
        .executeTakeFirst();
      if (Number(claimed.numUpdatedRows) === 0) return false;
      return settleUpload(deps, trx, upload, content, key, now, counted);
    });
  } catch (error) {
    // Refused by the storage quota in the transaction (a concurrent upload took the room): the
    // upload stays open, and bytes this call moved into place go unless another asset holds them.
    if (error instanceof AppError && error.quota && moved && !(await contentHeldBy(deps.db, upload.org_id, key)))
      await deps.blobs.delete(key);
    throw error;
  }
  if (!won) return false;
  // Parts of a multipart upload (and anything left of the staged object) are no longer needed.
  await deps.blobs.deletePrefix(uploadPrefix(upload.org_id, upload.id));
  deps.jobs.wake();
  return true;
}

/** Whether any asset version of the organization stores its content under `key`. */
async function contentHeldBy(db: DbOrTrx, orgId: string, key: string): Promise<boolean> {
  const row = await db
    .selectFrom('assets')
    .select('id')
    .where('org_id', '=', orgId)
    .where('blob_key', '=', key)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** The claimed upload's content made the asset's (or its preview), in the claim's transaction. */
async function settleUpload(
  deps: Deps,
  trx: Trx,
  upload: UploadRow,
  content: { size: number; sha256: string; contentType: string },
  key: string,
  now: number,
  counted: boolean,
): Promise<boolean> {
  if (upload.target === 'preview') {
    await enqueueJob(trx, now, {
      type: RENDITIONS_JOB,
      orgId: upload.org_id,
      payload: { assetId: upload.asset_id, previewKey: key },
    });
    return true;
  }
  const asset = await trx.selectFrom('assets').selectAll().where('id', '=', upload.asset_id).executeTakeFirst();
  if (!asset) return true;
  // The bytes count against the storage quota from now on: checked and added in one statement.
  if (counted) await reserveHoldings(trx, deps.config, upload.org_id, now, { bytes: content.size });
  const template = await templateOf(trx, asset.org_id, asset.metadata_template_id);
  const system = withSystemValues(template, fromJson<LegacyItem[]>(asset.metadata, []), {
    filename: asset.filename,
    size: content.size,
    type: content.contentType,
  });
  await trx
    .updateTable('assets')
    .set({
      ...(system ? { metadata: toJson(system.doc), metadata_denormalized: toJson(system.denormalized) } : {}),
      content_state: 'available',
      size: content.size,
      sha256: content.sha256,
      blob_key: key,
      content_type: content.contentType,
      renditions_state: asset.skip_transcode === 1 ? 'none' : 'pending',
      updated_at: now,
      created_event_sent: 1,
      renditions: '{}',
      width: null,
      height: null,
    })
    .where('id', '=', asset.id)
    .execute();
  // A new version became the latest when it was created (it exists from then on); nothing to swap here.
  await enqueueJob(trx, now, { type: RENDITIONS_JOB, orgId: upload.org_id, payload: { assetId: asset.id } });
  if (mayHoldEmbedded(content.contentType)) {
    const options = fromJson<UploadOptions>(upload.options, {});
    await enqueueJob(trx, now, {
      type: EMBEDDED_JOB,
      orgId: upload.org_id,
      payload: { assetId: asset.id, ...(options.overwriteEmbedded ? { overwrite: true } : {}) },
    });
  }
  if (asset.created_event_sent === 0) await publishCreatedOnArrival(trx, now, asset, upload.created_by);
  return true;
}

/**
 * Cancelled or expired: the parts and staged bytes go; the asset stays, without content (a
 * metadata-only asset, as the reference has it until content arrives), and its creation event is
 * published now if it was waiting for the content. The upload is claimed first, so a completion
 * running at the same time either finished before (this returns false and changes nothing) or
 * finds the upload cancelled.
 */
export async function discardUpload(deps: Deps, upload: UploadRow, status: 'cancelled' | 'expired'): Promise<boolean> {
  const won = await deps.db.transaction().execute(async (trx) => {
    const updated = await trx
      .updateTable('asset_uploads')
      .set({ status })
      .where('id', '=', upload.id)
      .where('status', '=', 'open')
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) return false;
    if (upload.target === 'original') {
      const now = deps.clock.now();
      // Bytes counted when the upload started are given back: they never arrived.
      const reserved = fromJson<UploadOptions>(upload.options, {}).reservedBytes;
      if (reserved !== undefined) await releaseHoldings(trx, upload.org_id, now, { bytes: reserved });
      const asset = await trx
        .selectFrom('assets')
        .selectAll()
        .where('id', '=', upload.asset_id)
        .where('content_state', '=', 'pending')
        .executeTakeFirst();
      if (asset) {
        await trx
          .updateTable('assets')
          .set({ content_state: 'none', created_event_sent: 1, updated_at: now })
          .where('id', '=', asset.id)
          .execute();
        if (asset.created_event_sent === 0) await publishCreatedOnArrival(trx, now, asset, upload.created_by);
      }
    }
    return true;
  });
  if (!won) return false;
  if (upload.s3_upload_id && deps.blobs.presign) {
    await deps.blobs.presign.abort(upload.staging_key, upload.s3_upload_id).catch(() => {});
  }
  await deps.blobs.deletePrefix(uploadPrefix(upload.org_id, upload.id));
  return true;
}

/**
 * `asset.created` (or `version.created`) of an asset created with a filename: published when its
 * content arrived, or when its upload ended without content (it is then a metadata-only asset).
 */
async function publishCreatedOnArrival(trx: Trx, now: number, asset: AssetRow, actor: string): Promise<void> {
  const security = (await securityOf(trx, asset.org_id, [asset.id])).get(asset.id)!;
  const data = eventAsset(asset, await templateNames(trx, asset.org_id, security.templateIds));
  if (asset.version_number === 1) {
    // The same bytes elsewhere in the organization (issue 25 item 5): known now that they arrived.
    const sha = (await trx.selectFrom('assets').select('sha256').where('id', '=', asset.id).executeTakeFirst())?.sha256;
    const duplicates = sha ? (await sameContent(trx, asset.org_id, sha, asset.id)).map((d) => d.id) : [];
    await publishEvent(trx, now, {
      orgId: asset.org_id,
      type: 'asset.created',
      actor,
      data: { asset: data, ...(duplicates.length > 0 ? { duplicates } : {}) },
    });
    return;
  }
  const previous = await previousVersionOf(trx, asset.org_id, asset.original_file_id, asset.version_number);
  const latest = await trx.selectFrom('assets').select('is_current').where('id', '=', asset.id).executeTakeFirst();
  await publishEvent(trx, now, {
    orgId: asset.org_id,
    type: 'version.created',
    actor,
    data: {
      asset: data,
      version: {
        latest: latest?.is_current === 1,
        versionNumber: asset.version_number,
        previousVersionNumber: previous?.versionNumber ?? null,
        number: asset.version_number,
        previous,
      },
    },
  });
}

export function uploadJobHandlers(deps: Deps): HandlersFor<typeof UPLOAD_EXPIRE_JOB | typeof UPLOAD_WATCH_JOB> {
  return {
    [UPLOAD_EXPIRE_JOB]: async (job) => {
      const { uploadId } = job.payload;
      const upload = await deps.db
        .selectFrom('asset_uploads')
        .selectAll()
        .where('id', '=', uploadId)
        .executeTakeFirst();
      if (!upload || upload.status !== 'open') return;
      if (upload.expires_at > deps.clock.now())
        throw new RetryJob('not expired yet', upload.expires_at - deps.clock.now() + 1000);
      await discardUpload(deps, upload, 'expired');
    },
    [UPLOAD_WATCH_JOB]: async (job) => {
      const { uploadId } = job.payload;
      const upload = await deps.db
        .selectFrom('asset_uploads')
        .selectAll()
        .where('id', '=', uploadId)
        .executeTakeFirst();
      if (!upload || upload.status !== 'open' || upload.expires_at < deps.clock.now()) return;
      const received = await measureStored(deps, upload.staging_key);
      if (!received) throw new RetryJob('no content yet', 5000);
      try {
        await verifyAndFinalize(deps, upload, received, undefined);
      } catch (error) {
        // Refused content was deleted; the upload stays open for another attempt until it expires.
        if (error instanceof AppError) throw new RetryJob(error.message, 5000);
        throw error;
      }
    },
  };
}

/** The file ids of the asset an upload fed (for the answer of FinishUpload); undefined once it is purged. */
export function uploadedAssetFileIds(
  deps: Deps,
  assetId: string,
): Promise<{ file_id: string; original_file_id: string } | undefined> {
  return deps.db
    .selectFrom('assets')
    .select(['file_id', 'original_file_id'])
    .where('id', '=', assetId)
    .executeTakeFirst();
}
