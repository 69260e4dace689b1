import type { Deps } from '../../../deps.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import { fromJson } from '../../../core/db/json.ts';
import type { BoardRow } from '../access.ts';
import { content, type AssetCard } from './content.ts';
import type { Block } from '../storyboards.schemas.ts';

export interface ViewAsset {
  id: string;
  filename: string;
  title: string;
  mimeType: string;
  width: number | null;
  height: number | null;
  renditions: Record<string, string>;
}

export interface ViewBlock {
  id: string;
  type: string;
  text?: string;
  level?: number;
  html?: string;
  caption?: string;
  title?: string;
  url?: string;
  label?: string;
  asset?: ViewAsset;
  assets?: ViewAsset[];
  total?: number;
}

export interface StoryboardView {
  id: string;
  title: string;
  description: string;
  locale: string;
  status: 'draft' | 'published';
  cover: ViewAsset | null;
  lastUpdatedDate: string;
  blocks: ViewBlock[];
}

/** Where a rendition of an asset is fetched from, in the context of the view (API or share link). */
export type RenditionUrl = (assetId: string, rendition: string, apiUrl: string) => string;

/** For authenticated callers: the assets feature's own URL (it checks the caller's permissions). */
export const apiRenditionUrl: RenditionUrl = (_assetId, _rendition, apiUrl) => apiUrl;

const card = (asset: AssetCard, url: RenditionUrl): ViewAsset => ({
  id: asset.id,
  filename: asset.filename,
  title: asset.title,
  mimeType: asset.mimeType,
  width: asset.width,
  height: asset.height,
  renditions: Object.fromEntries(
    Object.entries(asset.renditions).map(([name, apiUrl]) => [name, url(asset.id, name, apiUrl)]),
  ),
});

export function blocksOf(row: BoardRow): Block[] {
  return fromJson<Block[]>(row.blocks, []);
}

/**
 * The story board as `viewer` sees it: every asset, collection and saved search is read with the
 * viewer's own permissions; a block whose source the viewer cannot see is left out entirely (it
 * is indistinguishable from one whose source was deleted), and galleries keep their visible part.
 */
export async function resolveView(
  deps: Deps,
  viewer: Principal,
  row: BoardRow,
  url: RenditionUrl,
): Promise<StoryboardView> {
  const blocks = blocksOf(row);
  const assetIds = new Set<string>();
  if (row.cover_asset_id) assetIds.add(row.cover_asset_id);
  for (const b of blocks) {
    if (b.type === 'asset' && b.assetId) assetIds.add(b.assetId);
    if (b.type === 'gallery') for (const id of b.assetIds ?? []) assetIds.add(id);
  }
  const source = content;
  const visible = new Map(
    (assetIds.size > 0 ? await source.visibleAssets(deps, viewer, [...assetIds]) : []).map((a) => [a.id, a]),
  );
  const resolved = await Promise.all(
    blocks.map(async (b): Promise<ViewBlock | null> => {
      const base = { id: b.id, type: b.type, ...(b.caption !== undefined ? { caption: b.caption } : {}) };
      switch (b.type) {
        case 'heading':
          return { ...base, text: b.text!, level: b.level ?? 2 };
        case 'richText':
          return { ...base, html: b.html! };
        case 'link':
          return { ...base, url: b.url!, ...(b.label !== undefined ? { label: b.label } : {}) };
        case 'divider':
          return base;
        case 'asset': {
          const asset = visible.get(b.assetId!);
          return asset ? { ...base, asset: card(asset, url) } : null;
        }
        case 'gallery': {
          const assets = (b.assetIds ?? []).map((id) => visible.get(id)).filter((a): a is AssetCard => a !== undefined);
          return assets.length > 0 ? { ...base, assets: assets.map((a) => card(a, url)) } : null;
        }
        case 'collection':
        case 'savedSearch': {
          const list =
            b.type === 'collection'
              ? await source.collectionAssets(deps, viewer, b.collectionId!, b.limit ?? 24)
              : await source.savedSearchAssets(deps, viewer, b.savedSearchId!, b.limit ?? 24);
          if (!list) return null;
          return {
            ...base,
            title: b.title ?? list.name,
            total: list.total,
            assets: list.assets.map((a) => card(a, url)),
          };
        }
        default:
          return null;
      }
    }),
  );
  const cover = row.cover_asset_id ? visible.get(row.cover_asset_id) : undefined;
  return {
    id: row.id,
    title: row.title,
    description: row.description,
    locale: row.locale,
    status: row.status,
    cover: cover ? card(cover, url) : null,
    lastUpdatedDate: new Date(row.updated_at).toISOString(),
    blocks: resolved.filter((b): b is ViewBlock => b !== null),
  };
}
