import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { requireAction } from '../../../core/authz/permissions.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import { AppError, invalidField, notFound } from '../../../core/http/errors.ts';
import { enqueueJob } from '../../../core/jobs/queue.ts';
import type { Deps } from '../../../deps.ts';
import { createAction, type ActionContext, type ActionOutcome } from '../../actions/index.ts';
import { loadAssetFor } from '../access.ts';
import { findAsset, liveAssetIds, type AssetWithOrg } from '../assets.repo.ts';
import { contentUrl, requireArrivedContent } from '../download/download.service.ts';
import { serveBlob } from '../download/serve.ts';
import { exemptPrincipal, rightsGate, serveWatermarked } from '../rights/gate.ts';
import { RenditionError } from '../renditions/rendition-error.ts';
import { checkShareMailLimits, queueMail } from '../share/mail-outbox.ts';
import { mailConfigured } from '../share/mail.ts';
import { isImage } from '../upload/content-types.ts';
import { signPath, verifySignedPath } from '../upload/signed-urls.ts';
import { storedRenditions } from '../views/present.ts';
import {
  applyTransformations,
  checkGeometry,
  EXTENSIONS,
  parseOp,
  TRANSFORM_KINDS,
  type RawOp,
  type TransformOp,
} from './transform-ops.ts';

