import { timingSafeEqual } from 'node:crypto';
import type { Deps } from '../../../deps.ts';
import { AppError } from '../../../core/http/errors.ts';

/**
 * Tessera's own presigned URLs (local-disk uploads, downloads, expose and share links): the path
 * and an expiry (epoch seconds) signed with HMAC-SHA-256 under the server's keyring.
 */
export function signPath(deps: Deps, method: string, path: string, expiresAt: number): string {
  return deps.keys.hash('signed-url', `${method.toUpperCase()}\n${path}\n${expiresAt}`);
}

export function signedUrl(deps: Deps, method: string, path: string, ttlSeconds: number): { url: string; expires: number } {
  const expires = Math.floor(deps.clock.now() / 1000) + Math.max(1, Math.floor(ttlSeconds));
  const signature = signPath(deps, method, path, expires);
  return { url: `${deps.config.publicUrl}${path}?expires=${expires}&signature=${signature}`, expires };
}

/** Throws 403 unless `signature` signs `path` for `method` and has not expired. */
export function verifySignedPath(deps: Deps, method: string, path: string, expires: unknown, signature: unknown): void {
  const exp = typeof expires === 'string' ? Number(expires) : typeof expires === 'number' ? expires : NaN;
  if (!Number.isInteger(exp) || typeof signature !== 'string') throw new AppError('forbidden', 'The URL is not signed: expires and signature are required');
  const expected = Buffer.from(signPath(deps, method, path, exp));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw new AppError('forbidden', 'The URL signature is invalid');
  if (exp * 1000 < deps.clock.now()) throw new AppError('forbidden', 'The URL has expired');
}
