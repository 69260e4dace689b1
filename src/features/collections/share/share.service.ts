import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { permissionsOn } from '../../../core/authz/authorize.ts';
import { permitted, requireAction } from '../../../core/authz/permissions.ts';
import { isPrivilege } from '../../../core/authz/catalog.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import { fromJson, toJson } from '../../../core/db/json.ts';
import { publishEvent } from '../../../core/events/index.ts';
import { AppError, forbidden, invalidField, notFound } from '../../../core/http/errors.ts';
import { enqueueJob } from '../../../core/jobs/queue.ts';
import type { Deps } from '../../../deps.ts';
import { ActionCancelled, actionCreator, createAction, type ActionContext } from '../../actions/index.ts';
import {
  callerPermissions,
  checkShareMailLimits,
  liveAssetIds,
  mailConfigured,
  queueMail,
  refusalAmong,
  serveBlob,
  shareSourcesByFileId,
  signPath,
  verifySignedPath,
  type MailMessage,
  type ShareSource,
} from '../../assets/index.ts';
import { enabledUserIdByEmail, loadUserPrincipal } from '../../identity/index.ts';
import { templatesHiddenFrom } from '../../metadata/index.ts';
import { memberFileIds } from '../collections.repo.ts';
import { loadVisibleCollection } from '../collections.service.ts';
import { ZIP_LIMIT_BYTES, entryName, writeZip, type ZipEntrySource } from './share.zip.ts';

