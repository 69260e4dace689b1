import type { Deps } from '../../../deps.ts';
import { AppError } from '../../../core/http/errors.ts';

/**
 * Tessera's own presigned URLs (local-disk uploads, downloads, expose and share links): the path
 * and an expiry (epoch seconds) signed with HMAC-SHA-256 under the server's keyring.
 */
export function signPath(deps: Deps, method: string, path: string, expiresAt: number): string {
  return deps.keys.hash('signed-url', `${method.toUpperCase()}\n${path}\n${expiresAt}`);
}

export function signedUrl(
  deps: Deps,
  method: string,
  path: string,
  ttlSeconds: number,
  by?: string,
  share?: string,
  link?: string,
): { url: string; expires: number } {
  const expires = Math.floor(deps.clock.now() / 1000) + Math.max(1, Math.floor(ttlSeconds));
  const signature = signPath(deps, method, signedMaterial(path, by, share, link), expires);
  return {
    url: `${deps.config.publicUrl}${path}?${by === undefined ? '' : `by=${by}&`}${share === undefined ? '' : `share=${share}&`}${link === undefined ? '' : `link=${link}&`}expires=${expires}&signature=${signature}`,
    expires,
  };
}

/**
 * What is signed: the path, the user a link was handed to when it names one (`by`), the asset
 * share it belongs to (`share`, so a revoke can end it) and its own link record (`link`, revoked
 * by DELETE /v1/asset/link/{linkId}), each signed too.
 */
const signedMaterial = (path: string, by: unknown, share?: unknown, link?: unknown) =>
  `${typeof by === 'string' ? `${path}?by=${by}` : path}${typeof share === 'string' ? `\u0000share=${share}` : ''}${typeof link === 'string' ? `\u0000link=${link}` : ''}`;

/** Throws 403 unless `signature` signs `path` for `method` and has not expired. */
export function verifySignedPath(
  deps: Deps,
  method: string,
  path: string,
  expires: unknown,
  signature: unknown,
  by?: unknown,
  share?: unknown,
  link?: unknown,
): void {
  const exp = typeof expires === 'string' ? Number(expires) : typeof expires === 'number' ? expires : NaN;
  if (!Number.isInteger(exp) || typeof signature !== 'string')
    throw new AppError('forbidden', 'The URL is not signed: expires and signature are required');
  // Under any held key: a URL signed before a secret rotation works until the previous key is dropped.
  if (
    !deps.keys.verify(
      'signed-url',
      `${method.toUpperCase()}\n${signedMaterial(path, by, share, link)}\n${exp}`,
      signature,
    )
  )
    throw new AppError('forbidden', 'The URL signature is invalid');
  if (exp * 1000 < deps.clock.now()) throw new AppError('forbidden', 'The URL has expired');
}
