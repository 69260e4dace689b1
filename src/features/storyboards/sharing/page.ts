import { randomBytes } from 'node:crypto';
import type { ViewAsset, ViewBlock, StoryboardView } from '../view/view.ts';

/**
 * The read-only HTML page of a share link: server-rendered, no scripts at all, one inline style
 * under a nonce, images only from this server; light or dark as the visitor's system prefers, in
 * the web app's colours (the API stores no per-board theme). Rich text was sanitised when saved; everything
 * else is escaped here.
 */
const escape = (value: string) =>
  value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export interface PageSecurity {
  nonce: string;
  csp: string;
}

export function pageSecurity(): PageSecurity {
  const nonce = randomBytes(16).toString('base64');
  const csp = [
    "default-src 'none'",
    `style-src 'nonce-${nonce}'`,
    "img-src 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
  return { nonce, csp };
}

const STYLE = `*{box-sizing:border-box}body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d2430;background:#f5f6f8;line-height:1.55}
header{background:#1d2430;color:#fff;padding:2rem 1rem}header .inner,main{max-width:64rem;margin:0 auto}
header h1{margin:0 0 .5rem;font-size:clamp(1.5rem,4vw,2.4rem);line-height:1.2}header p{margin:0;opacity:.85}
.cover{display:block;width:100%;max-height:28rem;object-fit:cover;margin-top:1rem;border-radius:6px}
main{padding:1rem}section{background:#fff;border-radius:8px;padding:1rem 1.25rem;margin:0 0 1rem;box-shadow:0 1px 3px #0001}
section.divider,section.heading{background:none;box-shadow:none;padding:0}section.heading{margin:1.5rem 0 .5rem}
.rich>:first-child{margin-top:0}.rich>:last-child{margin-bottom:0}hr{border:0;border-top:1px solid #d5d9e0;margin:1.5rem 0}
h2,h3,h4{margin:.25rem 0 .5rem;line-height:1.25}figure{margin:0}figure img{display:block;width:100%;height:auto;border-radius:4px;background:#eef0f3}
figcaption,.caption,.meta{color:#5b6472;font-size:.9rem;margin-top:.4rem}
.grid{display:grid;gap:.75rem;grid-template-columns:repeat(auto-fill,minmax(min(100%,12rem),1fr))}
.grid figure img{aspect-ratio:1/1;object-fit:cover}.noimg{display:flex;align-items:center;justify-content:center;aspect-ratio:1/1;background:#eef0f3;border-radius:4px;color:#5b6472;font-size:.85rem;padding:.5rem;text-align:center;word-break:break-all}
a{color:#0b5cad}.link a{font-weight:600;word-break:break-word}footer{max-width:64rem;margin:0 auto;padding:1rem;color:#5b6472;font-size:.85rem}
form{display:flex;flex-wrap:wrap;gap:.5rem}input[type=password]{flex:1 1 12rem;padding:.6rem;font-size:1rem}button{padding:.6rem 1.2rem;font-size:1rem}
.error{color:#a00;background:#fee;padding:.5rem;border-radius:4px}
@media (max-width:40rem){main{padding:.5rem}section{padding:.75rem}.grid{grid-template-columns:repeat(2,1fr)}}
:root{color-scheme:light dark}
@media (prefers-color-scheme:dark){body{color:#e8eaed;background:#111418}header{background:#1a1e24;border-bottom:1px solid #363d47}
section{background:#1a1e24;box-shadow:0 1px 3px #0008}figcaption,.caption,.meta,footer{color:#a4acb7}a{color:#7aa7f5}hr{border-top-color:#363d47}
figure img,.noimg{background:#242a32}.noimg{color:#a4acb7}.error{color:#ff8a80;background:#3b1d1b}}`;

const WIDTHS: Record<string, number> = {
  imageThumb: 200,
  imagePreview: 700,
  imagePreviewLarge: 1000,
  mezzaninePreview: 3000,
};

function picture(asset: ViewAsset, sizes: string, caption?: string): string {
  const sources = Object.entries(asset.renditions)
    .filter(([name]) => WIDTHS[name] !== undefined)
    .sort((a, b) => WIDTHS[a[0]]! - WIDTHS[b[0]]!);
  const alt = escape(asset.title || asset.filename);
  const img =
    sources.length > 0
      ? `<img src="${escape(sources[Math.min(1, sources.length - 1)]![1])}" srcset="${sources.map(([n, u]) => `${escape(u)} ${WIDTHS[n]}w`).join(', ')}" sizes="${sizes}" alt="${alt}" loading="lazy"${asset.width && asset.height ? ` width="${asset.width}" height="${asset.height}"` : ''}>`
      : `<div class="noimg">${escape(asset.filename)}</div>`;
  return `<figure>${img}${caption ? `<figcaption>${escape(caption)}</figcaption>` : ''}</figure>`;
}

function grid(assets: ViewAsset[]): string {
  return `<div class="grid">${assets.map((a) => picture(a, '(max-width: 40rem) 50vw, 16rem', a.title || a.filename)).join('')}</div>`;
}

function block(b: ViewBlock): string {
  const caption = b.caption ? `<p class="caption">${escape(b.caption)}</p>` : '';
  switch (b.type) {
    case 'heading': {
      const level = Math.min(4, Math.max(2, (b.level ?? 2) + 1));
      return `<section class="heading"><h${level}>${escape(b.text ?? '')}</h${level}></section>`;
    }
    case 'richText':
      return `<section class="rich">${b.html ?? ''}</section>`;
    case 'asset':
      return `<section class="asset">${picture(b.asset!, '(max-width: 64rem) 100vw, 64rem', b.caption)}</section>`;
    case 'gallery':
      return `<section class="gallery">${grid(b.assets ?? [])}${caption}</section>`;
    case 'collection':
    case 'savedSearch':
      return `<section class="${b.type}"><h3>${escape(b.title ?? '')}</h3><p class="meta">${b.total ?? 0} asset${b.total === 1 ? '' : 's'}</p>${grid(b.assets ?? [])}${caption}</section>`;
    case 'link':
      return `<section class="link"><a href="${escape(b.url ?? '')}" rel="noopener noreferrer nofollow" target="_blank">${escape(b.label ?? b.url ?? '')}</a></section>`;
    case 'divider':
      return '<section class="divider"><hr></section>';
    default:
      return '';
  }
}

function layout(title: string, lang: string, body: string, security: PageSecurity): string {
  return `<!doctype html><html lang="${escape(lang)}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer"><meta name="robots" content="noindex,nofollow"><title>${escape(title)}</title><style nonce="${security.nonce}">${STYLE}</style></head>
<body>${body}</body></html>`;
}

export function storyboardPage(view: StoryboardView, jsonUrl: string, security: PageSecurity): string {
  const cover = view.cover
    ? picture(view.cover, '(max-width: 64rem) 100vw, 64rem').replace('<img ', '<img class="cover" ')
    : '';
  return layout(
    view.title,
    view.locale,
    `<header><div class="inner"><h1>${escape(view.title)}</h1>${view.description ? `<p>${escape(view.description)}</p>` : ''}${cover}</div></header>
<main>${view.blocks.map(block).join('\n')}</main>
<footer>Shared with Tessera · updated ${escape(view.lastUpdatedDate.slice(0, 10))} · <a href="${escape(jsonUrl)}">JSON</a></footer>`,
    security,
  );
}

/** An unknown, expired or revoked link (all the same 404): said in words, not as JSON. */
export function gonePage(security: PageSecurity): string {
  return layout(
    'Link not available',
    'en',
    `<header><div class="inner"><h1>This link does not work</h1><p>It may have expired or been revoked, or the story board is no longer shared.</p></div></header>
<main><section><p>Ask the person who sent it to you for a new link.</p></section></main>`,
    security,
  );
}

export function passwordPage(action: string, security: PageSecurity, error?: string): string {
  return layout(
    'Password required',
    'en',
    `<header><div class="inner"><h1>This story board is protected</h1><p>Enter the password you were given.</p></div></header>
<main><section>${error ? `<p class="error" role="alert">${escape(error)}</p>` : ''}<form method="post" action="${escape(action)}">
<input id="password" name="password" type="password" autocomplete="current-password" required aria-label="Password"><button type="submit" id="unlock">Open</button></form></section></main>`,
    security,
  );
}