export const TRANSFORM_ACTION = 'assets.transform';
export const TRANSFORM_CLEANUP_JOB = 'assets.transform_cleanup';
const DEFAULT_TTL = 7 * 86400;
const MAX_TTL = 30 * 86400;
/** Sources and watermark images are read into memory up to this size (the pixel limit applies as well). */
const MAX_SOURCE_BYTES = 512 * 1024 * 1024;
const EMAIL = /^[^\s@<>(),;:"]+@[^\s@<>(),;:"]+\.[^\s@<>(),;:"]+$/;
const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The reference's body (§7.16), every field optional to the schema so that each refusal names its field. */
export interface TransformBody {
  transformations?: {
    objectId?: string;
    expiration?: number;
    source?: string;
    includeOriginal?: boolean;
    transformations?: string | RawOp[];
  }[];
  recipients?: string | string[];
  shareMessage?: string;
  sender?: { name?: string };
}

/** What the action runs, fixed when it is asked for. */
interface TransformInput {
  items: { assetId: string; source: string; includeOriginal: boolean; ops: TransformOp[]; expiresAt: number }[];
  recipients: string[];
  shareMessage: string;
  senderName: string;
  requestedBy: string | null;
}

interface Manifest {
  orgId: string;
  createdAt: number;
  /** Who asked for it (manifests written before revocation existed have none). */
  requestedBy?: string | null;
  /** Set by DELETE /v1/asset/transform/{actionId}: the files are gone and every link answers 410. */
  revokedAt?: number;
  files: ({
    key: string;
    size: number;
    sha256: string;
    contentType: string;
    downloadName: string;
    assetId: string;
    /** What it was made from: `original` or a rendition (manifests written before have none: `original`). */
    source?: string;
  } | null)[];
}

const prefixOf = (actionId: string) => `transforms/${actionId}`;
export const transformPath = (actionId: string, n: number) => `/v1/transform/${actionId}/${n}`;
const transformLink = (deps: Deps, actionId: string, n: number, expiresAt: number) =>
  `${deps.config.publicUrl}${transformPath(actionId, n)}?expires=${expiresAt}&signature=${signPath(deps, 'GET', transformPath(actionId, n), expiresAt)}`;

function parseRecipients(value: TransformBody['recipients']): string[] {
  if (value === undefined) return [];
  const list = typeof value === 'string' ? value.split(/[\s,;]+/) : value;
  const seen = new Map<string, string>();
  list.forEach((raw, i) => {
    const email = raw.trim();
    if (email === '') return;
    if (!EMAIL.test(email))
      throw invalidField(
        typeof value === 'string' ? 'body.recipients' : `body.recipients.${i}`,
        `"${email.slice(0, 100)}" is not an e-mail address`,
      );
    if (!seen.has(email.toLowerCase())) seen.set(email.toLowerCase(), email);
  });
  if (seen.size > 100) throw invalidField('body.recipients', 'at most 100 recipients');
  return [...seen.values()];
}

/** An asset the caller names in the body: invisible (or of another organization) is a 400 naming the field, as in POST /v1/asset/share. */
async function bodyAsset(
  deps: Deps,
  principal: Principal,
  id: string,
  field: string,
  action: 'asset.transform' | 'asset.download',
): Promise<AssetWithOrg> {
  let asset: AssetWithOrg;
  try {
    asset = (await loadAssetFor(deps.db, principal, id, action)).asset;
  } catch (error) {
    if (error instanceof AppError && error.code === 'not_found') throw invalidField(field, 'Asset not found');
    throw error;
  }
  if (asset.deleted_at !== null)
    throw new AppError('conflict', `${field}: the asset is in the recycle bin`, {
      details: [{ field, message: 'the asset is in the recycle bin' }],
    });
  requireArrivedContent(asset);
  if (asset.content_state !== 'available' || !asset.blob_key)
    throw invalidField(field, 'the asset has no content (a metadata-only asset)');
  return asset;
}

/**
 * POST /v1/asset/transform (GetTransformation): checks every item and operation now (a 400 names the
 * field, an unknown kind by name), then an Action makes the files, links them with expiring URLs and
 * mails the recipients through the outbox.
 */
export async function requestTransformation(deps: Deps, principal: Principal, body: TransformBody) {
  requireAction(principal, 'asset.transform');
  const list = body.transformations;
  if (!Array.isArray(list) || list.length === 0)
    throw invalidField('body.transformations', 'required: at least one {objectId, transformations}');
  if (list.length > 50) throw invalidField('body.transformations', 'at most 50 items');
  const now = deps.clock.now();
  const items: TransformInput['items'] = [];
  for (const [i, item] of list.entries()) {
    const at = `body.transformations.${i}`;
    if (typeof item?.objectId !== 'string' || item.objectId === '')
      throw invalidField(`${at}.objectId`, 'required: the asset to transform');
    const rawOps = item.transformations;
    if (typeof rawOps === 'string')
      throw invalidField(
        `${at}.transformations`,
        `unknown transformation "${rawOps.slice(0, 100)}"; Tessera offers ${TRANSFORM_KINDS.join(', ')}, each given as an object ([{"type": "resize", "width": 800}, …])`,
      );
    if (!Array.isArray(rawOps) || rawOps.length === 0)
      throw invalidField(`${at}.transformations`, `required: a list of operations (${TRANSFORM_KINDS.join(', ')})`);
    if (rawOps.length > 20) throw invalidField(`${at}.transformations`, 'at most 20 operations');
    const ops = rawOps.map((op, j) => parseOp(op ?? {}, `${at}.transformations.${j}`));
    const ttl = item.expiration ?? DEFAULT_TTL;
    if (!Number.isInteger(ttl) || ttl < 60 || ttl > MAX_TTL)
      throw invalidField(`${at}.expiration`, `seconds from 60 to ${MAX_TTL}`);
    const asset = await bodyAsset(deps, principal, item.objectId, `${at}.objectId`, 'asset.transform');
    const source = item.source ?? 'original';
    // Out of rights (docs/usage-rights.md): refused now under `block` (a thumbnail or preview as source passes).
    await rightsGate(deps, asset, source, exemptPrincipal(principal));
    let size: { width: number | null; height: number | null };
    if (source === 'original') {
      if (!isImage(asset.content_type))
        throw invalidField(
          `${at}.source`,
          `the original is not an image (${asset.content_type ?? 'unknown type'}); name one of its renditions`,
        );
      size = { width: asset.width, height: asset.height };
    } else {
      const rendition = storedRenditions(asset)[source];
      if (!rendition || rendition.placeholder) {
        const held = Object.keys(storedRenditions(asset));
        throw invalidField(
          `${at}.source`,
          `the asset has no rendition "${source.slice(0, 50)}" (it has: ${['original', ...held].join(', ')})`,
        );
      }
      size = { width: rendition.width, height: rendition.height };
    }
    checkGeometry(ops, size.width, size.height, `${at}.transformations`);
    for (const [j, op] of ops.entries()) {
      if (op.type !== 'watermark' || op.objectId === undefined) continue;
      const mark = await bodyAsset(
        deps,
        principal,
        op.objectId,
        `${at}.transformations.${j}.objectId`,
        'asset.download',
      );
      if (!isImage(mark.content_type))
        throw invalidField(
          `${at}.transformations.${j}.objectId`,
          `the watermark must be an image (this asset is ${mark.content_type ?? 'of unknown type'})`,
        );
      op.objectId = mark.id;
    }
    items.push({
      assetId: asset.id,
      source,
      includeOriginal: item.includeOriginal === true,
      ops,
      expiresAt: Math.floor(now / 1000) + ttl,
    });
  }
  const recipients = parseRecipients(body.recipients);
  const mail =
    recipients.length === 0
      ? ('none' as const)
      : mailConfigured(deps)
        ? ('queued' as const)
        : ('not_configured' as const);
  if (mail === 'queued')
    await checkShareMailLimits(
      deps.db,
      deps.config,
      { orgId: principal.orgId, senderId: principal.userId },
      recipients.length,
      now,
    );
  const input: TransformInput = {
    items,
    recipients,
    shareMessage: body.shareMessage ?? '',
    senderName: body.sender?.name?.trim() || principal.username || 'A Tessera user',
    requestedBy: principal.userId,
  };
  const lastExpiry = Math.max(...items.map((i) => i.expiresAt));
  const actionId = await deps.db.transaction().execute(async (trx) => {
    const id = await createAction(trx, now, {
      orgId: principal.orgId,
      type: TRANSFORM_ACTION,
      createdBy: principal.userId,
      input,
    });
    // The files go when their links stop working, whatever became of the action.
    await enqueueJob(trx, now, {
      type: TRANSFORM_CLEANUP_JOB,
      orgId: principal.orgId,
      runAt: lastExpiry * 1000 + 60_000,
      payload: { actionId: id },
    });
    return id;
  });
  deps.jobs.wake();
  const message =
    mail === 'queued'
      ? 'Transformation started: the recipients are mailed the links when the files are ready (follow GET /v1/action/{jobId})'
      : mail === 'not_configured'
        ? "Transformation started; no mail will be sent because SMTP is not configured (TESSERA_SMTP_URL): the links are in the action's result (GET /v1/action/{jobId})"
        : "Transformation started: the links are in the action's result when it has succeeded (GET /v1/action/{jobId})";
  return { jobId: actionId, actionId, status: 'success' as const, message, mail, items: items.length };
}

async function readBlob(deps: Deps, key: string, file: string): Promise<void> {
  const stream = await deps.blobs.get(key);
  if (!stream) throw new RenditionError(`the stored content ${key} is missing`);
  await pipeline(stream, createWriteStream(file));
}

async function blobBuffer(deps: Deps, key: string): Promise<Buffer> {
  const stream = await deps.blobs.get(key);
  if (!stream) throw new RenditionError(`the stored content ${key} is missing`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += (chunk as Buffer).length;
    if (size > MAX_SOURCE_BYTES) throw new RenditionError('the watermark image is larger than 512 MiB');
    chunks.push(Buffer.from(chunk as Buffer));
  }
  return Buffer.concat(chunks);
}

const baseName = (filename: string) => filename.replace(/\.[A-Za-z0-9]{1,5}$/, '') || 'file';

/** The action: each item's file made and stored, its link (and the original's) recorded, the mails queued. */
export async function transformWork(deps: Deps, ctx: ActionContext): Promise<ActionOutcome> {
  const input = ctx.input as TransformInput;
  const errors: { item: string; message: string }[] = [];
  const files: Manifest['files'] = [];
  const links: {
    objectId: string;
    filename: string;
    source: string;
    url: string | null;
    originalUrl?: string;
    expiresEpoch: number;
    width?: number;
    height?: number;
    contentType?: string;
    size?: number;
  }[] = [];
  const dir = await deps.temp.mkdtemp('transform-');
  await ctx.progress(0, input.items.length);
  try {
    for (const [n, item] of input.items.entries()) {
      const asset = await findAsset(deps.db, ctx.orgId, item.assetId);
      const key = `${prefixOf(ctx.actionId)}/${n}`;
      try {
        if (!asset || asset.deleted_at !== null || asset.content_state !== 'available' || !asset.blob_key)
          throw new RenditionError('the asset was deleted or lost its content');
        const sourceKey = item.source === 'original' ? asset.blob_key : storedRenditions(asset)[item.source]?.key;
        if (!sourceKey) throw new RenditionError(`the rendition ${item.source} no longer exists`);
        const file = join(dir, `source-${n}`);
        await readBlob(deps, sourceKey, file);
        const out = await applyTransformations(
          file,
          item.ops,
          {
            maxPixels: deps.config.renditionMaxPixels,
            timeoutSeconds: deps.config.renditionTimeoutSeconds,
            signal: ctx.signal,
          },
          async (objectId) => {
            const mark = await findAsset(deps.db, ctx.orgId, objectId);
            if (!mark || mark.deleted_at !== null || !mark.blob_key)
              throw new RenditionError('the watermark image was deleted');
            return blobBuffer(deps, mark.blob_key);
          },
        );
        const downloadName = `${baseName(asset.filename)}-transformed.${EXTENSIONS[out.format]}`;
        const outKey = `${key}.${EXTENSIONS[out.format]}`;
        await deps.blobs.put(outKey, out.data, { contentType: out.contentType });
        files.push({
          key: outKey,
          size: out.data.length,
          sha256: createHash('sha256').update(out.data).digest('hex'),
          contentType: out.contentType,
          downloadName,
          assetId: asset.id,
          source: item.source,
        });
        links.push({
          objectId: asset.id,
          filename: downloadName,
          source: item.source,
          url: transformLink(deps, ctx.actionId, n, item.expiresAt),
          expiresEpoch: item.expiresAt * 1000,
          width: out.width,
          height: out.height,
          contentType: out.contentType,
          size: out.data.length,
          ...(item.includeOriginal
            ? {
                originalUrl: contentUrl(deps, asset, 'original', item.expiresAt - Math.floor(deps.clock.now() / 1000))
                  .url,
              }
            : {}),
        });
      } catch (error) {
        // A picture that cannot be made is the item's error; anything else (storage, database) fails the run, which is retried.
        if (!(error instanceof RenditionError)) throw error;
        files.push(null);
        errors.push({ item: item.assetId, message: (error as Error).message });
        links.push({
          objectId: item.assetId,
          filename: asset?.filename ?? '',
          source: item.source,
          url: null,
          expiresEpoch: item.expiresAt * 1000,
        });
      }
      await ctx.progress(n + 1, input.items.length);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const manifest: Manifest = { orgId: ctx.orgId, createdAt: deps.clock.now(), requestedBy: input.requestedBy, files };
  await deps.blobs.put(`${prefixOf(ctx.actionId)}/manifest.json`, Buffer.from(JSON.stringify(manifest)), {
    contentType: 'application/json',
  });
  const ready = links.filter((l) => l.url !== null);
  let mailQueued = false;
  if (input.recipients.length > 0 && mailConfigured(deps) && ready.length > 0) {
    const now = deps.clock.now();
    const lines = ready.flatMap((l) => [
      `${l.filename}: ${l.url}`,
      ...(l.originalUrl ? [`  original: ${l.originalUrl}`] : []),
    ]);
    const until = new Date(Math.min(...ready.map((l) => l.expiresEpoch))).toUTCString();
    const text = [
      `${input.senderName} sent you ${ready.length} transformed file(s).`,
      input.shareMessage,
      '',
      ...lines,
      '',
      `The links stop working on ${until}.`,
    ].join('\n');
    const html = `<p>${escape(input.senderName)} sent you ${ready.length} transformed file(s).</p>${input.shareMessage ? `<p>${escape(input.shareMessage)}</p>` : ''}<ul>${ready.map((l) => `<li><a href="${escape(l.url!)}">${escape(l.filename)}</a>${l.originalUrl ? ` (<a href="${escape(l.originalUrl)}">original</a>)` : ''}</li>`).join('')}</ul><p>The links stop working on ${escape(until)}.</p>`;
    // Through the durable outbox: the workers deliver, retrying while the SMTP server is unavailable.
    await deps.db.transaction().execute(async (trx) => {
      for (const to of input.recipients)
        await queueMail(trx, now, {
          orgId: ctx.orgId,
          senderId: input.requestedBy,
          to,
          subject: `${input.senderName} sent you transformed files`,
          text,
          html,
        });
    });
    deps.jobs.wake();
    mailQueued = true;
  }
  return { result: { files: links, recipients: input.recipients.length, mailQueued }, errors };
}

export async function transformCleanup(deps: Deps, payload: { actionId?: string }): Promise<void> {
  if (payload.actionId && /^[0-9a-f-]{36}$/i.test(payload.actionId))
    await deps.blobs.deletePrefix(prefixOf(payload.actionId));
}

async function readManifest(deps: Deps, actionId: string): Promise<Manifest | null> {
  const stream = await deps.blobs.get(`${prefixOf(actionId)}/manifest.json`);
  if (!stream) return null;
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Manifest;
}

/**
 * GET /v1/transform/{actionId}/{n}: a transformed file behind its signed, expiring link (the
 * signature is the permission); 410 once its asset went to the recycle bin or was purged.
 */
export async function serveTransformed(
  deps: Deps,
  request: FastifyRequest,
  reply: FastifyReply,
  params: { actionId: string; n: number },
  query: { expires: string; signature: string },
) {
  verifySignedPath(deps, 'GET', transformPath(params.actionId, params.n), query.expires, query.signature);
  const manifest = await readManifest(deps, params.actionId.toLowerCase());
  if (manifest?.revokedAt !== undefined) throw new AppError('gone', 'These transformed files were revoked');
  const file = manifest?.files[params.n];
  if (!manifest || !file) throw notFound('Transformed file (not ready, failed, or no longer kept)');
  if ((await liveAssetIds(deps.db, manifest.orgId, [file.assetId])).size === 0)
    throw new AppError('gone', 'The asset was deleted: the link no longer works');
  // Out of rights (docs/usage-rights.md): checked when the file is served, for everyone who holds the link
  // (never exempt), by what it was made from (one made from a thumbnail or preview passes, as when asked for).
  const rights = await deps.db
    .selectFrom('assets')
    .select(['org_id', 'metadata_denormalized', 'content_type'])
    .where('id', '=', file.assetId)
    .executeTakeFirst();
  if (rights && (await rightsGate(deps, rights, file.source ?? 'original', false, file.contentType)) !== 'serve')
    return serveWatermarked(deps, request, reply, { key: file.key, downloadName: file.downloadName });
  return serveBlob(deps, request, reply, {
    key: file.key,
    size: file.size,
    contentType: file.contentType,
    etag: `"${file.sha256.slice(0, 32)}"`,
    lastModified: manifest.createdAt,
    cacheControl: 'private, no-store',
    downloadName: file.downloadName,
  });
}

/**
 * DELETE /v1/asset/transform/{actionId}: ends every link of a transformation at once (410) and
 * removes its files. The person who asked for it, or someone who may transform every asset in it
 * (Download privilege; View + Download + Share on each); another organization's, or one not made
 * (yet), is a 404. A repeat changes nothing.
 */
export async function revokeTransformation(deps: Deps, principal: Principal, actionId: string): Promise<void> {
  requireAction(principal, 'asset.transform');
  const id = actionId.toLowerCase();
  const manifest = await readManifest(deps, id);
  if (!manifest || manifest.orgId !== principal.orgId) throw notFound('Transformation');
  if (manifest.revokedAt !== undefined) return;
  if (manifest.requestedBy !== principal.userId) {
    for (const file of manifest.files) {
      if (!file) continue;
      try {
        await loadAssetFor(deps.db, principal, file.assetId, 'asset.transform');
      } catch (error) {
        if (error instanceof AppError && error.code === 'not_found') throw notFound('Transformation');
        if (error instanceof AppError && error.code === 'forbidden')
          throw new AppError(
            'forbidden',
            'Only who asked for the transformation, or someone who may transform every asset in it, revokes it',
          );
        throw error;
      }
    }
  }
  // The tombstone first: no link serves from the moment it is written, then the files go.
  const tombstone: Manifest = { ...manifest, files: [], revokedAt: deps.clock.now() };
  await deps.blobs.put(`${prefixOf(id)}/manifest.json`, Buffer.from(JSON.stringify(tombstone)), {
    contentType: 'application/json',
  });
  for (const file of manifest.files) if (file) await deps.blobs.delete(file.key);
}
