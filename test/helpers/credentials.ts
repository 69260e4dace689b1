import type { FastifyRequest } from 'fastify';
import type { Deps } from '../../src/deps.ts';
import type { TestContext } from './context.ts';
import type { TestOrg } from './factories.ts';
import { unauthorized } from '../../src/core/http/errors.ts';
import { isUuid } from '../../src/core/ids.ts';
import { generateKey } from '../../src/features/api-keys/index.ts';
import { loadUserPrincipal } from '../../src/features/identity/index.ts';
import { expiredTokenHeaders, revokedTokenHeaders } from './auth.ts';

/**
 * Test-only credential: `x-test-user: <userId>`. Passed to buildApp by the test harness only;
 * production never registers it, so it is not reachable over HTTP there.
 */
export function testResolver(deps: Deps) {
  return async (request: FastifyRequest) => {
    const userId = request.headers['x-test-user'];
    if (typeof userId !== 'string') return null;
    if (!isUuid(userId)) throw unauthorized();
    const principal = await loadUserPrincipal(deps.db, userId);
    if (!principal) throw unauthorized();
    return principal;
  };
}

/** Headers that authenticate as a user in tests. */
export function headersFor(userId: string): Record<string, string> {
  return { 'x-test-user': userId };
}

/** A real key of `org` (made through the API by its administrator), already revoked. */
async function revokedApiKey(ctx: TestContext, org: TestOrg): Promise<string> {
  const created = await ctx.inject({
    method: 'POST',
    url: '/api/v1/api-key/create-api-key',
    headers: org.admin.headers,
    payload: { name: 'revoked', roleId: org.roles.viewer },
  });
  const { id, key } = created.json() as { id: string; key: string };
  await ctx.inject({
    method: 'POST',
    url: '/api/v1/api-key/revoke-api-key',
    headers: org.admin.headers,
    payload: { id },
  });
  return key;
}

/**
 * Credentials that must never authenticate, checked on every route by the security suite.
 * Each returns the headers of a request carrying that credential (`org` is the caller's organization).
 */
export const BAD_CREDENTIALS: {
  name: string;
  headers: (ctx: TestContext, org: TestOrg) => Record<string, string> | Promise<Record<string, string>>;
}[] = [
  { name: 'an unknown test user', headers: () => ({ 'x-test-user': '00000000-0000-4000-8000-000000000000' }) },
  { name: 'a malformed test user', headers: () => ({ 'x-test-user': 'not-a-uuid' }) },
  // Right prefix and length, wrong checksum: refused before any database access.
  { name: 'a malformed API key', headers: () => ({ 'x-api-key': `tsk_${'A'.repeat(49)}` }) },
  { name: 'a well-formed but unknown API key', headers: () => ({ 'x-api-key': generateKey() }) },
  { name: 'a revoked API key', headers: async (ctx, org) => ({ 'x-api-key': await revokedApiKey(ctx, org) }) },
  { name: 'a garbage AccessToken', headers: () => ({ accesstoken: 'garbage' }) },
  { name: 'a garbage Bearer token', headers: () => ({ authorization: 'Bearer eyJhbGciOiJFZERTQSJ9.e30.c2ln' }) },
  { name: 'an expired access token', headers: (ctx, org) => expiredTokenHeaders(ctx, org.admin) },
  { name: 'a token of a signed-out session', headers: (ctx, org) => revokedTokenHeaders(ctx, org.admin) },
];
