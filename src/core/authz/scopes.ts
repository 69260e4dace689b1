import { forbidden } from '../http/errors.ts';
import { AppError } from '../http/errors.ts';

/**
 * OAuth scopes Tessera grants to third-party clients. Identity scopes reach only the signed-in
 * person's own identity; API access takes an explicit scope; no scope lets a client create
 * lasting credentials (that takes the person's own sign-in, see requireOwnSignIn).
 */
export const OAUTH_SCOPES = {
  openid: 'Sign you in and know your user id',
  profile: 'See your name and username',
  email: 'See your email address',
  offline_access: 'Stay signed in (a refresh token) until you sign out or revoke access',
  'tessera.read': 'Read everything you can see in Tessera, changing nothing',
  'tessera.api':
    'Read and change in Tessera whatever you can, except creating API keys, users, passwords or OAuth clients',
} as const;

export type OAuthScope = keyof typeof OAUTH_SCOPES;
export const ALL_OAUTH_SCOPES = Object.keys(OAUTH_SCOPES) as OAuthScope[];

export function isOAuthScope(value: string): value is OAuthScope {
  return Object.hasOwn(OAUTH_SCOPES, value);
}

/** What a route needs from a scoped (third-party) token. */
export type RouteScope = 'identity' | 'read' | 'write';

/** A route's need: `identity` when it declares so, else read for safe methods, write otherwise. */
export function routeScopeOf(method: string, declared?: RouteScope): RouteScope {
  if (declared) return declared;
  return method === 'GET' || method === 'HEAD' ? 'read' : 'write';
}

/** Whether a set of granted scopes reaches a route of the given need. */
export function scopesAllow(scopes: ReadonlySet<string>, need: RouteScope): boolean {
  if (scopes.has('tessera.api')) return true;
  if (need === 'read') return scopes.has('tessera.read');
  if (need === 'identity')
    return scopes.has('openid') || scopes.has('profile') || scopes.has('email') || scopes.has('tessera.read');
  return false;
}

/** 403 with an RFC 6750 `insufficient_scope` challenge naming the scope that would do. */
export function insufficientScope(need: RouteScope): AppError {
  const wanted = need === 'write' ? 'tessera.api' : need === 'read' ? 'tessera.read' : 'openid';
  const error = forbidden(`This token's OAuth scopes do not allow this request; it needs the ${wanted} scope`);
  return new AppError('forbidden', error.message, {
    headers: { 'www-authenticate': `Bearer error="insufficient_scope", scope="${wanted}"` },
  });
}
