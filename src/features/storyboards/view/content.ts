import type { Deps } from '../../../deps.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import { AppError } from '../../../core/http/errors.ts';
import { Readable } from 'node:stream';
import {
  createAsset,
  exemptPrincipal,
  insertLink,
  loadAsset,
  presentLegacy,
  receiveSingle,
  rightsGate,
  rightsRefusal,
  storedRenditions,
} from '../../assets/index.ts';
import { collectionAssetsForViewer, loadVisibleCollection } from '../../collections/index.ts';
import { getSavedSearch, runSavedSearchForViewer } from '../../search/index.ts';
import { hiddenAttributesFor } from '../../metadata/index.ts';

/**
 * What story boards need from assets, collections and saved searches, always "as this viewer":
 * the one seam between story boards and the features that own content. Every function answers
 * only with what `viewer` may view; something the viewer cannot see is indistinguishable from
 * something missing (null / left out).
 */
export interface AssetCard {
  id: string;
  filename: string;
  title: string;
  mimeType: string;
  width: number | null;
  height: number | null;
  /** The renditions that exist (imageThumb, imagePreview, imagePreviewLarge, …) → their API URL. */
  renditions: Record<string, string>;
}

export interface AssetList {
  name: string;
  /** Assets of the source this viewer may see, in all. */
  total: number;
  assets: AssetCard[];
}

export interface RenditionContent {
  contentType: string;
  body: Buffer | NodeJS.ReadableStream;
  size?: number;
  etag?: string;
}

export interface NewDerivative {
  /** The asset the derivative is made from (relationship `derivative`). */
  parentAssetId: string;
  filename: string;
  contentType: string;
  bytes: Buffer;
  title: string;
}

export interface ContentSource {
  /** The assets among `ids` the viewer may view, in the order given. */
  visibleAssets(deps: Deps, viewer: Principal, ids: readonly string[]): Promise<AssetCard[]>;
  /** The first `limit` assets of a collection the viewer may see; null when the collection is not visible. */
  collectionAssets(deps: Deps, viewer: Principal, collectionId: string, limit: number): Promise<AssetList | null>;
  /** A saved search re-run with the viewer's own visibility; null when the saved search is not visible. */
  savedSearchAssets(deps: Deps, viewer: Principal, savedSearchId: string, limit: number): Promise<AssetList | null>;
  /**
   * A rendition of an asset the viewer may view (null when missing or not visible), for a share link's
   * audience: out of rights it is never exempt, whoever made the link (docs/usage-rights.md).
   */
  rendition(deps: Deps, viewer: Principal, assetId: string, name: string): Promise<RenditionContent | null>;
  /** The original content of an asset the viewer may view, with its mime type. */
  original(
    deps: Deps,
    viewer: Principal,
    assetId: string,
    maxBytes: number,
  ): Promise<{ filename: string; mimeType: string; bytes: Buffer } | null>;
  /** Creates a new asset as `creator` and relates it to its parent as `derivative`; returns its id. */
  createDerivative(deps: Deps, creator: Principal, input: NewDerivative): Promise<string>;
}

const RENDITIONS = ['imageThumb', 'imagePreview', 'imagePreviewLarge', 'mezzaninePreview'] as const;

const obj = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const int = (v: unknown): number | null => (typeof v === 'number' && Number.isInteger(v) ? v : null);

/** A card from the legacy Asset record (reference §7.1) that search results carry. */
export function cardFromRecord(record: Record<string, unknown>): AssetCard | null {
  const id = str(record.objectId);
  if (!id) return null;
  const renditionsDoc = obj(record.renditions ?? record.renditionsDocument);
  const image = obj(obj(record.technicalMetadata).image_metadata);
  const denormalized = obj(record.metadataDenormalized);
  const filename = str(record.filename) ?? id;
  const renditions: Record<string, string> = {};
  for (const name of RENDITIONS) {
    const url = str(renditionsDoc[name]);
    if (url) renditions[name] = url;
  }
  return {
    id,
    filename,
    title: str(denormalized.title) ?? str(denormalized.name) ?? filename,
    mimeType: str(record.contentType) ?? str(image.mimeType) ?? str(record.mimeType) ?? 'application/octet-stream',
    width: int(renditionsDoc.width) ?? int(image.imageWidth),
    height: int(renditionsDoc.height) ?? int(image.imageHeight),
    renditions,
  };
}

/** Null for "not found or not visible", which the other features signal with a 404 error. */
async function orNull<T>(work: Promise<T>): Promise<T | null> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof AppError && error.status === 404) return null;
    throw error;
  }
}

const cards = (records: Record<string, unknown>[]) =>
  records.map(cardFromRecord).filter((c): c is AssetCard => c !== null);

