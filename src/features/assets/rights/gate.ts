import { sql } from 'kysely';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { DbOrTrx } from '../../../core/db/connect.ts';
import { mayPerform } from '../../../core/authz/permissions.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import { AppError } from '../../../core/http/errors.ts';
import { contentDisposition } from '../../../core/http/content-disposition.ts';
import type { Deps } from '../../../deps.ts';
import { enabledUserPrivilegesOf, parsePrivileges } from '../../identity/index.ts';
import { applyTransformations } from '../transform/transform-ops.ts';
import { isImage } from '../upload/content-types.ts';
import { rightsOf } from './rights.ts';

/**
 * What happens to downloads of an asset whose usage right has expired or has not started yet
 * (docs/usage-rights.md, "Downloads out of rights"): an organization setting, `allow` by default.
 * Checked when the bytes are served — by every route and link that serves them — and read afresh each
 * time, so a changed expiry date or setting counts at once.
 */
export const EXPIRED_DOWNLOAD_MODES = ['allow', 'block', 'watermark'] as const;
export type ExpiredDownloads = (typeof EXPIRED_DOWNLOAD_MODES)[number];

/** Renditions anyone who may view the asset still gets: the asset can be found and judged. */
export const UNGATED_RENDITIONS: ReadonlySet<string> = new Set(['imageThumb', 'imagePreview']);

/** The text drawn on images under `watermark`. */
export const RIGHTS_WATERMARK_TEXT = 'Usage rights expired';

export interface OutOfRights {
  reason: 'expired' | 'not_started';
  /** The expiry date (the last day of the right) or the start date, ISO yyyy-MM-dd. */
  date: string;
  license: string | null;
}

const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * Whether the asset's right is outside its dates today (UTC): expired (the expiry date, its last
 * day, is before today — as the expiry sweep counts) or not started (the start date is after today).
 */
export function outOfRights(asset: { metadata_denormalized: string }, now: number): OutOfRights | null {
  const rights = rightsOf(asset.metadata_denormalized);
  if (!rights) return null;
  const today = isoDay(now);
  if (rights.expiryDate && rights.expiryDate < today)
    return { reason: 'expired', date: rights.expiryDate, license: rights.license };
  if (rights.startDate && rights.startDate > today)
    return { reason: 'not_started', date: rights.startDate, license: rights.license };
  return null;
}

/** The organization's setting (no row: `allow`). */
export async function expiredDownloadsOf(db: DbOrTrx, orgId: string): Promise<ExpiredDownloads> {
  const row = await db
    .selectFrom('org_rights_settings')
    .select('expired_downloads')
    .where('org_id', '=', orgId)
    .executeTakeFirst();
  const mode = row?.expired_downloads;
  return (EXPIRED_DOWNLOAD_MODES as readonly string[]).includes(mode ?? '') ? (mode as ExpiredDownloads) : 'allow';
}

/** Holders of this row's privileges download out of rights as before (docs/usage-rights.md). */
export function exemptPrincipal(principal: Principal): boolean {
  return mayPerform(principal, 'asset.download_out_of_rights');
}

/** For a signed link made for a user (`by`): whether that user, as they are now, is exempt. */
export async function exemptUser(db: DbOrTrx, orgId: string, userId: string | null | undefined): Promise<boolean> {
  if (!userId) return false;
  const row = await enabledUserPrivilegesOf(db, sql.val(userId), sql.val(orgId)).executeTakeFirst();
  if (!row) return false;
  return mayPerform({ privileges: parsePrivileges(row.privileges) }, 'asset.download_out_of_rights');
}

export function rightsRefusal(out: OutOfRights, asset?: { id: string; filename: string }): AppError {
  const what =
    out.reason === 'expired'
      ? `its usage right${out.license ? ` (${out.license})` : ''} expired on ${out.date} (Expiration Date)`
      : `its usage right${out.license ? ` (${out.license})` : ''} starts on ${out.date} (Rights Start Date)`;
  return new AppError(
    'rights_expired',
    `${asset ? `The asset ${asset.filename} (${asset.id})` : 'This asset'} cannot be downloaded: ${what}, and the organization refuses downloads out of rights (thumbnails and previews stay available)`,
  );
}

