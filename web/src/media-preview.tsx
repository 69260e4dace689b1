import { useEffect, useRef, useState } from 'preact/hooks';
import { api, reason } from './api.ts';
import { extension } from './format.ts';
import { t } from './messages.ts';

/**
 * The large preview: an image with zoom; a player for video and audio; a page viewer for PDFs. Media
 * renditions are used when the asset has them (`videoProxy`, `audioProxy`); without them a file the
 * browser can play is played from its original (with the Download permission), and the image preview
 * stands in. PDF pages are signed URLs of `page-{n}-{size}` (POST /v1/asset/rendition-urls), rendered
 * by the API on first request, up to the page count of the asset's technical metadata.
 */

export const IMAGE_RENDITIONS = ['imageThumb', 'imagePreview', 'imagePreviewLarge', 'mezzaninePreview'] as const;
// Playable renditions only (`videoPreview` is an animated WebP picture, not a video).
const VIDEO = ['videoProxy', 'mp4Proxy'];
const AUDIO = ['audioProxy'];
const PAGE = /^(?:pdfPage|pdf-page|page)[-_]?(\d+)$/i;

/** The rendition names of an asset record (`renditions` holds names → URLs, and width/height). */
export function renditionNames(renditions: Record<string, unknown> | undefined): string[] {
  return Object.entries(renditions ?? {})
    .filter(([k, v]) => typeof v === 'string' && k !== 'width' && k !== 'height')
    .map(([k]) => k);
}

export function pageRenditions(urls: Record<string, string>): string[] {
  return Object.keys(urls)
    .filter((k) => PAGE.test(k))
    .sort((a, b) => Number(PAGE.exec(a)![1]) - Number(PAGE.exec(b)![1]));
}

type Kind = 'video' | 'audio' | 'pdf' | 'image' | 'other';

export function kindOf(contentType: string | undefined, filename: string, urls: Record<string, string>): Kind {
  const type = (contentType ?? '').toLowerCase();
  const ext = extension(filename).toLowerCase();
  // What the server made says most: an M4A is stored as video/mp4 (its container) but gets an audio proxy.
  if (VIDEO.some((n) => urls[n])) return 'video';
  if (AUDIO.some((n) => urls[n])) return 'audio';
  if (type.startsWith('audio/') || ['mp3', 'wav', 'ogg', 'oga', 'm4a', 'aac', 'flac', 'opus'].includes(ext))
    return 'audio';
  if (type.startsWith('video/') || ['mp4', 'webm', 'mov', 'm4v', 'ogv', 'mkv', 'avi'].includes(ext)) return 'video';
  if (pageRenditions(urls).length > 0 || type === 'application/pdf' || ext === 'pdf') return 'pdf';
  if (urls.imagePreview || urls.imagePreviewLarge || type.startsWith('image/')) return 'image';
  return 'other';
}

interface PreviewProps {
  objectId: string;
  name: string;
  contentType?: string;
  urls: Record<string, string>;
  /** The PDF's page count (technicalMetadata.document_metadata.pageCount), once analysed. */
  pageCount?: number;
  /** renditionsState of the asset: `pending` while it is analysed, `failed` when it could not be read. */
  renditionsState?: string | null;
  /** technicalMetadata.renditionError: why the file could not be read. */
  renditionError?: string;
}

export function Preview(props: PreviewProps) {
  const kind = kindOf(props.contentType, props.name, props.urls);
  if (kind === 'video' || kind === 'audio') return <Player {...props} kind={kind} />;
  if (kind === 'pdf' && pageRenditions(props.urls).length > 0) return <Pages {...props} />;
  if (kind === 'pdf' && props.pageCount && props.pageCount > 0)
    return <PdfViewer {...props} pageCount={props.pageCount} />;
  if (kind === 'pdf' && (props.renditionsState === 'failed' || props.renditionsState === 'pending'))
    return <PdfState {...props} />;
  return <ImagePreview {...props} pdf={kind === 'pdf'} />;
}

