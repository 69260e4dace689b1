import type { Deps } from '../../../deps.ts';
import { requireAction } from '../../../core/authz/permissions.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import { audit } from '../../../core/audit.ts';
import { publishEvent } from '../../../core/events/index.ts';
import { AppError, invalidField, notFound } from '../../../core/http/errors.ts';
import { fromJson } from '../../../core/db/json.ts';
import { customerIdColumn } from '../../identity/index.ts';
import { loadAssetFor } from '../access.ts';
import type { AssetWithOrg } from '../assets.repo.ts';
import { storedRenditions, type RenditionName } from '../views/present.ts';
import type { Servable } from './serve.ts';
import { signedUrl } from '../upload/signed-urls.ts';
import { checkEmbeddable } from '../embedded/embed-download.ts';
import { newLinkId, recordContentLinks, type LinkToIssue } from './content-links.ts';
import { exemptPrincipal, rightsGate } from '../rights/gate.ts';

export const DOWNLOAD_TTL_SECONDS = 3600;
/** The signed component of an original with its metadata written in (`?embed=true`). */
export const EMBEDDED_COMPONENT = 'original-embedded';

/** 409 while the content of an asset that exists (reference §7.2: metadata-only until then) has not arrived. */
export function requireArrivedContent(asset: { content_state: string }): void {
  if (asset.content_state === 'pending')
    throw new AppError(
      'conflict',
      'The content of this asset has not arrived yet (contentState: pending): upload it first',
    );
}

export function originalServable(asset: AssetWithOrg): Servable {
  requireArrivedContent(asset);
  if (asset.content_state !== 'available' || !asset.blob_key || asset.size === null) throw notFound('Content');
  return {
    key: asset.blob_key,
    size: asset.size,
    contentType: asset.content_type ?? 'application/octet-stream',
    etag: `"${asset.sha256}"`,
    lastModified: asset.updated_at,
    cacheControl: 'private, max-age=3600',
    downloadName: asset.filename,
  };
}

export function renditionServable(asset: AssetWithOrg, name: string): Servable {
  requireArrivedContent(asset);
  const r = storedRenditions(asset)[name];
  if (!r) throw notFound('Rendition');
  return {
    key: r.key,
    size: r.size,
    contentType: r.contentType,
    etag: r.etag,
    lastModified: asset.updated_at,
    cacheControl: 'private, max-age=86400',
  };
}

/** A time-limited Tessera URL of the original or of one rendition; anyone holding it may fetch it. */
export function contentUrl(
  deps: Deps,
  asset: AssetWithOrg,
  component: string,
  ttlSeconds: number,
  by?: string,
  share?: string,
  link?: string,
): { url: string; expires: number } {
  return signedUrl(deps, 'GET', `/v1/content/${asset.id}/${component}`, ttlSeconds, by, share, link);
}

/**
 * `asset.downloaded` (reference §14.4: "a download starts"): published when the bytes of an original
 * begin to be served (a whole-file GET, or a range from byte 0), not when a link is handed out. The
 * user is the one the link was made for (`by`, signed into it); null for links of an e-mail share.
 */
export async function publishDownloaded(deps: Deps, asset: AssetWithOrg, by: string | null): Promise<void> {
  const now = deps.clock.now();
  const brief = { id: asset.id, filename: asset.filename };
  await deps.db.transaction().execute((trx) =>
    publishEvent(trx, now, {
      orgId: asset.org_id,
      type: 'asset.downloaded',
      actor: by,
      data: { assets: [brief], asset: brief },
    }),
  );
}

function downloadable(asset: AssetWithOrg): void {
  if (asset.deleted_at !== null)
    throw new AppError('conflict', 'The asset is in the recycle bin and cannot be downloaded');
  requireArrivedContent(asset);
  if (asset.content_state !== 'available' || !asset.blob_key) throw notFound('Content');
}

/**
 * GET /v1/asset/{id}/content: a download link of the original (Download permission); asset.downloaded
 * fires when it is used. `embed`: the original with the current metadata written in. The link names
 * a record of its own (`linkId`): DELETE /v1/asset/link/{linkId} ends it.
 */
export async function downloadLink(
  deps: Deps,
  principal: Principal,
  id: string,
  embed = false,
): Promise<{ url: string; linkId: string }> {
  const { asset } = await loadAssetFor(deps.db, principal, id, 'asset.download');
  downloadable(asset);
  if (embed) checkEmbeddable(asset);
  // Refused out of rights under `block` (docs/usage-rights.md): say so now rather than from the link.
  await rightsGate(deps, asset, 'original', exemptPrincipal(principal));
  const component = embed ? EMBEDDED_COMPONENT : 'original';
  const linkId = newLinkId();
  const { url, expires } = contentUrl(
    deps,
    asset,
    component,
    DOWNLOAD_TTL_SECONDS,
    principal.userId,
    undefined,
    linkId,
  );
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    await recordContentLinks(trx, principal, now, [{ id: linkId, asset, component, expiresAtSeconds: expires }]);
    // A sensitive read: who was handed a download link (the download itself is audited when the bytes are served).
    await audit(trx, {
      orgId: principal.orgId,
      at: now,
      actorId: principal.userId,
      action: 'asset.download_link',
      targetType: 'asset',
      targetId: asset.id,
      data: { filename: asset.filename, linkId, ...(embed ? { embedded: true } : {}) },
    });
  });
  return { url, linkId };
}

