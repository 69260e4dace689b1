import type { Deps } from '../../../deps.ts';
import { requirePrivileges } from '../../../core/authz/authorize.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import { fromJson, toJson } from '../../../core/db/json.ts';
import { publishEvent } from '../../../core/events/index.ts';
import { AppError, invalidField } from '../../../core/http/errors.ts';
import { newId } from '../../../core/ids.ts';
import { loadAsset } from '../access.ts';
import type { AssetWithOrg } from '../assets.repo.ts';
import { contentUrl } from '../download/download.service.ts';
import { typeFromFilename } from '../upload/content-types.ts';
import { checkShareMailLimits, queueMail } from './mail-outbox.ts';
import { beginUpload, MAX_UPLOAD_PARTS, planUpload, recordUpload, uploadUrls } from '../upload/uploads.service.ts';

/** POST /v1/asset/{id}/technical-metadata: federated assets only (Edit Metadata). */
export async function setTechnicalMetadata(deps: Deps, principal: Principal, id: string, body: Record<string, unknown>): Promise<void> {
  const { asset } = await loadAsset(deps.db, principal, id, 'edit_metadata');
  if (asset.federated !== 1) throw new AppError('bad_request', 'Asset is not federated');
  const merged = { ...fromJson<Record<string, unknown>>(asset.technical_metadata, {}), ...body };
  if (toJson(merged).length > 1_000_000) throw invalidField('body', 'technical metadata may be at most 1 MB of JSON');
  await deps.db.updateTable('assets').set({ technical_metadata: toJson(merged), updated_at: deps.clock.now(), updated_by: principal.userId }).where('id', '=', asset.id).execute();
}

const PREVIEW_TYPES = ['image/gif', 'image/jpeg', 'image/png', 'image/tiff', 'application/pdf'];

/** POST /v1/asset/content/preview: a presigned upload per asset whose bytes replace its preview rendition. */
export async function replacePreview(deps: Deps, principal: Principal, input: { fileIds?: string[]; filename?: string; filesize?: number }) {
  requirePrivileges(principal, 'replace_mezzanine', 'upload');
  if (!input.fileIds || input.fileIds.length === 0) throw invalidField('body.fileIds', 'The following fields are required, but are missing or incorrect ["fileIds"]');
  if (!input.filename) throw invalidField('body.filename', 'The following fields are required, but are missing or incorrect ["filename"]');
  if (input.filesize === undefined) throw invalidField('body.filesize', 'The following fields are required, but are missing or incorrect ["filesize"]');
  const type = typeFromFilename(input.filename);
  if (!type || !PREVIEW_TYPES.includes(type)) throw invalidField('body.filename', 'a preview must be a GIF, JPEG, PNG, TIFF or PDF file');
  // Every asset named gets its own upload URLs: together no more than one upload may have.
  if (planUpload(deps, input.filesize).partCount * input.fileIds.length > MAX_UPLOAD_PARTS) {
    throw invalidField('body.filesize', `with ${input.fileIds.length} files, must be at most ${Math.floor(MAX_UPLOAD_PARTS / input.fileIds.length) * deps.config.uploadPartSizeBytes} bytes (${MAX_UPLOAD_PARTS} upload parts in all)`);
  }
  const assets: AssetWithOrg[] = [];
  for (const id of input.fileIds) {
    try {
      const { asset } = await loadAsset(deps.db, principal, id);
      if (asset.content_state !== 'available' || !asset.blob_key) throw new Error('no content');
      assets.push(asset);
    } catch {
      throw invalidField('body.fileIds', 'Provided fileIds are invalid');
    }
  }
  const uploads = [];
  for (const asset of assets) {
    const now = deps.clock.now();
    const spec = { id: newId(now), orgId: principal.orgId, assetId: asset.id, target: 'preview' as const, filename: input.filename, expectedSize: input.filesize, expectedSha256: null, contentType: type, createdBy: principal.userId, plan: planUpload(deps, input.filesize) };
    const s3 = await beginUpload(deps, spec);
    const row = await deps.db.transaction().execute((trx) => recordUpload(deps, trx, now, spec, s3));
    uploads.push({ fileId: asset.file_id, objectId: asset.id, ...(await uploadUrls(deps, row)) });
  }
  return { status: 'success' as const, message: 'Upload the preview to the URL; the preview rendition is replaced when it arrives', uploads };
}