/** A PDF not analysed yet, or one that could not be read: said in words, with the original to open. */
function PdfState({ objectId, renditionsState, renditionError }: PreviewProps) {
  const failed = renditionsState === 'failed';
  return (
    <div class="pdf-viewer">
      <div class="preview-box">
        {failed ? (
          <p class="error" role="alert">
            {t('asset.pdfUnreadable')}
            {renditionError && <span class="small block">{renditionError}</span>}
          </p>
        ) : (
          <p class="muted" role="status">
            {t('asset.pdfPending')}
          </p>
        )}
      </div>
      <div class="row zoom">
        <OpenOriginal objectId={objectId} />
      </div>
    </div>
  );
}

type PageZoom = 'fit' | 'actual';
const STRIP = 10;

/**
 * The page viewer of a PDF: one page large (fit to the box, or at 100% of its mezzanine size), previous
 * and next, a page number field, a strip of thumbnails around the page, and the original to open. Keys:
 * ← and → on the page turn it; the new page is announced.
 */
function PdfViewer({ objectId, name, pageCount }: PreviewProps & { pageCount: number }) {
  const [page, setPage] = useState(1);
  const [typed, setTyped] = useState('1');
  const [zoom, setZoom] = useState<PageZoom>('fit');
  const [signed, setSigned] = useState<Record<string, string>>({});
  const [loaded, setLoaded] = useState<Record<string, 'ok' | 'error'>>({});
  const [linkError, setLinkError] = useState<string | null>(null);
  const asked = useRef(new Set<string>());
  const first = Math.max(1, Math.min(page - Math.floor(STRIP / 2), pageCount - STRIP + 1));
  const strip = Array.from({ length: Math.min(STRIP, pageCount) }, (_, i) => first + i);
  const large = `page-${page}-${zoom === 'fit' ? 'large' : 'mezzanine'}`;

  // Signed URLs of the page shown and the strip's thumbnails, asked for once each.
  useEffect(() => {
    const names = [large, ...strip.map((n) => `page-${n}-thumbnail`)].filter((n) => !asked.current.has(n));
    if (names.length === 0) return;
    for (const n of names) asked.current.add(n);
    let cancelled = false;
    api<{ urls: Record<string, Record<string, string>> }>('POST', '/v1/asset/rendition-urls', {
      ids: [objectId],
      renditions: names,
    }).then(
      (answer) => {
        if (!cancelled) setSigned((before) => ({ ...before, ...(answer.urls[objectId] ?? {}) }));
      },
      (e) => {
        for (const n of names) asked.current.delete(n);
        if (!cancelled) setLinkError(reason(e));
      },
    );
    return () => {
      cancelled = true;
    };
  }, [objectId, large, first]);

  const go = (n: number) => {
    const next = Math.min(pageCount, Math.max(1, n));
    setPage(next);
    setTyped(String(next));
  };
  const src = signed[large];
  const state = src ? (loaded[src] ?? 'loading') : linkError ? 'error' : 'loading';
  const pageOf = t('asset.pageOf', { n: page, count: pageCount });
  return (
    <div class="pdf-viewer">
      <section
        class={`preview-box page-box${zoom === 'actual' ? ' zoomed' : ''}`}
        // biome-ignore lint/a11y/noNoninteractiveTabindex: the page scrolls at 100% (keyboard scrolling needs focus)
        tabIndex={0}
        aria-label={t('asset.pageBox', { name })}
        onKeyDown={(e) => {
          if (e.key === 'ArrowRight' || e.key === 'PageDown') {
            e.preventDefault();
            go(page + 1);
          } else if (e.key === 'ArrowLeft' || e.key === 'PageUp') {
            e.preventDefault();
            go(page - 1);
          }
        }}
      >
        {src && state !== 'error' && (
          <img
            key={src}
            src={src}
            class={`page-image${zoom === 'actual' ? ' actual' : ''}${state === 'loading' ? ' loading' : ''}`}
            alt={t('asset.page', { n: page, count: pageCount, name })}
            onLoad={() => setLoaded((before) => ({ ...before, [src]: 'ok' }))}
            onError={() => setLoaded((before) => ({ ...before, [src]: 'error' }))}
          />
        )}
        {state === 'loading' && (
          <p class="muted page-status" role="status">
            {t('asset.pageLoading', { n: page })}
          </p>
        )}
        {state === 'error' && (
          <p class="error page-status" role="alert">
            {linkError ?? t('asset.pageError', { n: page })}
          </p>
        )}
      </section>
      <p class="visually-hidden" aria-live="polite">
        {pageOf}
      </p>
      <div class="row zoom page-controls">
        <button type="button" disabled={page <= 1} onClick={() => go(page - 1)}>
          {t('asset.pagePrevious')}
        </button>
        <form
          class="page-jump"
          onSubmit={(e) => {
            e.preventDefault();
            const n = Number.parseInt(typed, 10);
            if (Number.isFinite(n)) go(n);
            else setTyped(String(page));
          }}
        >
          <label for="page-number">{t('asset.pageLabel')}</label>
          <input
            id="page-number"
            type="number"
            inputMode="numeric"
            min={1}
            max={pageCount}
            value={typed}
            aria-describedby="page-count"
            onInput={(e) => setTyped(e.currentTarget.value)}
            onChange={(e) => {
              const n = Number.parseInt(e.currentTarget.value, 10);
              if (Number.isFinite(n)) go(n);
            }}
          />
          <span id="page-count">{t('asset.pageCount', { count: pageCount })}</span>
        </form>
        <button type="button" disabled={page >= pageCount} onClick={() => go(page + 1)}>
          {t('asset.pageNext')}
        </button>
        {/* biome-ignore lint/a11y/useSemanticElements: a toolbar button group; a fieldset would need a visible legend */}
        <div class="segmented" role="group" aria-label={t('asset.pageZoom')}>
          <button type="button" aria-pressed={zoom === 'fit'} onClick={() => setZoom('fit')}>
            {t('asset.zoomReset')}
          </button>
          <button type="button" aria-pressed={zoom === 'actual'} onClick={() => setZoom('actual')}>
            100%
          </button>
        </div>
        <OpenOriginal objectId={objectId} />
      </div>
      {pageCount > 1 && (
        <nav aria-label={t('asset.pageStrip')}>
          <ol class="page-strip">
            {strip.map((n) => {
              const thumb = signed[`page-${n}-thumbnail`];
              return (
                <li key={n}>
                  <button
                    type="button"
                    class="page-thumb"
                    aria-current={n === page ? 'page' : undefined}
                    aria-label={t('asset.pageGo', { n })}
                    onClick={() => go(n)}
                  >
                    {thumb ? <img src={thumb} alt="" loading="lazy" /> : <span class="page-thumb-blank" />}
                    <span aria-hidden="true">{n}</span>
                  </button>
                </li>
              );
            })}
          </ol>
        </nav>
      )}
    </div>
  );
}

