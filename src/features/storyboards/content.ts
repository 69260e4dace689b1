import type { Deps } from '../../deps.ts';
import type { Principal } from '../../core/authz/principal.ts';

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
  /** Names of the renditions that exist (imageThumb, imagePreview, imagePreviewLarge, …). */
  renditions: string[];
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
  /** A rendition of an asset the viewer may view (null when missing or not visible). */
  rendition(deps: Deps, viewer: Principal, assetId: string, name: string): Promise<RenditionContent | null>;
  /** The original content of an asset the viewer may view, with its mime type. */
  original(deps: Deps, viewer: Principal, assetId: string, maxBytes: number): Promise<{ filename: string; mimeType: string; bytes: Buffer } | null>;
  /** Creates a new asset as `creator` and relates it to its parent as `derivative`; returns its id. */
  createDerivative(deps: Deps, creator: Principal, input: NewDerivative): Promise<string>;
  /** Where an authenticated client fetches a rendition (the assets feature's own URL). */
  renditionUrl(assetId: string, name: string): string;
}

/** Until assets, collections and saved searches exist, every source is empty (nothing visible). */
const empty: ContentSource = {
  visibleAssets: async () => [],
  collectionAssets: async () => null,
  savedSearchAssets: async () => null,
  rendition: async () => null,
  original: async () => null,
  createDerivative: async () => {
    throw new Error('assets are not available');
  },
  renditionUrl: (assetId, name) => `/v1/asset/${assetId}/rendition/${name}`,
};

/** The content story boards and adaptive templates read: wired to the assets and search features. */
export const content: ContentSource = empty;
