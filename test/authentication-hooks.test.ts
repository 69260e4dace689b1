// How authentication is attached to routes (core/http/authenticate.ts): per route at registration,
// resolvers that answer synchronously (a cached credential) or asynchronously, the handler running
// as the principal either way, HEAD twins and unknown paths.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { FastifyRequest } from 'fastify';
import type { Principal } from '../src/core/authz/principal.ts';
import { unauthorized } from '../src/core/http/errors.ts';
import { loadUserPrincipal } from '../src/features/identity/index.ts';
import { forEachEngine, json } from './helpers/context.ts';
import { loginHeaders } from './helpers/auth.ts';
import { createTestOrg, createTestUser } from './helpers/factories.ts';

/** Principals a synchronous resolver hands out, by the value of X-Sync-Principal. */
const known = new Map<string, Principal>();

/** Answers without a promise, as the token and API key resolvers do for a cached credential. */
function syncResolver(request: FastifyRequest): Principal | null {
  const name = request.headers['x-sync-principal'];
  if (typeof name !== 'string') return null;
  const principal = known.get(name);
  if (!principal) throw unauthorized();
  return principal;
}

forEachEngine(
  'authentication hooks',
  (ctx) => {
    it('a resolver answering synchronously authenticates; one throwing synchronously answers its 401 (not a 500)', async () => {
      const org = await createTestOrg(ctx());
      known.set(`admin-${org.orgId}`, (await loadUserPrincipal(ctx().deps.db, org.admin.userId))!);
      const ok = await ctx().inject({
        method: 'GET',
        url: '/v1/user',
        headers: { 'x-sync-principal': `admin-${org.orgId}` },
      });
      assert.equal(ok.statusCode, 200, ok.body);
      assert.equal(json(ok).userId, org.admin.userId);
      const bad = await ctx().inject({ method: 'GET', url: '/v1/user', headers: { 'x-sync-principal': 'nobody' } });
      assert.equal(bad.statusCode, 401, bad.body);
      assert.equal(json(bad).code, 'unauthorized');
      assert.match(String(bad.headers['www-authenticate']), /^Bearer/);
    });

    it('the handler runs as a principal that was resolved synchronously (the impersonator is recorded)', async () => {
      const org = await createTestOrg(ctx());
      const target = await createTestUser(ctx(), org, { privileges: ['user_management'] });
      const principal = (await loadUserPrincipal(ctx().deps.db, target.userId))!;
      known.set(`impersonated-${org.orgId}`, { ...principal, via: 'impersonation', impersonatorId: org.admin.userId });
      const res = await ctx().inject({
        method: 'PATCH',
        url: `/v1/user/${target.userId}`,
        headers: { 'x-sync-principal': `impersonated-${org.orgId}` },
        payload: { firstName: 'Changed' },
      });
      assert.equal(res.statusCode, 200, res.body);
      const row = await ctx()
        .deps.db.selectFrom('audit_log')
        .selectAll()
        .where('org_id', '=', org.orgId)
        .where('action', '=', 'user.updated')
        .executeTakeFirstOrThrow();
      assert.equal(row.actor_id, target.userId);
      assert.equal(row.impersonator_id, org.admin.userId);
    });

    it('a cached token or key (answered without a promise) gets the same answer as its first, uncached request', async () => {
      const org = await createTestOrg(ctx());
      const headers = await loginHeaders(ctx(), org.admin);
      const created = await ctx().inject({
        method: 'POST',
        url: '/api/v1/api-key/create-api-key',
        headers,
        payload: { name: 'hooks', roleId: org.roles.viewer },
      });
      assert.equal(created.statusCode, 200, created.body);
      for (const credential of [headers, { 'x-api-key': (created.json() as { key: string }).key }]) {
        const first = await ctx().inject({ method: 'GET', url: '/v1/user', headers: credential });
        const second = await ctx().inject({ method: 'GET', url: '/v1/user', headers: credential });
        assert.equal(first.statusCode, 200, first.body);
        assert.equal(second.statusCode, 200);
        assert.equal(second.body, first.body);
        assert.equal(second.headers['content-type'], first.headers['content-type']);
      }
    });

    it('HEAD twins of authenticated GETs require credentials too; unknown paths are 404 with or without them', async () => {
      const org = await createTestOrg(ctx());
      assert.equal((await ctx().inject({ method: 'HEAD', url: '/v1/user' })).statusCode, 401);
      assert.equal(
        (await ctx().inject({ method: 'HEAD', url: '/v1/user', headers: org.admin.headers })).statusCode,
        200,
      );
      for (const headers of [{}, org.admin.headers, { accesstoken: 'not-a-token' }]) {
        const res = await ctx().inject({ method: 'GET', url: '/v1/no-such-route', headers });
        assert.equal(res.statusCode, 404, res.body);
      }
    });

    it('public routes in the authenticated scope need no credentials and ignore bad ones', async () => {
      const org = await createTestOrg(ctx());
      const res = await ctx().inject({
        method: 'POST',
        url: '/v1/auth/token',
        headers: { accesstoken: 'not-a-token' },
        payload: { username: org.admin.username, password: org.admin.password },
      });
      assert.equal(res.statusCode, 200, res.body);
    });
  },
  { appOptions: { extraResolvers: [syncResolver] } },
);
