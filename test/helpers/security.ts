import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ALL_PRIVILEGES, type Privilege } from '../../src/core/authz/catalog.ts';
import type { TestContext } from './context.ts';
import { BAD_CREDENTIALS } from './credentials.ts';
import { loginHeaders } from './auth.ts';
import { createKey } from './api-keys.ts';
import { createTestOrg, createTestUser, type TestOrg } from './factories.ts';

export interface SecuredRoute {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** Builds a valid request against `org`, creating whatever the route acts on. */
  prepare(ctx: TestContext, org: TestOrg): Promise<{ url: string; body?: unknown }> | { url: string; body?: unknown };
  /** Privileges the route needs: a caller lacking them gets 403. Omit when any user may call it. */
  privileges?: Privilege[];
  /** The URL names a resource: a caller from another organization must get 404, like a missing one. */
  resource?: boolean;
}

/**
 * The shared security suite every route gets: no credentials, bad credentials (every kind in
 * BAD_CREDENTIALS), a caller from another organization, and a caller without the privilege.
 */
export function securitySuite(getCtx: () => TestContext, name: string, route: SecuredRoute): void {
  describe(`security: ${route.method} ${name}`, () => {
    it('refuses a request without credentials with 401', async () => {
      const ctx = getCtx();
      const org = await createTestOrg(ctx);
      const req = await route.prepare(ctx, org);
      const res = await ctx.inject({ method: route.method, url: req.url, payload: req.body });
      assert.equal(res.statusCode, 401, res.body);
      assert.equal(res.json().code, 'unauthorized');
    });

    for (const bad of BAD_CREDENTIALS) {
      it(`refuses ${bad.name} with 401`, async () => {
        const ctx = getCtx();
        const org = await createTestOrg(ctx);
        const req = await route.prepare(ctx, org);
        const res = await ctx.inject({ method: route.method, url: req.url, payload: req.body, headers: await bad.headers(ctx, org) });
        assert.equal(res.statusCode, 401, res.body);
      });
    }

    if (route.resource) {
      it("answers 404 to another organization's administrator (signed in) and to its API key", async () => {
        const ctx = getCtx();
        const owner = await createTestOrg(ctx);
        const stranger = await createTestOrg(ctx);
        const key = await createKey(ctx, stranger, { roleId: stranger.roles.administrator });
        for (const headers of [await loginHeaders(ctx, stranger.admin), { 'x-api-key': key.key }]) {
          const req = await route.prepare(ctx, owner);
          const res = await ctx.inject({ method: route.method, url: req.url, payload: req.body, headers });
          assert.equal(res.statusCode, 404, res.body);
        }
      });
    }

    if (route.privileges && route.privileges.length > 0) {
      it(`answers 403 to a signed-in user and to an API key without ${route.privileges.join(' + ')}`, async () => {
        const ctx = getCtx();
        const org = await createTestOrg(ctx);
        for (const missing of route.privileges!) {
          const privileges = ALL_PRIVILEGES.filter((p) => p !== missing);
          const user = await createTestUser(ctx, org, { privileges });
          const role = await ctx.inject({ method: 'POST', url: '/v1/roles', headers: org.admin.headers, payload: { name: `without-${missing}-${Math.random().toString(36).slice(2)}`, privileges } });
          assert.equal(role.statusCode, 201, role.body);
          const key = await createKey(ctx, org, { roleId: role.json().id });
          for (const headers of [await loginHeaders(ctx, user), { 'x-api-key': key.key }]) {
            const req = await route.prepare(ctx, org);
            const res = await ctx.inject({ method: route.method, url: req.url, payload: req.body, headers });
            assert.ok(res.statusCode === 403 || res.statusCode === 404, `lacking ${missing}: expected 403, got ${res.statusCode} ${res.body}`);
            if (!route.resource) assert.equal(res.statusCode, 403, res.body);
          }
        }
      });
    }
  });
}