function ImagePreview({ objectId, name, urls, pdf }: PreviewProps & { pdf: boolean }) {
  const [zoom, setZoom] = useState(1);
  const large = urls.imagePreviewLarge ?? urls.imagePreview;
  const full = urls.mezzaninePreview;
  if (!large) {
    return (
      <div>
        <div class="preview-box">
          <span class="filetype">{extension(name) || t('asset.noPreview')}</span>
        </div>
        {pdf && <OpenOriginal objectId={objectId} />}
      </div>
    );
  }
  return (
    <div>
      <div class={`preview-box${zoom > 1 ? ' zoomed' : ''}`} tabIndex={zoom > 1 ? 0 : -1}>
        {/* biome-ignore lint/a11y/useKeyWithClickEvents: a mouse shortcut; the Zoom buttons below are the keyboard way */}
        <img
          src={zoom > 1 && full ? full : large}
          alt={t('asset.preview', { name })}
          style={zoom > 1 ? `width:${zoom * 100}%;max-width:none;max-height:none` : undefined}
          onClick={() => setZoom(zoom > 1 ? 1 : 2)}
        />
      </div>
      <div class="row zoom">
        <button type="button" onClick={() => setZoom(Math.min(8, zoom * 2))}>
          {t('asset.zoomIn')}
        </button>
        <button type="button" disabled={zoom <= 1} onClick={() => setZoom(Math.max(1, zoom / 2))}>
          {t('asset.zoomOut')}
        </button>
        <button type="button" disabled={zoom === 1} onClick={() => setZoom(1)}>
          {t('asset.zoomReset')}
        </button>
        <span class="muted">{Math.round(zoom * 100)}%</span>
        {pdf && <OpenOriginal objectId={objectId} />}
      </div>
    </div>
  );
}

