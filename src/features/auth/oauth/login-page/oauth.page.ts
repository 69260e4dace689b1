import { OAUTH_SCOPES, isOAuthScope } from '../../../../core/authz/scopes.ts';
import { randomBytes } from 'node:crypto';

/** The login-and-consent page and its error page: plain HTML, no scripts, inline style under a nonce. */
const escape = (value: string) =>
  value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export interface PageSecurity {
  nonce: string;
  csp: string;
}

/** A fresh nonce and a CSP that allows only our inline style and form posts to us (and, after login, the client's redirect). */
export function pageSecurity(formTargets: string[] = []): PageSecurity {
  const nonce = randomBytes(16).toString('base64');
  const csp = [
    "default-src 'none'",
    `style-src 'nonce-${nonce}'`,
    `form-action 'self' ${formTargets.join(' ')}`.trim(),
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "img-src 'self'",
  ].join('; ');
  return { nonce, csp };
}

const STYLE = `body{font-family:system-ui,sans-serif;background:#f4f5f7;margin:0;display:flex;min-height:100vh;align-items:center;justify-content:center}
main{background:#fff;padding:2rem;border-radius:8px;box-shadow:0 1px 4px #0002;width:22rem}h1{font-size:1.25rem;margin-top:0}
label{display:block;margin:.75rem 0 .25rem}input[type=text],input[type=password]{width:100%;padding:.5rem;box-sizing:border-box}
.error{color:#a00;background:#fee;padding:.5rem;border-radius:4px}.sso{margin-top:1.25rem;border-top:1px solid #ddd;padding-top:.75rem}.sso a{display:block;text-align:center;padding:.6rem;margin-top:.5rem;border:1px solid #888;border-radius:4px;color:#000;text-decoration:none}.actions{display:flex;gap:.5rem;margin-top:1rem}button{flex:1;padding:.6rem}`;

function layout(title: string, body: string, security: PageSecurity): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${escape(title)}</title><style nonce="${security.nonce}">${STYLE}</style></head>
<body><main>${body}</main></body></html>`;
}

/** An identity provider offered on the login page (features/sso): a link that starts the sign-in there. */
export interface LoginProvider {
  name: string;
  href: string;
}

function providerLinks(providers: readonly LoginProvider[] | undefined): string {
  if (!providers || providers.length === 0) return '';
  const links = providers
    .map((p) => `<a class="sso-provider" href="${escape(p.href)}">Sign in with ${escape(p.name)}</a>`)
    .join('');
  return `<nav class="sso" aria-label="Single sign-on"><p>Or use your organization's account:</p>${links}</nav>`;
}

export function loginPage(
  input: {
    clientName: string;
    scope: string;
    params: Record<string, string>;
    csrf: string;
    error?: string;
    username?: string;
    firstParty?: boolean;
    providers?: readonly LoginProvider[];
  },
  security: PageSecurity,
): string {
  if (input.firstParty) return firstPartyLoginPage(input, security);
  const hidden = Object.entries(input.params)
    .map(([k, v]) => `<input type="hidden" name="${escape(k)}" value="${escape(v)}">`)
    .join('');
  const scopes = input.scope
    .split(' ')
    .filter(Boolean)
    .map((s) => `<li><code>${escape(s)}</code>: ${escape(isOAuthScope(s) ? OAUTH_SCOPES[s] : s)}</li>`)
    .join('');
  return layout(
    'Sign in — Tessera',
    `<h1>Sign in to Tessera</h1>
<p><strong>${escape(input.clientName)}</strong> asks to access your account on your behalf.</p>
<p>Requested access:</p><ul>${scopes}</ul>
${input.error ? `<p class="error" role="alert">${escape(input.error)}</p>` : ''}
<form method="post" action="authorize" autocomplete="on">${hidden}<input type="hidden" name="csrf" value="${escape(input.csrf)}">
<label for="username">Username</label><input id="username" name="username" type="text" autocomplete="username" required value="${escape(input.username ?? '')}">
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password">
<div class="actions"><button type="submit" name="decision" value="allow" id="allow">Sign in and allow</button>
<button type="submit" name="decision" value="deny" id="deny" formnovalidate>Deny</button></div></form>${providerLinks(input.providers)}`,
    security,
  );
}

/** Tessera's own web app: a plain sign-in (its access is the person's own, so there is nothing to consent to). */
function firstPartyLoginPage(
  input: {
    params: Record<string, string>;
    csrf: string;
    error?: string;
    username?: string;
    providers?: readonly LoginProvider[];
  },
  security: PageSecurity,
): string {
  const hidden = Object.entries(input.params)
    .map(([k, v]) => `<input type="hidden" name="${escape(k)}" value="${escape(v)}">`)
    .join('');
  return layout(
    'Sign in — Tessera',
    `<h1>Sign in to Tessera</h1>
${input.error ? `<p class="error" role="alert">${escape(input.error)}</p>` : ''}
<form method="post" action="authorize" autocomplete="on">${hidden}<input type="hidden" name="csrf" value="${escape(input.csrf)}">
<label for="username">Username</label><input id="username" name="username" type="text" autocomplete="username" required autofocus value="${escape(input.username ?? '')}">
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password">
<div class="actions"><button type="submit" name="decision" value="allow" id="allow">Sign in</button></div></form>${providerLinks(input.providers)}`,
    security,
  );
}

export function errorPage(message: string, security: PageSecurity): string {
  return layout(
    'Authorization error — Tessera',
    `<h1>Cannot continue</h1><p class="error" role="alert">${escape(message)}</p>`,
    security,
  );
}

/** A page that only tells something (signed out, for example). */
export function noticePage(title: string, message: string, security: PageSecurity): string {
  return layout(`${title} — Tessera`, `<h1>${escape(title)}</h1><p role="status">${escape(message)}</p>`, security);
}