export interface ExposeItem {
  id: string;
  identifier?: 'objectId' | 'fileId';
  components: { componentType: 'rendition' | 'object'; componentRef: string | string[]; expiration?: number }[];
}

/** POST /v1/asset/expose: time-limited URLs per rendition and original (Download privilege and permission). */
export async function expose(deps: Deps, principal: Principal, items: ExposeItem[]) {
  requireAction(principal, 'asset.download');
  if (items.length === 0) throw invalidField('body', 'Body requires at least single item');
  const out = [];
  const exposed: { id: string; components: string[] }[] = [];
  const issued: LinkToIssue[] = [];
  for (const [i, item] of items.entries()) {
    let asset: AssetWithOrg;
    try {
      asset = (await loadAssetFor(deps.db, principal, item.id, 'asset.download')).asset;
      if (item.identifier === 'fileId' && asset.file_id !== item.id) throw notFound('Asset');
      if (item.identifier === 'objectId' && asset.id !== item.id) throw notFound('Asset');
    } catch (error) {
      if (error instanceof AppError && (error.code === 'not_found' || error.code === 'forbidden')) continue;
      throw error;
    }
    const components = [];
    for (const [j, c] of item.components.entries()) {
      const ttl = c.expiration ?? DOWNLOAD_TTL_SECONDS;
      if (!Number.isInteger(ttl) || ttl < 1 || ttl > 7 * 86400)
        throw invalidField(`body.${i}.components.${j}.expiration`, 'must be 1 to 604800 seconds');
      if (c.componentType === 'object') {
        downloadable(asset);
        const linkId = newLinkId();
        const { url, expires } = contentUrl(deps, asset, 'original', ttl, principal.userId, undefined, linkId);
        issued.push({ id: linkId, asset, component: 'original', expiresAtSeconds: expires });
        components.push({ renditionType: 'original', componentRef: 'original', expires: expires * 1000, url, linkId });
      } else {
        const stored = storedRenditions(asset);
        for (const ref of new Set([c.componentRef].flat())) {
          if (!stored[ref]) continue;
          const linkId = newLinkId();
          const { url, expires } = contentUrl(deps, asset, ref, ttl, undefined, undefined, linkId);
          issued.push({ id: linkId, asset, component: ref, expiresAtSeconds: expires });
          components.push({
            renditionType: ref as RenditionName,
            componentRef: ref,
            expires: expires * 1000,
            url,
            linkId,
          });
        }
      }
    }
    out.push({ id: item.id, identifier: item.identifier ?? 'objectId', components });
    exposed.push({ id: asset.id, components: components.map((c) => c.componentRef) });
  }
  if (out.length === 0) throw new AppError('bad_request', 'No assets found');
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    // Each URL names a record of its own (linkId in the answer): DELETE /v1/asset/link/{linkId} ends it.
    await recordContentLinks(trx, principal, now, issued);
    // A sensitive read: who got time-limited URLs of what (the URLs themselves are capabilities, never recorded).
    await audit(trx, {
      orgId: principal.orgId,
      at: now,
      actorId: principal.userId,
      action: 'asset.exposed',
      targetType: 'asset',
      targetId: exposed[0]!.id,
      objects: exposed.slice(1).map((e) => ({ type: 'asset', id: e.id })),
      data: { assets: exposed },
    });
  });
  return out;
}

/** For the signed content route: the asset an URL names, with no caller (the signature is the permission). */
export async function assetForSignedUrl(deps: Deps, id: string, share?: string): Promise<AssetWithOrg> {
  const asset = await deps.db
    .selectFrom('assets')
    .selectAll('assets')
    .select((eb) => customerIdColumn(deps.db, eb.ref('assets.org_id')).as('customer_id'))
    .where('assets.id', '=', id)
    .executeTakeFirst();
  // A link dies with its source: nothing behind it is served once the asset is in the recycle bin (or gone).
  if (!asset || asset.content_state !== 'available' || asset.deleted_at !== null) throw notFound('Content');
  // A link of an asset share dies with the share: revoked (or gone) is a 410 at once (issue 23, defect 10).
  if (share !== undefined) {
    const row = await deps.db
      .selectFrom('asset_shares')
      .select(['asset_ids', 'revoked_at'])
      .where('id', '=', share)
      .where('org_id', '=', asset.org_id)
      .executeTakeFirst();
    if (!row || row.revoked_at !== null || !fromJson<string[]>(row.asset_ids, []).includes(asset.id))
      throw new AppError('gone', 'This share was revoked');
  }
  return asset;
}
