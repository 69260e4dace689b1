import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ALL_PRIVILEGES, type Privilege } from '../../src/core/authz/catalog.ts';
import type { TestContext } from './context.ts';
import { BAD_CREDENTIALS } from './credentials.ts';
import { impersonationHeaders, loginHeaders } from './auth.ts';
import { oauthTokenFor } from './oauth.ts';
import { createKey } from './api-keys.ts';
import { createTestOrg, createTestUser, type TestOrg, type TestUser } from './factories.ts';

export interface SecuredRoute {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** Builds a valid request against `org`, creating whatever the route acts on. */
  prepare(ctx: TestContext, org: TestOrg): Promise<{ url: string; body?: unknown }> | { url: string; body?: unknown };
  /** Privileges the route needs: a caller lacking them gets 403. Omit when any user may call it. */
  privileges?: Privilege[];
  /** The URL names a resource: a caller from another organization must get 404, like a missing one. */
  resource?: boolean;
  /** Reached by an OAuth token holding only identity scopes (openid/profile/email): the caller's own identity. */
  identityScope?: boolean;
  /** A read sent as POST (searches, list-api-keys, …): an OAuth token with tessera.read reaches it. GET routes are reads anyway. */
  readScope?: boolean;
  /**
   * The route creates or changes lasting credentials (users, passwords, API keys, OAuth clients):
   * an API key, an impersonation token and a tessera.api OAuth token of an administrator all get 403.
   */
  credentials?: boolean;
  /**
   * The privilege ceiling: a request that a caller holding `privileges` (and in Everyone only)
   * may not make, because what it touches or gives holds more than the caller: must get 403.
   */
  ceiling?: {
    privileges: Privilege[];
    prepare(
      ctx: TestContext,
      org: TestOrg,
      caller: TestUser,
    ): Promise<{ url: string; body?: unknown }> | { url: string; body?: unknown };
  };
}