export const SHARE_ACTION = 'collections.share';
export const SHARE_CLEANUP_JOB = 'collections.share_cleanup';
const DEFAULT_TTL = 7 * 86400;
const EMAIL = /^[^\s@<>(),;:"]+@[^\s@<>(),;:"]+\.[^\s@<>(),;:"]+$/;
const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export interface ShareBody {
  sender?: { name?: string };
  shareUsers?: { email?: string; name?: string }[];
  shareMessage?: string;
  expiration?: number;
}

/** What the action needs, fixed when the share is asked for (the link expiry included). */
interface ShareInput {
  collection: { id: string; name: string; type: 'private' | 'secured' };
  senderName: string;
  sharer: Pick<Principal, 'kind' | 'via' | 'userId' | 'username' | 'roleId'> & {
    privileges: string[];
    groupIds: string[];
  };
  recipients: { email: string; name: string | null }[];
  shareMessage: string;
  /** Epoch seconds. */
  expiresAt: number;
}

/** Written next to the zips when they are ready: which zip each recipient's link serves. */
interface Manifest {
  orgId: string;
  collection: ShareInput['collection'];
  /** `assets`: the asset ids inside (a zip dies when one of them is purged or in the recycle bin) */
  archives: { key: string; size: number; sha256: string; assets?: string[] }[];
  recipients: number[];
  createdAt: number;
}

const prefixOf = (shareId: string) => `collection-shares/${shareId}`;
export const sharePath = (shareId: string, recipient: number) => `/v1/collection-share/${shareId}/${recipient}`;

function shareLink(deps: Deps, shareId: string, recipient: number, expiresAt: number): string {
  const path = sharePath(shareId, recipient);
  return `${deps.config.publicUrl}${path}?expires=${expiresAt}&signature=${signPath(deps, 'GET', path, expiresAt)}`;
}

function principalOfSharer(orgId: string, s: ShareInput['sharer']): Principal {
  return { ...s, orgId, privileges: new Set(s.privileges.filter(isPrivilege)), groupIds: s.groupIds };
}

/**
 * The members the sharer may pass on, in collection order: current bytes stored, not in the recycle
 * bin, metadata template not hidden from the sharer, and View, Download and Share through the
 * asset's security templates (reference §9.6). `refused` are members the sharer sees but may not
 * pass on; members the sharer cannot see are not mentioned at all.
 */
async function sharerMembers(deps: Deps, orgId: string, collectionId: string, sharer: Principal) {
  const order = await memberFileIds(deps.db, collectionId);
  const byFile = new Map((await shareSourcesByFileId(deps.db, orgId, order)).map((s) => [s.fileId, s]));
  const hidden = new Set(await templatesHiddenFrom(deps.db, sharer));
  const shareable: ShareSource[] = [];
  const refused: { item: string; message: string }[] = [];
  let total = 0;
  for (const fileId of order) {
    const s = byFile.get(fileId);
    if (!s || (s.metadataTemplateId && hidden.has(s.metadataTemplateId))) continue;
    const perms = callerPermissions(sharer, s.security);
    if (!perms.has('view')) continue;
    if (s.deleted) refused.push({ item: fileId, message: 'The asset is in the recycle bin' });
    else if (!s.available) refused.push({ item: fileId, message: 'The asset has no stored content' });
    else if (!permitted(perms, 'asset.share'))
      refused.push({
        item: fileId,
        message: 'Missing permission on this asset: Download and Share are needed to share it',
      });
    else if ((s.size ?? 0) + total > ZIP_LIMIT_BYTES)
      refused.push({ item: fileId, message: 'The zip would exceed 4 GiB; the asset was left out' });
    else {
      shareable.push(s);
      total += s.size ?? 0;
    }
  }
  return { shareable, refused };
}

/** POST /v1/collection/{id}/share: checks the request, then builds and mails the zips as an Action. */
export async function shareCollection(deps: Deps, principal: Principal, id: string, body: ShareBody) {
  requireAction(principal, 'collection.share');
  const c = await loadVisibleCollection(deps.db, principal, id);
  const senderName = body.sender?.name?.trim();
  if (!senderName) throw invalidField('body.sender', 'Missing Sender');
  if (!body.shareUsers || body.shareUsers.length === 0)
    throw invalidField('body.shareUsers', 'Invalid Share Asset Missing shareUsers');
  if (body.shareUsers.length > 100) throw invalidField('body.shareUsers', 'at most 100 recipients');
  const seen = new Set<string>();
  const recipients: ShareInput['recipients'] = [];
  body.shareUsers.forEach((u, i) => {
    const email = u.email?.trim();
    if (!email || !EMAIL.test(email))
      throw invalidField(`body.shareUsers.${i}.email`, 'Bad Data. Recipient information is required.');
    if (seen.has(email.toLowerCase())) return;
    seen.add(email.toLowerCase());
    recipients.push({ email, name: u.name?.trim() || null });
  });
  const ttl = body.expiration ?? DEFAULT_TTL;
  if (!Number.isInteger(ttl) || ttl < 60 || ttl > 30 * 86400)
    throw invalidField('body.expiration', 'must be 60 to 2592000 seconds');
  const { shareable, refused } = await sharerMembers(deps, principal.orgId, c.row.id, principal);
  if (shareable.length === 0 && refused.length === 0)
    throw invalidField(
      'params.id',
      'Invalid input. No Collection or Assets are selected to share: the collection has no assets you may view',
    );
  if (shareable.length === 0)
    throw forbidden(
      "None of the collection's assets may be shared by you: sharing needs Download and Share on an asset with stored content",
    );
  const now = deps.clock.now();
  // Refused up front (429) rather than when the Action's mails would be queued.
  if (mailConfigured(deps))
    await checkShareMailLimits(
      deps.db,
      deps.config,
      { orgId: principal.orgId, senderId: principal.userId },
      recipients.length,
      now,
    );
  const expiresAt = Math.floor(now / 1000) + ttl;
  const input: ShareInput = {
    collection: { id: c.row.id, name: c.row.name, type: c.row.collection_type },
    senderName,
    sharer: {
      kind: principal.kind,
      via: principal.via,
      userId: principal.userId,
      username: principal.username,
      roleId: principal.roleId,
      privileges: [...principal.privileges],
      groupIds: [...principal.groupIds],
    },
    recipients,
    shareMessage: body.shareMessage ?? '',
    expiresAt,
  };
  const actionId = await deps.db.transaction().execute(async (trx) => {
    const actionId = await createAction(trx, now, {
      orgId: principal.orgId,
      type: SHARE_ACTION,
      createdBy: principal.userId,
      input,
    });
    // The zips go when the links stop working, whatever became of the action.
    await enqueueJob(trx, now, {
      type: SHARE_CLEANUP_JOB,
      orgId: principal.orgId,
      runAt: expiresAt * 1000 + 60_000,
      payload: { shareId: actionId },
    });
    const shares = fromJson<string[]>(c.row.share_document, []);
    await trx
      .updateTable('collections')
      .set({ share_document: toJson([...shares, actionId]) })
      .where('id', '=', c.row.id)
      .execute();
    return actionId;
  });
  deps.jobs.wake();
  const mail = mailConfigured(deps);
  const message = mail
    ? 'Sharing started: a zip is being built for each recipient, who is mailed a link when it is ready (follow GET /v1/action/{actionId})'
    : 'Sharing started; no mail will be sent because SMTP is not configured (TESSERA_SMTP_URL): pass the links on yourself. They work once the action has succeeded (GET /v1/action/{actionId})';
  return {
    // The reference answers its raw Lambda-invoke envelope (reference §9.6); its clients read these three.
    ...lambdaEnvelope(message),
    status: 'success' as const,
    message,
    actionId,
    jobId: actionId,
    mailSent: false,
    mail: mail ? ('queued' as const) : ('not_configured' as const),
    expiresEpoch: expiresAt * 1000,
    links: mail
      ? []
      : recipients.map((r, n) => ({
          email: r.email,
          url: shareLink(deps, actionId, n, expiresAt),
          expiresEpoch: expiresAt * 1000,
        })),
  };
}

/** `{StatusCode, ExecutedVersion, Payload}` as the reference's Lambda invocation returns it: Payload is JSON text of `{statusCode, body}`, body JSON text of `{message}`. */
export function lambdaEnvelope(message: string) {
  return {
    StatusCode: 200,
    ExecutedVersion: '$LATEST',
    Payload: JSON.stringify({ statusCode: 200, body: JSON.stringify({ message }) }),
  };
}

/** An enabled user of the organization with this e-mail address (case-insensitive), if any. */
async function orgUserByEmail(deps: Deps, orgId: string, email: string): Promise<Principal | null> {
  const userId = await enabledUserIdByEmail(deps.db, orgId, email);
  return userId ? loadUserPrincipal(deps.db, userId) : null;
}

function shareMail(
  input: ShareInput,
  recipient: ShareInput['recipients'][number],
  url: string,
  files: number,
): MailMessage {
  const { senderName, collection, shareMessage } = input;
  const until = new Date(input.expiresAt * 1000).toUTCString();
  return {
    to: { email: recipient.email, name: recipient.name ?? undefined },
    subject: `${senderName} shared the collection "${collection.name}" with you`,
    text: [
      `${senderName} shared the collection "${collection.name}" with you (${files} file(s), as one zip).`,
      shareMessage,
      '',
      `Download: ${url}`,
      '',
      `The link stops working on ${until}.`,
    ].join('\n'),
    html: `<p>${escape(senderName)} shared the collection “${escape(collection.name)}” with you (${files} file(s), as one zip).</p>${shareMessage ? `<p>${escape(shareMessage)}</p>` : ''}<p><a href="${escape(url)}">Download the zip</a></p><p>The link stops working on ${escape(until)}.</p>`,
  };
}

/**
 * The action: per recipient, the sharer's shareable members narrowed to what that recipient may
 * view (a user of the organization) or all of them (any other address); one zip per distinct set,
 * streamed into blob storage; then the manifest the links read, the mails and the event.
 */
export async function shareWork(deps: Deps, ctx: ActionContext) {
  const input = ctx.input as ShareInput;
  const exists = await deps.db
    .selectFrom('collections')
    .select('id')
    .where('org_id', '=', ctx.orgId)
    .where('id', '=', input.collection.id)
    .executeTakeFirst();
  if (!exists) throw new AppError('not_found', 'The collection no longer exists');
  const sharer = principalOfSharer(ctx.orgId, input.sharer);
  const { shareable, refused } = await sharerMembers(deps, ctx.orgId, input.collection.id, sharer);
  const sets: ShareSource[][] = [];
  const archiveOf: number[] = [];
  const kinds = { Internal: [] as string[], External: [] as string[] };
  for (const r of input.recipients) {
    const user = await orgUserByEmail(deps, ctx.orgId, r.email);
    let set = shareable;
    if (user) {
      const hidden = new Set(await templatesHiddenFrom(deps.db, user));
      set = shareable.filter(
        (s) =>
          callerPermissions(user, s.security).has('view') &&
          !(s.metadataTemplateId && hidden.has(s.metadataTemplateId)),
      );
    }
    (user ? kinds.Internal : kinds.External).push(r.email);
    const key = set.map((s) => s.fileId).join();
    let at = sets.findIndex((other) => other.map((s) => s.fileId).join() === key);
    if (at < 0) at = sets.push(set) - 1;
    archiveOf.push(at);
  }
  const totalFiles = sets.reduce((n, s) => n + s.length, 0);
  await ctx.progress(0, totalFiles);
  let done = 0;
  const archives: Manifest['archives'] = [];
  for (const set of sets) {
    // Named by content, so a retried action reuses a zip it already stored.
    const key = `${prefixOf(ctx.actionId)}/${createHash('sha256')
      .update(set.map((s) => s.fileId).join())
      .digest('hex')
      .slice(0, 32)}.zip`;
    const taken = new Set<string>();
    const entries: ZipEntrySource[] = set.map((s) => ({
      id: s.fileId,
      name: entryName(s.filename, s.fileId, taken),
      blobKey: s.blobKey!,
      contentType: s.contentType,
      mtime: s.updatedAt,
    }));
    const existing = await deps.blobs.head(key);
    let size = existing?.size ?? 0;
    let sha256 = '';
    if (!existing) {
      const written = await writeZip(deps.blobs, key, entries, () => ctx.cancelRequested());
      size = written.size;
      sha256 = written.sha256;
      for (const m of written.missing)
        refused.push({ item: m.id, message: `The stored content of ${m.name} is missing; it was left out` });
    }
    archives.push({
      key,
      size,
      sha256: sha256 || createHash('sha256').update(key).digest('hex'),
      assets: set.map((s) => s.assetId),
    });
    done += set.length;
    if (await ctx.cancelRequested()) throw new ActionCancelled({ archives: archives.length });
    await ctx.progress(done, totalFiles);
  }
  const manifest: Manifest = {
    orgId: ctx.orgId,
    collection: input.collection,
    archives,
    recipients: archiveOf,
    createdAt: deps.clock.now(),
  };
  await deps.blobs.put(`${prefixOf(ctx.actionId)}/manifest.json`, Buffer.from(JSON.stringify(manifest)), {
    contentType: 'application/json',
  });
  const messages = input.recipients.map((r, n) =>
    shareMail(input, r, shareLink(deps, ctx.actionId, n, input.expiresAt), sets[archiveOf[n]!]!.length),
  );
  const mailQueued = mailConfigured(deps);
  const now = deps.clock.now();
  const collection = {
    id: input.collection.id,
    name: input.collection.name,
    type: input.collection.type === 'private' ? ('Private' as const) : ('Shared' as const),
  };
  await deps.db.transaction().execute(async (trx) => {
    // The mails go through the durable outbox in the same transaction as the events: retried until the SMTP server takes them.
    if (mailQueued)
      for (const m of messages)
        await queueMail(trx, now, {
          orgId: ctx.orgId,
          senderId: sharer.userId,
          to: m.to.name ? { name: m.to.name, address: m.to.email } : m.to.email,
          subject: m.subject,
          text: m.text,
          html: m.html,
        });
    for (const type of ['Internal', 'External'] as const) {
      if (kinds[type].length === 0) continue;
      await publishEvent(trx, now, {
        orgId: ctx.orgId,
        type: 'collection.shared',
        actor: sharer.kind === 'user' ? sharer.userId : null,
        data: { collection, share: { type, recipients: kinds[type] } },
      });
    }
  });
  if (mailQueued) deps.jobs.wake();
  return {
    result: {
      collectionId: input.collection.id,
      recipients: input.recipients.length,
      assets: shareable.length,
      leftOut: refused.length,
      mailQueued,
      expiresEpoch: input.expiresAt * 1000,
    },
    errors: refused,
  };
}

export async function cleanupWork(deps: Deps, payload: { shareId?: string }): Promise<void> {
  if (payload.shareId && /^[0-9a-f-]{36}$/i.test(payload.shareId))
    await deps.blobs.deletePrefix(prefixOf(payload.shareId));
}

/**
 * A share link dies with its source: 404 once the collection is gone, 410 once the share was
 * revoked (it is no longer in the collection's share list) or an asset inside the zip was purged
 * or sent to the recycle bin.
 */
async function assertShareAlive(
  deps: Deps,
  manifest: Manifest,
  shareId: string,
  assetIds: readonly string[],
): Promise<void> {
  const row = await deps.db
    .selectFrom('collections')
    .select('share_document')
    .where('org_id', '=', manifest.orgId)
    .where('id', '=', manifest.collection.id)
    .executeTakeFirst();
  if (!row) throw notFound('Shared zip (its collection was deleted)');
  if (!fromJson<string[]>(row.share_document, []).includes(shareId))
    throw new AppError('gone', 'This share was revoked');
  if (assetIds.length === 0) return;
  const live = await liveAssetIds(deps.db, manifest.orgId, assetIds);
  if (live.size !== new Set(assetIds).size)
    throw new AppError('gone', 'An asset in this zip was deleted: the link no longer works');
}

/**
 * DELETE /v1/collection/{id}/share/{shareId}: ends a share at once (its links answer 410, its zips
 * are removed). The sharer, or anyone who may edit the collection.
 */
export async function revokeShare(deps: Deps, principal: Principal, id: string, shareId: string): Promise<void> {
  requireAction(principal, 'collection.share');
  const c = await loadVisibleCollection(deps.db, principal, id);
  const shares = fromJson<string[]>(c.row.share_document, []);
  if (!shares.includes(shareId.toLowerCase())) throw notFound('Share');
  const sharer = await actionCreator(deps.db, principal.orgId, shareId.toLowerCase());
  if (sharer !== principal.userId && c.row.owner_id !== principal.userId) {
    const perms = await permissionsOn(deps.db, principal, c.templateIds);
    if (!permitted(perms, 'collection.edit'))
      throw forbidden('Only the sharer, or someone who may edit the collection, revokes a share');
  }
  await deps.db
    .updateTable('collections')
    .set({ share_document: toJson(shares.filter((s) => s !== shareId.toLowerCase())) })
    .where('id', '=', c.row.id)
    .execute();
  // The zips go now; the manifest stays until the share's cleanup job, so its links answer 410 (revoked), not 404.
  const manifest = await readManifest(deps, shareId.toLowerCase());
  for (const archive of manifest?.archives ?? []) await deps.blobs.delete(archive.key);
}

async function readManifest(deps: Deps, shareId: string): Promise<Manifest | null> {
  const stream = await deps.blobs.get(`${prefixOf(shareId)}/manifest.json`);
  if (!stream) return null;
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Manifest;
}

/**
 * GET /v1/collection-share/{shareId}/{recipient}: the recipient's zip behind a signed, expiring
 * link (the signature is the permission). 403 when the signature is wrong or expired; 404 until
 * the zip is ready and after it was removed.
 */
export async function serveShare(
  deps: Deps,
  request: FastifyRequest,
  reply: FastifyReply,
  params: { shareId: string; recipient: string },
  query: { expires: string; signature: string },
) {
  verifySignedPath(deps, 'GET', sharePath(params.shareId, Number(params.recipient)), query.expires, query.signature);
  const manifest = await readManifest(deps, params.shareId);
  if (!manifest) throw notFound('Shared zip (not ready yet, or no longer kept)');
  const archive = manifest.archives[manifest.recipients[Number(params.recipient)] ?? -1];
  if (!archive) throw notFound('Shared zip');
  await assertShareAlive(deps, manifest, params.shareId, archive.assets ?? []);
  // Out of rights (docs/usage-rights.md): a zip holding an asset whose right expired is refused while
  // the organization does not allow such downloads (checked at each request: a renewed right serves again).
  const refusal = await refusalAmong(deps.db, manifest.orgId, archive.assets ?? [], deps.clock.now());
  if (refusal) throw refusal;
  const whole = !request.headers.range && !request.headers['if-none-match'] && !request.headers['if-modified-since'];
  if (whole) {
    const now = deps.clock.now();
    const collection = {
      id: manifest.collection.id,
      name: manifest.collection.name,
      type: manifest.collection.type === 'private' ? ('Private' as const) : ('Shared' as const),
    };
    await deps.db.transaction().execute((trx) =>
      publishEvent(trx, now, {
        orgId: manifest.orgId,
        type: 'collection.downloaded',
        actor: null,
        data: { collection },
      }),
    );
  }
  return serveBlob(deps, request, reply, {
    key: archive.key,
    size: archive.size,
    contentType: 'application/zip',
    etag: `"${archive.sha256.slice(0, 32)}"`,
    lastModified: manifest.createdAt,
    cacheControl: 'private, no-store',
    downloadName: `${manifest.collection.name}.zip`,
  });
}
