import { randomBytes } from 'node:crypto';
import type { FieldDefinition } from './render.ts';
import { own } from '../../core/lookup.ts';

/** The launch page: a form for the fields, the rendered result, a save button. No scripts. */
const escape = (value: string) =>
  value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export function launchSecurity(): { nonce: string; csp: string } {
  const nonce = randomBytes(16).toString('base64');
  return {
    nonce,
    csp: [
      "default-src 'none'",
      `style-src 'nonce-${nonce}'`,
      "img-src 'self'",
      "frame-src 'self'",
      "form-action 'self'",
      "frame-ancestors 'none'",
      "base-uri 'none'",
    ].join('; '),
  };
}

/** Served with rendered HTML templates: a sandbox, so a template's markup runs nothing and reaches nothing. */
export const RENDERED_HTML_CSP =
  "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:";

const STYLE = `*{box-sizing:border-box}body{margin:0;font-family:system-ui,sans-serif;background:#f5f6f8;color:#1d2430}
main{max-width:70rem;margin:0 auto;padding:1rem;display:grid;gap:1rem;grid-template-columns:minmax(0,22rem) minmax(0,1fr)}
@media (max-width:48rem){main{grid-template-columns:1fr}}h1{font-size:1.3rem;margin:0 0 .5rem}
section{background:#fff;border-radius:8px;padding:1rem;box-shadow:0 1px 3px #0001}label{display:block;margin:.6rem 0 .2rem;font-weight:600}
input[type=text],textarea{width:100%;padding:.5rem;font:inherit}textarea{min-height:5rem}.actions{display:flex;gap:.5rem;margin-top:1rem;flex-wrap:wrap}
button{padding:.6rem 1rem;font:inherit}img.result{display:block;max-width:100%;height:auto;border:1px solid #d5d9e0;background:#fff}
iframe.result{width:100%;min-height:30rem;border:1px solid #d5d9e0;background:#fff}.saved{background:#e7f6ea;padding:.6rem;border-radius:4px}
.error{color:#a00;background:#fee;padding:.5rem;border-radius:4px}`;

export interface LaunchPageInput {
  /** Path of the page itself: render and save are below it. */
  base: string;
  name: string;
  kind: 'svg' | 'html';
  fields: FieldDefinition[];
  values: Record<string, string>;
  query: string;
  canSave: boolean;
  saved?: { assetId: string };
  error?: string;
}

export function launchPage(input: LaunchPageInput, security: { nonce: string }): string {
  const inputs = input.fields
    .map((f) => {
      const id = `f_${f.name}`;
      const value = escape(own<string>(input.values, f.name) ?? f.default);
      const control = f.multiline
        ? `<textarea id="${id}" name="${id}" maxlength="${f.maxLength}">${value}</textarea>`
        : `<input type="text" id="${id}" name="${id}" maxlength="${f.maxLength}" value="${value}">`;
      return `<label for="${id}">${escape(f.label)}</label>${control}`;
    })
    .join('\n');
  const renderUrl = `${input.base}/render${input.query ? `?${input.query}` : ''}`;
  const result =
    input.kind === 'svg'
      ? `<img class="result" id="result" src="${escape(renderUrl)}" alt="Rendered ${escape(input.name)}">`
      : `<iframe class="result" id="result" sandbox src="${escape(renderUrl)}" title="Rendered ${escape(input.name)}"></iframe>`;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${escape(input.name)} — Tessera</title><style nonce="${security.nonce}">${STYLE}</style></head>
<body><main><section><h1>${escape(input.name)}</h1>
${input.error ? `<p class="error" role="alert">${escape(input.error)}</p>` : ''}
${input.saved ? `<p class="saved" id="saved" role="status">Saved as a new asset: <code>${escape(input.saved.assetId)}</code></p>` : ''}
<form method="get" action="${escape(input.base)}" id="fill">${inputs}
<label for="filename">File name (when saving)</label><input type="text" id="filename" name="filename" maxlength="200" value="${escape(input.values.__filename ?? '')}">
<div class="actions"><button type="submit" id="preview">Preview</button>
${input.canSave ? `<button type="submit" id="save" formmethod="post" formaction="${escape(input.base)}/save">Save as new asset</button>` : ''}</div></form></section>
<section>${result}</section></main></body></html>`;
}
