import type { Deps } from '../../../deps.ts';
import { requireAction } from '../../../core/authz/permissions.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import { publishEvent } from '../../../core/events/index.ts';
import { randomUUID } from 'node:crypto';
import { fromJson, toJson } from '../../../core/db/json.ts';
import { AppError, invalidField, notFound } from '../../../core/http/errors.ts';
import { loadAssetFor } from '../access.ts';
import type { AssetWithOrg } from '../assets.repo.ts';
import { contentUrl } from '../download/download.service.ts';
import { checkShareMailLimits, queueMail } from './mail-outbox.ts';

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
  requireAction(principal, 'asset.share');
  if (!input.sender?.name) throw invalidField('body.sender', 'Missing Sender');
  if (!input.shareUsers || input.shareUsers.length === 0)
    throw invalidField('body.shareUsers', 'Invalid Share Asset Missing shareUsers');
  if (input.shareUsers.length > 100) throw invalidField('body.shareUsers', 'at most 100 recipients');
  input.shareUsers.forEach((u, i) => {
    if (!u.email || !EMAIL.test(u.email))
      throw invalidField(`body.shareUsers.${i}.email`, 'Bad Data. Recipient information is required.');
  });
  if (!input.assets || input.assets.length === 0)
    throw invalidField('body.assets', 'Invalid input. No Collection or Assets are selected to share.');
  const ttl = input.expiration ?? 7 * 86400;
  if (!Number.isInteger(ttl) || ttl < 60 || ttl > 30 * 86400)
    throw invalidField('body.expiration', 'must be 60 to 2592000 seconds');
  const shared: AssetWithOrg[] = [];
  for (const [i, id] of input.assets.entries()) {
    let asset: AssetWithOrg;
    try {
      asset = (await loadAssetFor(deps.db, principal, id, 'asset.share')).asset;
    } catch (error) {
      // Visible but not shareable (Download and Share needed) is a 403; invisible stays "does not belong".
      if (error instanceof AppError && error.code === 'not_found')
        throw invalidField(`body.assets.${i}`, 'Either the users or assets does not belong to senders customer');
      throw error;
    }
    if (asset.deleted_at !== null || asset.content_state !== 'available')
      throw invalidField(`body.assets.${i}`, 'the asset has no content to share');
    shared.push(asset);
  }
  // The share is a row its links name (signed): revoking it ends every link at once (issue 23, defect 10).
  const shareId = randomUUID();
  const links = shared.map((a) => {
    const { url, expires } = contentUrl(deps, a, 'original', ttl, undefined, shareId);
    return { assetId: a.id, filename: a.filename, url, expiresEpoch: expires * 1000 };
  });
  const now = deps.clock.now();
  const senderName = input.sender.name;
  const recipients = input.shareUsers;
  const mailIds = await deps.db.transaction().execute(async (trx) => {
    const ids: string[] = [];
    await trx
      .insertInto('asset_shares')
      .values({
        id: shareId,
        org_id: principal.orgId,
        created_by: principal.userId,
        asset_ids: toJson(shared.map((a) => a.id)),
        created_at: now,
        expires_at: now + ttl * 1000,
        revoked_at: null,
      })
      .execute();
    // Mails go into the durable outbox with the event: the workers deliver them, retrying while
    // the SMTP server is down or answers a temporary error, so a share never loses its mail.
    if (deps.config.smtpUrl) {
      await checkShareMailLimits(
        trx,
        deps.config,
        { orgId: principal.orgId, senderId: principal.userId },
        recipients.length,
        now,
      );
      const text = [
        `${senderName} shared ${links.length} asset(s) with you.`,
        input.shareMessage ?? '',
        '',
        ...links.map((l) => `${l.filename}: ${l.url}`),
        '',
        `The links stop working on ${new Date(links[0]!.expiresEpoch).toUTCString()}.`,
      ].join('\n');
      const html = `<p>${escape(senderName)} shared ${links.length} asset(s) with you.</p>${input.shareMessage ? `<p>${escape(input.shareMessage)}</p>` : ''}<ul>${links.map((l) => `<li><a href="${escape(l.url)}">${escape(l.filename)}</a></li>`).join('')}</ul>`;
      for (const user of recipients) {
        ids.push(
          await queueMail(trx, now, {
            orgId: principal.orgId,
            senderId: principal.userId,
            to: user.name ? { name: user.name, address: user.email! } : user.email!,
            subject: `${senderName} shared assets with you`,
            text,
            html,
          }),
        );
      }
    }
    await publishEvent(trx, now, {
      orgId: principal.orgId,
      type: 'asset.shared',
      actor: principal.userId,
      data: {
        share: {
          type: 'External',
          recipients: recipients.map((u) => u.email!),
          assets: shared.map((a) => ({ id: a.id, filename: a.filename })),
        },
      },
    });
    return ids;
  });
  if (mailIds.length > 0) deps.jobs.wake();
  const mailQueued = mailIds.length > 0;
  return {
    status: 'success' as const,
    message: mailQueued
      ? 'Message queued for delivery'
      : 'Share links created; no mail was sent because SMTP is not configured (TESSERA_SMTP_URL)',
    mailQueued,
    mailIds,
    links,
    shareId,
  };
}

/**
 * DELETE /v1/asset/share/{shareId}: ends an asset share at once — every link it made (mailed or
 * returned) answers 410. The sharer, or someone who may share every asset in it; anything else,
 * another organization's share included, is a 404 as for a missing one.
 */
export async function revokeAssetShare(deps: Deps, principal: Principal, shareId: string): Promise<void> {
  requireAction(principal, 'asset.share');
  const row = await deps.db
    .selectFrom('asset_shares')
    .selectAll()
    .where('id', '=', shareId.toLowerCase())
    .where('org_id', '=', principal.orgId)
    .executeTakeFirst();
  if (!row) throw notFound('Share');
  if (row.created_by !== principal.userId) {
    for (const id of fromJson<string[]>(row.asset_ids, [])) {
      try {
        await loadAssetFor(deps.db, principal, id, 'asset.share');
      } catch (error) {
        if (error instanceof AppError && error.code === 'not_found') throw notFound('Share');
        if (error instanceof AppError && error.code === 'forbidden')
          throw new AppError(
            'forbidden',
            'Only the sharer, or someone who may share every asset in it, revokes a share',
          );
        throw error;
      }
    }
  }
  if (row.revoked_at !== null) return;
  await deps.db
    .updateTable('asset_shares')
    .set({ revoked_at: deps.clock.now() })
    .where('id', '=', row.id)
    .where('org_id', '=', principal.orgId)
    .execute();
}
