import { useEffect, useState } from 'preact/hooks';
import { api } from './api.ts';
import { t } from './messages.ts';

/** An asset as a story board's view shows it (GET /v1/storyboards/{id}/view). */
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

export interface BoardView {
  id: string;
  title: string;
  description: string;
  locale: string;
  status: 'draft' | 'published';
  cover: ViewAsset | null;
  lastUpdatedDate: string;
  blocks: ViewBlock[];
}

export type Pictures = Record<string, Record<string, string>>;

export function viewAssets(view: BoardView): ViewAsset[] {
  const out: ViewAsset[] = view.cover ? [view.cover] : [];
  for (const b of view.blocks) {
    if (b.asset) out.push(b.asset);
    if (b.assets) out.push(...b.assets);
  }
  return out;
}

/**
 * The view names renditions by their API address, which an <img> cannot fetch with the person's
 * token: the app asks for signed addresses (POST /v1/asset/rendition-urls), as the library does.
 */
export function usePictures(assets: ViewAsset[]): Pictures {
  const [pictures, setPictures] = useState<Pictures>({});
  const key = [...new Set(assets.map((a) => a.id))].sort().join(',');
  useEffect(() => {
    const ids = key ? key.split(',') : [];
    if (ids.length === 0) return;
    let live = true;
    (async () => {
      const all: Pictures = {};
      for (let i = 0; i < ids.length; i += 200) {
        try {
          const answer = await api<{ urls: Pictures }>('POST', '/v1/asset/rendition-urls', {
            ids: ids.slice(i, i + 200),
            renditions: ['imageThumb', 'imagePreview'],
          });
          Object.assign(all, answer.urls);
        } catch {
          // Pictures are a nicety: the names still show.
        }
      }
      if (live) setPictures(all);
    })();
    return () => {
      live = false;
    };
  }, [key]);
  return pictures;
}

function Picture({ asset, pictures, large }: { asset: ViewAsset; pictures: Pictures; large?: boolean }) {
  const urls = pictures[asset.id] ?? {};
  const src = (large ? urls.imagePreview : undefined) ?? urls.imageThumb ?? urls.imagePreview;
  return src ? (
    <img src={src} alt={asset.title} loading="lazy" />
  ) : (
    <span class="noimg" role="img" aria-label={asset.title}>
      {asset.filename}
    </span>
  );
}

function Grid({ assets, pictures }: { assets: ViewAsset[]; pictures: Pictures }) {
  return (
    <ul class="board-grid">
      {assets.map((a) => (
        <li key={a.id}>
          <figure>
            <Picture asset={a} pictures={pictures} />
            <figcaption>{a.title}</figcaption>
          </figure>
        </li>
      ))}
    </ul>
  );
}

/** One block as its viewer sees it; `depth` is the heading level of the board's title. */
export function BlockView({ block, pictures, depth = 1 }: { block: ViewBlock; pictures: Pictures; depth?: number }) {
  switch (block.type) {
    case 'heading': {
      const level = Math.min(6, depth + (block.level ?? 2));
      const H = `h${level}` as 'h2';
      return <H class={`board-heading level-${block.level ?? 2}`}>{block.text}</H>;
    }
    case 'richText':
      // The API sanitised this HTML when it was saved (docs/storyboards.md › Blocks).
      return <div class="board-rich" dangerouslySetInnerHTML={{ __html: block.html ?? '' }} />;
    case 'asset':
      return block.asset ? (
        <figure class="board-asset">
          <Picture asset={block.asset} pictures={pictures} large />
          {block.caption && <figcaption>{block.caption}</figcaption>}
        </figure>
      ) : null;
    case 'gallery':
      return (
        <figure class="board-gallery">
          <Grid assets={block.assets ?? []} pictures={pictures} />
          {block.caption && <figcaption>{block.caption}</figcaption>}
        </figure>
      );
    case 'collection':
    case 'savedSearch': {
      const H = `h${Math.min(6, depth + 2)}` as 'h3';
      return (
        <section class="board-set">
          {block.title && <H>{block.title}</H>}
          <Grid assets={block.assets ?? []} pictures={pictures} />
          <p class="muted small">
            {t('boards.view.shown', { count: block.assets?.length ?? 0, total: block.total ?? 0 })}
            {block.caption ? ` · ${block.caption}` : ''}
          </p>
        </section>
      );
    }
    case 'link':
      return (
        <p class="board-link">
          <a href={block.url} target="_blank" rel="noopener noreferrer">
            {block.label || block.url}
          </a>
        </p>
      );
    case 'divider':
      return <hr class="board-divider" />;
    default:
      return null;
  }
}

/** A whole board as one viewer sees it (the preview). */
export function BoardRender({ view, headingLevel = 2 }: { view: BoardView; headingLevel?: number }) {
  const pictures = usePictures(viewAssets(view));
  const H = `h${headingLevel}` as 'h2';
  return (
    <article class="board-render" lang={view.locale}>
      <header>
        <H>{view.title}</H>
        {view.description && <p>{view.description}</p>}
      </header>
      {view.blocks.length === 0 && <p class="muted">{t('boards.view.empty')}</p>}
      {view.blocks.map((b) => (
        <div class="board-block" key={b.id} data-block-type={b.type}>
          <BlockView block={b} pictures={pictures} depth={headingLevel} />
        </div>
      ))}
    </article>
  );
}
