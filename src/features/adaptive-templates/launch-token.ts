import type { Keyring } from '../../core/keyring.ts';

/**
 * The launch URL's token: who launched which template until when, signed with the server key
 * (HMAC via the keyring). Stateless, so any instance can open it; it carries no secret and grants
 * only this template's fill-render-save page, as the launching user.
 */
export interface LaunchClaims {
  /** template id */
  t: string;
  /** user id */
  u: string;
  /** organization id */
  o: string;
  /** expiry, epoch ms */
  e: number;
}

export const LAUNCH_TTL_MS = 60 * 60 * 1000;

export function signLaunch(keys: Keyring, claims: LaunchClaims): string {
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${payload}.${keys.hash('adaptive-template-launch', payload)}`;
}

/** The claims of a valid, unexpired token; null otherwise. */
export function verifyLaunch(keys: Keyring, token: string, now: number): LaunchClaims | null {
  const dot = token.indexOf('.');
  if (dot <= 0 || token.length > 600) return null;
  const payload = token.slice(0, dot);
  if (!keys.verify('adaptive-template-launch', payload, token.slice(dot + 1))) return null;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as LaunchClaims;
    if (
      typeof claims.t !== 'string' ||
      typeof claims.u !== 'string' ||
      typeof claims.o !== 'string' ||
      typeof claims.e !== 'number'
    )
      return null;
    return claims.e > now ? claims : null;
  } catch {
    return null;
  }
}
