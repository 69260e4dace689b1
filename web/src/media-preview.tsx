import { useState } from 'preact/hooks';
import { api, reason } from './api.ts';
import { extension } from './format.ts';
import { t } from './messages.ts';

/**
 * The large preview: an image with zoom; a player for video and audio; a page viewer for PDFs. Media
 * renditions are used when the asset has them (`videoProxy`, `audioProxy`, page previews named
 * `pdfPage1`, `page-2`…); without them a file the browser can play is played from its original (with
 * the Download permission), and the image preview stands in.
 */

export const IMAGE_RENDITIONS = ['imageThumb', 'imagePreview', 'imagePreviewLarge', 'mezzaninePreview'] as const;
const VIDEO = ['videoProxy', 'videoPreview', 'mp4Proxy'];
const AUDIO = ['audioProxy', 'audioPreview'];
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
  if (
    VIDEO.some((n) => urls[n]) ||
    type.startsWith('video/') ||
    ['mp4', 'webm', 'mov', 'm4v', 'ogv', 'mkv', 'avi'].includes(ext)
  )
    return 'video';
  if (
    AUDIO.some((n) => urls[n]) ||
    type.startsWith('audio/') ||
    ['mp3', 'wav', 'ogg', 'oga', 'm4a', 'aac', 'flac', 'opus'].includes(ext)
  )
    return 'audio';
  if (pageRenditions(urls).length > 0 || type === 'application/pdf' || ext === 'pdf') return 'pdf';
  if (urls.imagePreview || urls.imagePreviewLarge || type.startsWith('image/')) return 'image';
  return 'other';
}

interface PreviewProps {
  objectId: string;
  name: string;
  contentType?: string;
  urls: Record<string, string>;
}

export function Preview(props: PreviewProps) {
  const kind = kindOf(props.contentType, props.name, props.urls);
  if (kind === 'video' || kind === 'audio') return <Player {...props} kind={kind} />;
  if (kind === 'pdf' && pageRenditions(props.urls).length > 0) return <Pages {...props} />;
  return <ImagePreview {...props} pdf={kind === 'pdf'} />;
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
