import type { FastifyRequest } from 'fastify';
import type { Deps } from '../../src/deps.ts';
import { unauthorized } from '../../src/core/http/errors.ts';
import { isUuid } from '../../src/core/ids.ts';
import { loadUserPrincipal } from '../../src/features/identity/index.ts';
import { expiredTokenHeaders, revokedTokenHeaders } from './auth.ts';
import type { TestContext } from './context.ts';
import type { TestOrg } from './factories.ts';

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

/**
 * Credentials that must never authenticate, checked on every route by the security suite.
 * Each returns the headers of a request carrying that credential.
 */
export const BAD_CREDENTIALS: { name: string; headers: (ctx: TestContext, org: TestOrg) => Record<string, string> | Promise<Record<string, string>> }[] = [
  { name: 'an unknown test user', headers: () => ({ 'x-test-user': '00000000-0000-4000-8000-000000000000' }) },
  { name: 'a malformed test user', headers: () => ({ 'x-test-user': 'not-a-uuid' }) },
  { name: 'a garbage AccessToken', headers: () => ({ accesstoken: 'garbage' }) },
  { name: 'a garbage Bearer token', headers: () => ({ authorization: 'Bearer eyJhbGciOiJFZERTQSJ9.e30.c2ln' }) },
  { name: 'an expired access token', headers: (ctx, org) => expiredTokenHeaders(ctx, org.admin) },
  { name: 'a token of a signed-out session', headers: (ctx, org) => revokedTokenHeaders(ctx, org.admin) },
];