export interface ShareInput {
  sender?: { name?: string };
  shareUsers?: { email?: string; name?: string }[];
  assets?: string[];
  shareMessage?: string;
  expiration?: number;
}

const EMAIL = /^[^\s@<>(),;:"]+@[^\s@<>(),;:"]+\.[^\s@<>(),;:"]+$/;
const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * POST /v1/asset/share: a time-limited link per asset (Download permission), a mail per recipient
 * queued in the durable outbox when SMTP is configured (TESSERA_SMTP_URL); otherwise the links come
 * back and the answer says no mail was sent.
 */
export async function shareAssets(deps: Deps, principal: Principal, input: ShareInput) {
  if (!input.sender?.name) throw invalidField('body.sender', 'Missing Sender');
  if (!input.shareUsers || input.shareUsers.length === 0) throw invalidField('body.shareUsers', 'Invalid Share Asset Missing shareUsers');
  if (input.shareUsers.length > 100) throw invalidField('body.shareUsers', 'at most 100 recipients');
  input.shareUsers.forEach((u, i) => {
    if (!u.email || !EMAIL.test(u.email)) throw invalidField(`body.shareUsers.${i}.email`, 'Bad Data. Recipient information is required.');
  });
  if (!input.assets || input.assets.length === 0) throw invalidField('body.assets', 'Invalid input. No Collection or Assets are selected to share.');
  const ttl = input.expiration ?? 7 * 86400;
  if (!Number.isInteger(ttl) || ttl < 60 || ttl > 30 * 86400) throw invalidField('body.expiration', 'must be 60 to 2592000 seconds');
  const shared: AssetWithOrg[] = [];
  for (const [i, id] of input.assets.entries()) {
    let asset: AssetWithOrg;
    try {
      asset = (await loadAsset(deps.db, principal, id, 'download')).asset;
    } catch (error) {
      if (error instanceof AppError && (error.code === 'not_found' || error.code === 'forbidden')) throw invalidField(`body.assets.${i}`, 'Either the users or assets does not belong to senders customer');
      throw error;
    }
    if (asset.deleted_at !== null || asset.content_state !== 'available') throw invalidField(`body.assets.${i}`, 'the asset has no content to share');
    shared.push(asset);
  }
  const links = shared.map((a) => {
    const { url, expires } = contentUrl(deps, a, 'original', ttl);
    return { assetId: a.id, filename: a.filename, url, expiresEpoch: expires * 1000 };
  });
  const now = deps.clock.now();
  const senderName = input.sender.name;
  const recipients = input.shareUsers;
  const mailIds = await deps.db.transaction().execute(async (trx) => {
    const ids: string[] = [];
    // Mails go into the durable outbox with the event: the workers deliver them, retrying while
    // the SMTP server is down or answers a temporary error, so a share never loses its mail.
    if (deps.config.smtpUrl) {
      await checkShareMailLimits(trx, deps.config, { orgId: principal.orgId, senderId: principal.userId }, recipients.length, now);
      const text = [`${senderName} shared ${links.length} asset(s) with you.`, input.shareMessage ?? '', '', ...links.map((l) => `${l.filename}: ${l.url}`), '', `The links stop working on ${new Date(links[0]!.expiresEpoch).toUTCString()}.`].join('\n');
      const html = `<p>${escape(senderName)} shared ${links.length} asset(s) with you.</p>${input.shareMessage ? `<p>${escape(input.shareMessage)}</p>` : ''}<ul>${links.map((l) => `<li><a href="${escape(l.url)}">${escape(l.filename)}</a></li>`).join('')}</ul>`;
      for (const user of recipients) {
        ids.push(await queueMail(trx, now, { orgId: principal.orgId, senderId: principal.userId, to: user.name ? { name: user.name, address: user.email! } : user.email!, subject: `${senderName} shared assets with you`, text, html }));
      }
    }
    await publishEvent(trx, now, {
      orgId: principal.orgId, type: 'asset.shared', actor: principal.userId,
      data: { share: { type: 'External', recipients: recipients.map((u) => u.email!), assets: shared.map((a) => ({ id: a.id, filename: a.filename })) } },
    });
    return ids;
  });
  if (mailIds.length > 0) deps.jobs.wake();
  const mailQueued = mailIds.length > 0;
  return {
    status: 'success' as const,
    message: mailQueued ? 'Message queued for delivery' : 'Share links created; no mail was sent because SMTP is not configured (TESSERA_SMTP_URL)',
    mailQueued, mailIds, links,
  };
}
