import type { Deps } from '../../../deps.ts';
import type { Principal } from '../../../core/authz/principal.ts';
import { content } from './content.ts';
import type { Block, BlockInput } from '../storyboards.schemas.ts';

/**
 * An editor sees a board's block definitions, but not what its sources are when they may not view
 * them: an asset, gallery asset, collection or saved search hidden from the editor is left out of
 * the definition (with its caption and title), and the block is marked `redacted`. Sent back by
 * id without those fields, the block keeps what it holds, so an edit by someone who sees less
 * never loses what they could not see.
 */
export interface HiddenSources {
  assets: ReadonlySet<string>;
  /** collection and saved-search ids */
  sources: ReadonlySet<string>;
}

export async function hiddenSources(
  deps: Deps,
  viewer: Principal,
  blocks: readonly Block[],
  coverAssetId: string | null = null,
): Promise<HiddenSources> {
  const assetIds = new Set<string>(coverAssetId ? [coverAssetId] : []);
  for (const b of blocks) {
    if (b.type === 'asset' && b.assetId) assetIds.add(b.assetId);
    if (b.type === 'gallery') for (const id of b.assetIds ?? []) assetIds.add(id);
  }
  const visible = new Set(
    (assetIds.size > 0 ? await content.visibleAssets(deps, viewer, [...assetIds]) : []).map((a) => a.id),
  );
  const sources = new Set<string>();
  for (const b of blocks) {
    if (b.type === 'collection' && b.collectionId && !(await content.collectionAssets(deps, viewer, b.collectionId, 1)))
      sources.add(b.collectionId);
    if (
      b.type === 'savedSearch' &&
      b.savedSearchId &&
      !(await content.savedSearchAssets(deps, viewer, b.savedSearchId, 1))
    )
      sources.add(b.savedSearchId);
  }
  return { assets: new Set([...assetIds].filter((id) => !visible.has(id))), sources };
}

export function redactBlocks(blocks: readonly Block[], hidden: HiddenSources): Block[] {
  return blocks.map((b) => {
    switch (b.type) {
      case 'asset':
        return b.assetId && hidden.assets.has(b.assetId) ? { id: b.id, type: b.type, redacted: true } : b;
      case 'gallery': {
        const ids = b.assetIds ?? [];
        const shown = ids.filter((id) => !hidden.assets.has(id));
        if (shown.length === ids.length) return b;
        const { caption: _caption, ...rest } = b;
        return { ...(shown.length > 0 ? b : rest), assetIds: shown, redacted: true };
      }
      case 'collection':
      case 'savedSearch': {
        const source = b.type === 'collection' ? b.collectionId : b.savedSearchId;
        return source && hidden.sources.has(source)
          ? { id: b.id, type: b.type, ...(b.limit !== undefined ? { limit: b.limit } : {}), redacted: true }
          : b;
      }
      default:
        return b;
    }
  });
}

/** Inputs with the hidden parts of existing blocks (same id) put back, before they are checked and stored. */
export function keepHidden(
  inputs: readonly BlockInput[],
  before: readonly Block[],
  hidden: HiddenSources,
): BlockInput[] {
  const byId = new Map(before.map((b) => [b.id, b]));
  return inputs.map((input) => {
    const old = input.id !== undefined ? byId.get(input.id) : undefined;
    if (!old || old.type !== input.type) return input;
    const { redacted: _r, ...stored } = old as Block & { redacted?: boolean };
    switch (old.type) {
      case 'asset':
        return old.assetId && hidden.assets.has(old.assetId) && input.assetId === undefined
          ? (stored as BlockInput)
          : input;
      case 'gallery': {
        const kept = (old.assetIds ?? []).filter((id) => hidden.assets.has(id));
        if (kept.length === 0) return input;
        const ids = [...(input.assetIds ?? []), ...kept.filter((id) => !(input.assetIds ?? []).includes(id))];
        return {
          ...input,
          assetIds: ids,
          ...(input.caption === undefined && old.caption !== undefined ? { caption: old.caption } : {}),
        };
      }
      case 'collection':
        return old.collectionId && hidden.sources.has(old.collectionId) && input.collectionId === undefined
          ? (stored as BlockInput)
          : input;
      case 'savedSearch':
        return old.savedSearchId && hidden.sources.has(old.savedSearchId) && input.savedSearchId === undefined
          ? (stored as BlockInput)
          : input;
      default:
        return input;
    }
  });
}
