// Single sign-on tests: two Tessera instances on real ports (a relying party and the OpenID
// provider it trusts), and a small browser that follows redirects by hand and keeps cookies.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createTestContext, type ContextOptions, type TestContext } from './context.ts';
import type { EngineName } from './engines.ts';
import { freePort } from './net.ts';

/**
 * A test context whose app listens on 127.0.0.1 at its public URL. `hostName: 'localhost'` gives it
 * a public URL on another host name, so that a real browser keeps its cookies apart from another
 * instance's on 127.0.0.1 (cookies do not separate ports).
 */
export async function listeningContext(
  engine: EngineName,
  options: ContextOptions & { hostName?: 'localhost' | '127.0.0.1' } = {},
): Promise<TestContext> {
  const port = await freePort();
  const { hostName = '127.0.0.1', ...rest } = options;
  const ctx = await createTestContext(engine, {
    ...rest,
    env: { ...rest.env, TESSERA_PUBLIC_URL: `http://${hostName}:${port}` },
  });
  await ctx.app.listen({ port, host: '127.0.0.1' });
  return ctx;
}

const unescapeHtml = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

export interface Hop {
  status: number;
  location?: string;
  body: string;
  url: string;
}

/** A browser without JavaScript: real HTTP, one cookie jar per origin, redirects followed by the caller. */
export class Browser {
  readonly jar = new Map<string, Map<string, string>>();

  private cookieHeader(url: URL): string | undefined {
    const jar = this.jar.get(url.origin);
    if (!jar || jar.size === 0) return undefined;
    return [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async request(url: string, init: { method?: string; form?: Record<string, string> } = {}): Promise<Hop> {
    const target = new URL(url);
    const headers: Record<string, string> = {};
    const cookie = this.cookieHeader(target);
    if (cookie) headers.cookie = cookie;
    if (init.form) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = await fetch(target, {
      method: init.method ?? (init.form ? 'POST' : 'GET'),
      headers,
      redirect: 'manual',
      ...(init.form ? { body: new URLSearchParams(init.form).toString() } : {}),
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      let jar = this.jar.get(target.origin);
      if (!jar) this.jar.set(target.origin, (jar = new Map()));
      jar.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1));
    }
    const location = res.headers.get('location') ?? undefined;
    return {
      status: res.status,
      body: await res.text(),
      url,
      ...(location ? { location: new URL(location, target).toString() } : {}),
    };
  }

  /** Follows 3xx answers until one is not a redirect or points at `stopAt` (the application's callback). */
  async follow(url: string, stopAt: string): Promise<{ hops: Hop[]; last: Hop }> {
    const hops: Hop[] = [];
    let next = url;
    for (let i = 0; i < 10; i++) {
      const hop = await this.request(next);
      hops.push(hop);
      if (!hop.location || hop.status < 300 || hop.status >= 400 || hop.location.startsWith(stopAt))
        return { hops, last: hop };
      next = hop.location;
    }
    throw new Error('too many redirects');
  }
}

/** Hidden fields of a login form page. */
export function hiddenFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    fields[unescapeHtml(m[1]!)] = unescapeHtml(m[2]!);
  return fields;
}

/** The "Sign in with …" links of a login page, by provider name. */
export function providerLinks(html: string): Map<string, string> {
  const links = new Map<string, string>();
  for (const m of html.matchAll(/<a class="sso-provider" href="([^"]+)">Sign in with ([^<]+)<\/a>/g))
    links.set(unescapeHtml(m[2]!), unescapeHtml(m[1]!));
  return links;
}

/** A PKCE pair and a Tessera authorization request for a registered client. */
export function authorizeRequest(
  base: string,
  clientId: string,
  redirectUri: string,
  extra: Record<string, string> = {},
) {
  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(16).toString('base64url');
  const nonce = randomBytes(16).toString('base64url');
  const url = new URL(`${base}/v1/oauth2/authorize`);
  const params = {
    client_id: clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: 'openid email',
    state,
    nonce,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    ...extra,
  };
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return { url: url.toString(), verifier, state, nonce };
}

/** Exchanges a code at a Tessera token endpoint over HTTP. */
export async function exchange(
  base: string,
  form: Record<string, string>,
): Promise<{ status: number; body: Record<string, string> }> {
  const res = await fetch(`${base}/v1/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
}

export function assertRedirect(hop: Hop, prefix: string): URL {
  assert.ok(
    hop.status >= 300 && hop.status < 400,
    `expected a redirect from ${hop.url}, got ${hop.status}: ${hop.body.slice(0, 300)}`,
  );
  assert.ok(hop.location?.startsWith(prefix), `expected a redirect to ${prefix}, got ${hop.location}`);
  return new URL(hop.location!);
}
