import type { FastifyInstance } from 'fastify';
import { addRouteHook } from '../../core/http/authenticate.ts';
import { tooManyRequests } from '../../core/http/errors.ts';
import type { DbOrTrx } from '../../core/db/connect.ts';
import type { Config } from '../../config.ts';
import type { Deps } from '../../deps.ts';
import { orgLimits } from './limits.ts';
import { countInWindow } from './windows.ts';

export const HOUR_MS = 3_600_000;
export const MINUTE_MS = 60_000;
/** quota_windows.quota of each rate. */
export const UPLOAD_WINDOW = 'uploads';
export const API_KEY_WINDOW = 'api_requests';

/**
 * Counts one upload (a new asset or version that will receive content) against the uploader's
 * hourly limit, in the transaction that creates it: a refused or failed create counts nothing.
 * 429 with Retry-After (to the next hour) when the user has used the hour's uploads.
 */
export async function countUpload(
  trx: DbOrTrx,
  config: Pick<Config, 'quotas' | 'shareMailPerOrgPerHour'>,
  who: { orgId: string; userId: string },
  now: number,
): Promise<void> {
  const { limit } = (await orgLimits(trx, config, who.orgId)).uploadsPerUserPerHour;
  if (limit === null) return;
  const counted = await countInWindow(trx, {
    quota: UPLOAD_WINDOW,
    subject: who.userId,
    orgId: who.orgId,
    windowMs: HOUR_MS,
    limit,
    now,
  });
  if (counted.ok) return;
  throw tooManyRequests(
    (counted.resetAt - now) / 1000,
    `Upload limit reached: at most ${limit} uploads per user per hour (uploadsPerUserPerHour); ${counted.count} were started this hour`,
    { name: 'uploadsPerUserPerHour', limit, used: counted.count, requested: 1 },
  );
}

/**
 * The per-key request limit (apiRequestsPerKeyPerMinute): every request authenticated by an API key
 * is counted in the database, per key and clock minute, before its body is read; past the limit it
 * is a 429 with Retry-After (to the next minute). Organizations without the limit cost no query
 * (their limits are kept a second per process). Call right after registerAuthentication, in its scope.
 */
export function registerApiKeyRequestLimit(app: FastifyInstance, deps: Deps): void {
  app.addHook('onRoute', (route) => {
    if (route.config?.public) return;
    addRouteHook(route, 'onRequest', (request, reply, done) => {
      const principal = request.principal;
      if (!principal || principal.kind !== 'api_key' || !principal.apiKeyId) return done();
      const now = deps.clock.now();
      const cache = deps.runtime.quotas.limits;
      const cached = cache.peek(principal.orgId, now);
      if (cached && cached.apiRequestsPerKeyPerMinute.limit === null) return done();
      const keyId = principal.apiKeyId;
      const orgId = principal.orgId;
      cache
        .get(deps.db, deps.config, orgId, now)
        .then(async (limits) => {
          const limit = limits.apiRequestsPerKeyPerMinute.limit;
          if (limit === null) return;
          const counted = await countInWindow(deps.db, {
            quota: API_KEY_WINDOW,
            subject: keyId,
            orgId,
            windowMs: MINUTE_MS,
            limit,
            now,
          });
          reply.header('ratelimit-limit', String(limit));
          reply.header('ratelimit-remaining', String(Math.max(0, limit - counted.count)));
          reply.header('ratelimit-reset', String(Math.max(0, Math.ceil((counted.resetAt - now) / 1000))));
          if (!counted.ok)
            throw tooManyRequests(
              (counted.resetAt - now) / 1000,
              `API request limit reached: at most ${limit} requests per API key per minute (apiRequestsPerKeyPerMinute)`,
              { name: 'apiRequestsPerKeyPerMinute', limit, used: counted.count },
            );
        })
        .then(() => done(), done);
    });
  });
}