/** Assets by id that the viewer may view (the assets feature's own permission check), in order. */
async function visibleAssets(deps: Deps, viewer: Principal, ids: readonly string[]): Promise<AssetCard[]> {
  const unique = [...new Set(ids)];
  const loaded = await Promise.all(unique.map((id) => orNull(loadAsset(deps.db, viewer, id))));
  const found = new Map<string, AssetCard>();
  // A card's title may come from metadata: restricted attributes stay hidden from a viewer without Sensitive Data.
  const hidden = await hiddenAttributesFor(deps.db, viewer);
  for (const [i, a] of loaded.entries()) {
    if (!a || a.asset.deleted_at !== null) continue;
    const card = cardFromRecord(
      presentLegacy(deps, a.asset, a.security, undefined, hidden) as unknown as Record<string, unknown>,
    );
    if (card) found.set(unique[i]!, card);
  }
  return ids.map((id) => found.get(id)).filter((c): c is AssetCard => c !== undefined);
}

async function readAll(stream: NodeJS.ReadableStream, maxBytes: number): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const b = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
    size += b.length;
    if (size > maxBytes) return null;
    chunks.push(b);
  }
  return Buffer.concat(chunks);
}

/**
 * Out of rights (docs/usage-rights.md): the original and renditions above preview size are refused
 * (403 rights_expired) unless `exempt`; `watermark` refuses here too (these bytes are reused or
 * cached as they are).
 */
async function refuseOutOfRights(
  deps: Deps,
  exempt: boolean,
  asset: Parameters<typeof rightsGate>[1],
  component: string,
  contentType: string | null,
): Promise<void> {
  const verdict = await rightsGate(deps, asset, component, exempt, contentType);
  if (verdict !== 'serve') throw rightsRefusal(verdict.watermark);
}

async function original(deps: Deps, viewer: Principal, assetId: string, maxBytes: number) {
  const a = await orNull(loadAsset(deps.db, viewer, assetId));
  if (!a || a.asset.deleted_at !== null || !a.asset.blob_key) return null;
  await refuseOutOfRights(deps, exemptPrincipal(viewer), a.asset, 'original', a.asset.content_type);
  const stream = await deps.blobs.get(a.asset.blob_key);
  if (!stream) return null;
  const bytes = await readAll(stream, maxBytes);
  if (!bytes) return null;
  return { filename: a.asset.filename, mimeType: a.asset.content_type ?? 'application/octet-stream', bytes };
}

async function rendition(
  deps: Deps,
  viewer: Principal,
  assetId: string,
  name: string,
): Promise<RenditionContent | null> {
  const a = await orNull(loadAsset(deps.db, viewer, assetId));
  if (!a || a.asset.deleted_at !== null) return null;
  const stored = storedRenditions(a.asset)[name];
  if (!stored) return null;
  // The viewer is a share link's creator, but its audience is whoever holds the link: never exempt
  // (like asset-share links), or an administrator's link would hand out what their own rule withholds.
  await refuseOutOfRights(deps, false, a.asset, name, stored.contentType);
  const body = await deps.blobs.get(stored.key);
  if (!body) return null;
  return { contentType: stored.contentType, body, size: stored.size, etag: stored.etag };
}

async function collectionAssets(
  deps: Deps,
  viewer: Principal,
  collectionId: string,
  limit: number,
): Promise<AssetList | null> {
  const collection = await orNull(loadVisibleCollection(deps.db, viewer, collectionId));
  if (!collection) return null;
  const result = await orNull(collectionAssetsForViewer(deps, viewer, collectionId, { limit }));
  if (!result) return null;
  return { name: collection.row.name, total: result.total, assets: cards(result.records) };
}

async function savedSearchAssets(
  deps: Deps,
  viewer: Principal,
  savedSearchId: string,
  limit: number,
): Promise<AssetList | null> {
  const saved = await orNull(getSavedSearch(deps, viewer, savedSearchId));
  if (!saved) return null;
  const result = await orNull(runSavedSearchForViewer(deps, viewer, savedSearchId, { limit, facets: false }));
  if (!result) return null;
  return { name: saved.name, total: result.total, assets: cards(result.records) };
}

/** Until assets, collections and saved searches exist, every source is empty (nothing visible). */
/**
 * A new asset made by `creator` from bytes (same metadata template and security as its parent),
 * then related to the parent as `derivative` (reference §7.11: primary = parent).
 */
async function createDerivative(deps: Deps, creator: Principal, input: NewDerivative): Promise<string> {
  const parent = await loadAsset(deps.db, creator, input.parentAssetId);
  const created = await createAsset(
    deps,
    creator,
    {
      filename: input.filename,
      contentType: input.contentType,
      filesize: input.bytes.length,
      metadataTemplateId: parent.asset.metadata_template_id,
      metadata: [],
      securityTemplateIds: parent.security.templateIds,
    },
    'legacy',
  );
  if (!created.uploadRowId) throw new Error('the new asset has no upload');
  await receiveSingle(deps, created.uploadRowId, Readable.from([input.bytes]), input.contentType, input.bytes.length);
  const now = deps.clock.now();
  await insertLink(deps.db, {
    orgId: creator.orgId,
    primaryId: parent.asset.id,
    secondaryId: created.asset.id,
    linkType: 'derivative',
    createdBy: creator.userId,
    now,
  });
  return created.asset.id;
}

const wired: ContentSource = {
  visibleAssets,
  collectionAssets,
  savedSearchAssets,
  rendition,
  original,
  createDerivative,
};

/** The content story boards and adaptive templates read: wired to the assets and search features. */
export const content: ContentSource = wired;