/** A link to the original (the browser's own PDF viewer), fetched with the Download permission when asked for. */
function OpenOriginal({ objectId }: { objectId: string }) {
  const [url, setUrl] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  if (url)
    return (
      <a class="button" href={url} target="_blank" rel="noopener noreferrer">
        {t('asset.openOriginal')}
      </a>
    );
  return (
    <>
      <button
        type="button"
        onClick={async () => {
          try {
            setUrl((await api<{ presignedURL: string }>('GET', `/v1/asset/${objectId}/content`)).presignedURL);
          } catch (e) {
            setError(reason(e));
          }
        }}
      >
        {t('asset.linkOriginal')}
      </button>
      {error && (
        <span class="field-error" role="alert">
          {error}
        </span>
      )}
    </>
  );
}

function Player({ objectId, name, urls, kind }: PreviewProps & { kind: 'video' | 'audio' }) {
  const proxy = (kind === 'video' ? VIDEO : AUDIO).map((n) => urls[n]).find(Boolean);
  const [original, setOriginal] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const src = proxy ?? original;
  const poster = urls.imagePreviewLarge ?? urls.imagePreview;
  const label = t('asset.player', { name });
  return (
    <div class="player">
      {src ? (
        kind === 'video' ? (
          // biome-ignore lint/a11y/useMediaCaption: the asset's own file; no captions exist to offer
          <video class="media" controls preload="metadata" src={src} poster={poster} aria-label={label} />
        ) : (
          // biome-ignore lint/a11y/useMediaCaption: the asset's own file; no captions exist to offer
          <audio class="media" controls preload="metadata" src={src} aria-label={label} />
        )
      ) : poster ? (
        <div class="preview-box">
          <img src={poster} alt={t('asset.preview', { name })} />
        </div>
      ) : (
        <div class="preview-box">
          <span class="filetype">{extension(name) || kind}</span>
        </div>
      )}
      {!src && (
        <div class="row zoom">
          <button
            type="button"
            class="primary"
            onClick={async () => {
              try {
                setOriginal((await api<{ presignedURL: string }>('GET', `/v1/asset/${objectId}/content`)).presignedURL);
              } catch (e) {
                setError(reason(e));
              }
            }}
          >
            {t(kind === 'video' ? 'asset.playVideo' : 'asset.playAudio')}
          </button>
          <span class="muted small">{t('asset.noProxy')}</span>
        </div>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}

function Pages({ name, urls }: PreviewProps) {
  const pages = pageRenditions(urls);
  const [index, setIndex] = useState(0);
  const page = Math.min(index, pages.length - 1);
  return (
    <div class="pages">
      <div class="preview-box">
        <img src={urls[pages[page]!]} alt={t('asset.page', { n: page + 1, count: pages.length, name })} />
      </div>
      <div class="row zoom">
        <button type="button" disabled={page === 0} onClick={() => setIndex(page - 1)}>
          {t('asset.pagePrevious')}
        </button>
        <span aria-live="polite">{t('asset.pageOf', { n: page + 1, count: pages.length })}</span>
        <button type="button" disabled={page >= pages.length - 1} onClick={() => setIndex(page + 1)}>
          {t('asset.pageNext')}
        </button>
      </div>
    </div>
  );
}