/** An administrator's peer (Administrator role, Administrators group), whom the administrator may impersonate. */
async function adminPeer(ctx: TestContext, org: TestOrg): Promise<TestUser> {
  return createTestUser(ctx, org, {
    roleId: org.roles.administrator,
    groupIds: [org.groups.administrators, org.groups.everyone],
  });
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
        const res = await ctx.inject({
          method: route.method,
          url: req.url,
          payload: req.body,
          headers: await bad.headers(ctx, org),
        });
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
          const role = await ctx.inject({
            method: 'POST',
            url: '/v1/roles',
            headers: org.admin.headers,
            payload: { name: `without-${missing}-${Math.random().toString(36).slice(2)}`, privileges },
          });
          assert.equal(role.statusCode, 201, role.body);
          const key = await createKey(ctx, org, { roleId: role.json().id });
          for (const headers of [await loginHeaders(ctx, user), { 'x-api-key': key.key }]) {
            const req = await route.prepare(ctx, org);
            const res = await ctx.inject({ method: route.method, url: req.url, payload: req.body, headers });
            assert.ok(
              res.statusCode === 403 || res.statusCode === 404,
              `lacking ${missing}: expected 403, got ${res.statusCode} ${res.body}`,
            );
            if (!route.resource) assert.equal(res.statusCode, 403, res.body);
          }
        }
      });
    }

    it(
      route.identityScope
        ? 'is reached by an OAuth token with identity scopes only'
        : 'answers 403 insufficient_scope to an OAuth token with identity scopes only',
      async () => {
        const ctx = getCtx();
        const org = await createTestOrg(ctx);
        const token = await oauthTokenFor(ctx, org.admin.headers, org.admin, 'openid profile email');
        const req = await route.prepare(ctx, org);
        const res = await ctx.inject({
          method: route.method,
          url: req.url,
          payload: req.body,
          headers: { authorization: `Bearer ${token.accessToken}` },
        });
        if (route.identityScope) {
          assert.ok(res.statusCode < 400, `identity scope: ${res.statusCode} ${res.body}`);
        } else {
          assert.equal(res.statusCode, 403, res.body);
          assert.match(String(res.headers['www-authenticate']), /insufficient_scope/);
        }
      },
    );

    const isRead = route.method === 'GET' || route.readScope === true || route.identityScope === true;
    it(
      isRead
        ? 'is reached by an OAuth token with tessera.read'
        : 'answers 403 insufficient_scope to an OAuth token with tessera.read (changing needs tessera.api)',
      async () => {
        const ctx = getCtx();
        const org = await createTestOrg(ctx);
        const token = await oauthTokenFor(ctx, org.admin.headers, org.admin, 'openid tessera.read');
        const req = await route.prepare(ctx, org);
        const res = await ctx.inject({
          method: route.method,
          url: req.url,
          payload: req.body,
          headers: { authorization: `Bearer ${token.accessToken}` },
        });
        if (isRead) {
          assert.doesNotMatch(
            String(res.headers['www-authenticate'] ?? ''),
            /insufficient_scope/,
            `tessera.read: ${res.statusCode} ${res.body}`,
          );
          assert.notEqual(res.statusCode, 401, res.body);
        } else {
          assert.equal(res.statusCode, 403, res.body);
          assert.match(
            String(res.headers['www-authenticate']),
            /insufficient_scope, scope="tessera.api"|insufficient_scope", scope="tessera\.api"/,
          );
        }
      },
    );

    if (route.privileges && route.privileges.length > 0) {
      it('answers 403 to an impersonation token and a tessera.api OAuth token of a user without the privilege', async () => {
        const ctx = getCtx();
        const org = await createTestOrg(ctx);
        const missing = route.privileges![0]!;
        const user = await createTestUser(ctx, org, { privileges: ALL_PRIVILEGES.filter((p) => p !== missing) });
        const token = await oauthTokenFor(ctx, org.admin.headers, user, 'openid tessera.api');
        for (const headers of [
          await impersonationHeaders(ctx, org.admin, user.username),
          { authorization: `Bearer ${token.accessToken}` },
        ]) {
          const req = await route.prepare(ctx, org);
          const res = await ctx.inject({ method: route.method, url: req.url, payload: req.body, headers });
          assert.ok(
            res.statusCode === 403 || (route.resource && res.statusCode === 404),
            `lacking ${missing}: ${res.statusCode} ${res.body}`,
          );
        }
      });
    }

    if (route.credentials) {
      it("needs the person's own sign-in: an administrator's API key, impersonation token and tessera.api OAuth token get 403", async () => {
        const ctx = getCtx();
        const org = await createTestOrg(ctx);
        const peer = await adminPeer(ctx, org);
        const key = await createKey(ctx, org, { roleId: org.roles.administrator });
        const token = await oauthTokenFor(ctx, org.admin.headers, org.admin, 'openid tessera.api');
        const borrowed = [
          { 'x-api-key': key.key },
          await impersonationHeaders(ctx, org.admin, peer.username),
          { authorization: `Bearer ${token.accessToken}` },
        ];
        for (const headers of borrowed) {
          const req = await route.prepare(ctx, org);
          const res = await ctx.inject({ method: route.method, url: req.url, payload: req.body, headers });
          assert.equal(res.statusCode, 403, res.body);
          assert.match(res.json().message, /own sign-in/);
        }
        // The same request with the administrator's own sign-in works.
        const req = await route.prepare(ctx, org);
        const own = await ctx.inject({
          method: route.method,
          url: req.url,
          payload: req.body,
          headers: await loginHeaders(ctx, org.admin),
        });
        assert.ok(own.statusCode < 300, `own sign-in: ${own.statusCode} ${own.body}`);
      });
    }

    if (route.ceiling) {
      it(`answers 403 to a holder of ${route.ceiling.privileges.join(' + ')} acting beyond what they hold`, async () => {
        const ctx = getCtx();
        const org = await createTestOrg(ctx);
        const caller = await createTestUser(ctx, org, { privileges: route.ceiling!.privileges });
        const req = await route.ceiling!.prepare(ctx, org, caller);
        const res = await ctx.inject({
          method: route.method,
          url: req.url,
          payload: req.body,
          headers: await loginHeaders(ctx, caller),
        });
        assert.equal(res.statusCode, 403, res.body);
      });
    }
  });
}