/**
 * For public serving with no one to exempt (the CDN edge's origin): the refusal when the asset is out
 * of rights and the organization does not allow it (`watermark` refuses too: the edge caches publicly).
 */
export async function refusalOutOfRights(
  db: DbOrTrx,
  orgId: string,
  asset: { metadata_denormalized: string },
  now: number,
): Promise<AppError | null> {
  const out = outOfRights(asset, now);
  if (!out) return null;
  return (await expiredDownloadsOf(db, orgId)) === 'allow' ? null : rightsRefusal(out);
}

/**
 * For a file holding several assets served with no one to exempt (a collection share's zip): the
 * refusal naming the first asset out of rights, when the organization does not allow them.
 */
export async function refusalAmong(
  db: DbOrTrx,
  orgId: string,
  assetIds: readonly string[],
  now: number,
): Promise<AppError | null> {
  if (assetIds.length === 0 || (await expiredDownloadsOf(db, orgId)) === 'allow') return null;
  const rows = await db
    .selectFrom('assets')
    .select(['id', 'filename', 'metadata_denormalized'])
    .where('org_id', '=', orgId)
    .where('id', 'in', [...assetIds])
    .orderBy('id')
    .execute();
  for (const row of rows) {
    const out = outOfRights(row, now);
    if (out) return rightsRefusal(out, row);
  }
  return null;
}

export type RightsVerdict = 'serve' | { watermark: OutOfRights };

/**
 * The check every byte-serving path makes. `component` is `original` (or any file made from it) or a
 * rendition name; thumbnails and previews always pass. `exempt` is asked only when the asset is out of
 * rights and the organization does not allow it. Throws 403 `rights_expired` under `block` (and under
 * `watermark` for what cannot carry one: not an image); answers `{watermark}` for an image under
 * `watermark`.
 */
export async function rightsGate(
  deps: Deps,
  asset: { org_id: string; metadata_denormalized: string; content_type: string | null },
  component: string,
  exempt: boolean | (() => Promise<boolean>),
  contentType: string | null = asset.content_type,
): Promise<RightsVerdict> {
  if (UNGATED_RENDITIONS.has(component)) return 'serve';
  const out = outOfRights(asset, deps.clock.now());
  if (!out) return 'serve';
  const mode = await expiredDownloadsOf(deps.db, asset.org_id);
  if (mode === 'allow') return 'serve';
  if (typeof exempt === 'boolean' ? exempt : await exempt()) return 'serve';
  if (mode === 'watermark' && isImage(contentType) && contentType !== 'image/svg+xml') return { watermark: out };
  throw rightsRefusal(out);
}

async function readAll(deps: Deps, key: string): Promise<Buffer> {
  const stream = await deps.blobs.get(key);
  if (!stream) throw new AppError('not_found', 'Content not found');
  const chunks: Buffer[] = [];
  for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/**
 * Sends a stored image with a visible "Usage rights expired" text across it (the transformations'
 * text watermark, sharp). Made per request and never cached (`no-store`); no ranges.
 */
export async function serveWatermarked(
  deps: Deps,
  _request: FastifyRequest,
  reply: FastifyReply,
  item: { key: string; downloadName?: string },
): Promise<FastifyReply> {
  const input = await readAll(deps, item.key);
  const out = await applyTransformations(
    input,
    [{ type: 'watermark', text: RIGHTS_WATERMARK_TEXT, gravity: 'center', opacity: 0.7, scale: 0.8 }],
    { maxPixels: deps.config.renditionMaxPixels, timeoutSeconds: deps.config.renditionTimeoutSeconds },
    () => Promise.reject(new Error('no image watermark here')),
  );
  reply
    .header('cache-control', 'no-store')
    .header('x-content-type-options', 'nosniff')
    .header('x-tessera-rights', 'expired-watermarked');
  if (item.downloadName) reply.header('content-disposition', contentDisposition(item.downloadName));
  return reply.type(out.contentType).header('content-length', out.data.length).send(out.data);
}
