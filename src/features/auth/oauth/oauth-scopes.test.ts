import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine, json, type TestContext } from '../../../../test/helpers/context.ts';
import { CREATE } from '../../../../test/helpers/api-keys.ts';
import { createTestOrg, createTestUser, type TestOrg, type TestUser } from '../../../../test/helpers/factories.ts';
import {
  authorizationCode,
  exchangeCode,
  oauthTokenFor,
  refreshAtClient,
  registerClient,
  signInThroughPage,
} from '../../../../test/helpers/oauth.ts';
import { login, loginHeaders } from '../../../../test/helpers/auth.ts';
import { securitySuite } from '../../../../test/helpers/security.ts';

// Issue 8, item 1: OAuth scopes are enforced in the credential check, and a third-party token
// never creates lasting credentials.

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function tokenFor(
  ctx: TestContext,
  org: TestOrg,
  user: TestUser,
  scope: string,
  options: { clientId?: string } = {},
) {
  return oauthTokenFor(ctx, org.admin.headers, user, scope, options);
}

forEachEngine('OAuth scopes', (ctx) => {
  it("an openid-only token reaches the caller's own identity and nothing else", async () => {
    const org = await createTestOrg(ctx());
    const { accessToken, refreshToken } = await tokenFor(ctx(), org, org.admin, 'openid');
    assert.equal(refreshToken, undefined, 'no offline_access, no refresh token');
    const me = await ctx().inject({ method: 'GET', url: '/v1/user', headers: bearer(accessToken) });
    assert.equal(me.statusCode, 200, me.body);
    assert.equal(json(me).userId, org.admin.userId);
    const attempts = [
      { method: 'POST' as const, url: CREATE, payload: { name: 'k', roleId: org.roles.administrator } },
      {
        method: 'POST' as const,
        url: '/v1/user',
        payload: {
          username: 'mallory',
          email: 'm@example.test',
          firstName: 'M',
          lastName: 'M',
          friendlyName: 'M',
          userRoleId: org.roles.administrator,
          accountType: 'local',
          password: 'Very-Long-Passw0rd!',
          groups: [],
        },
      },
      {
        method: 'POST' as const,
        url: '/v1/oauth2/clients',
        payload: { name: 'x', redirectUris: ['https://evil.example/cb'] },
      },
      { method: 'GET' as const, url: '/v1/security/groups' },
      { method: 'GET' as const, url: `/v1/user/${org.admin.userId}` },
    ];
    for (const a of attempts) {
      const res = await ctx().inject({ ...a, headers: bearer(accessToken) });
      assert.equal(res.statusCode, 403, `${a.method} ${a.url}: ${res.body}`);
      assert.match(String(res.headers['www-authenticate']), /insufficient_scope/);
    }
    const keys = await ctx().deps.db.selectFrom('api_keys').select('id').where('org_id', '=', org.orgId).execute();
    assert.equal(keys.length, 0);
  });

  it('tessera.read reads but changes nothing; tessera.api acts but never creates lasting credentials', async () => {
    const org = await createTestOrg(ctx());
    const read = await tokenFor(ctx(), org, org.admin, 'openid tessera.read');
    assert.equal(
      (await ctx().inject({ method: 'GET', url: '/v1/security/groups', headers: bearer(read.accessToken) })).statusCode,
      200,
    );
    // list-api-keys is a read sent as POST (the reference's shape): tessera.read reaches it.
    const list = await ctx().inject({
      method: 'POST',
      url: '/api/v1/api-key/list-api-keys',
      headers: bearer(read.accessToken),
      payload: {},
    });
    assert.equal(list.statusCode, 200, list.body);
    const write = await ctx().inject({
      method: 'POST',
      url: '/v1/security/groups',
      headers: bearer(read.accessToken),
      payload: { groupName: 'g-read' },
    });
    assert.equal(write.statusCode, 403, write.body);

    const api = await tokenFor(ctx(), org, org.admin, 'openid tessera.api');
    const group = await ctx().inject({
      method: 'POST',
      url: '/v1/security/groups',
      headers: bearer(api.accessToken),
      payload: { groupName: 'g-api' },
    });
    assert.equal(group.statusCode, 201, group.body);
    for (const [url, payload] of [
      [CREATE, { name: 'k', roleId: org.roles.viewer }],
      ['/v1/oauth2/clients', { name: 'x', redirectUris: ['https://evil.example/cb'] }],
      [
        '/v1/user',
        {
          username: `u${Date.now()}`,
          email: 'u@example.test',
          firstName: 'U',
          lastName: 'U',
          friendlyName: 'U',
          userRoleId: org.roles.viewer,
          accountType: 'local',
          password: 'Very-Long-Passw0rd!',
          groups: [org.groups.everyone],
        },
      ],
    ] as const) {
      const res = await ctx().inject({ method: 'POST', url, headers: bearer(api.accessToken), payload });
      assert.equal(res.statusCode, 403, `${url}: ${res.body}`);
      assert.match(json(res).message, /own sign-in/);
    }
  });

  it('only offline_access earns a refresh token', async () => {
    const org = await createTestOrg(ctx());
    const user = await createTestUser(ctx(), org);
    const withOffline = await tokenFor(ctx(), org, user, 'openid offline_access');
    assert.ok(withOffline.refreshToken?.startsWith('rt_'));
    const without = await tokenFor(ctx(), org, user, 'openid profile email');
    assert.equal(without.refreshToken, undefined);
  });

  it('the consent page names what each scope allows, and unknown scopes are refused', async () => {
    const org = await createTestOrg(ctx());
    const reg = json(
      await ctx().inject({
        method: 'POST',
        url: '/v1/oauth2/clients',
        headers: org.admin.headers,
        payload: { name: 'App', redirectUris: ['http://127.0.0.1:9/cb'] },
      }),
    );
    const url = `/v1/oauth2/authorize?client_id=${reg.clientId}&redirect_uri=${encodeURIComponent('http://127.0.0.1:9/cb')}&response_type=code&scope=${encodeURIComponent('openid tessera.api')}&code_challenge=${'a'.repeat(43)}&code_challenge_method=S256`;
    const page = await ctx().inject({ method: 'GET', url });
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /tessera\.api<\/code>: Read and change/);
    assert.match(page.body, /except creating API keys, users, passwords or OAuth clients/);
    const bad = await signInThroughPage(
      ctx().app,
      new URL(`http://x${url.replace('tessera.api', 'admin')}`),
      org.admin,
    );
    assert.equal(bad.statusCode, 303);
    assert.match(String(bad.headers.location), /error=invalid_scope/);
  });

  it('deleting the client ends everything it issued, for every user, at once; it never held a lasting credential', async () => {
    const org = await createTestOrg(ctx());
    const user = await createTestUser(ctx(), org, {
      privileges: ['user_management', 'api_key_management', 'impersonate', 'download'],
    });
    const clientId = await registerClient(ctx(), org.admin.headers);
    const adminToken = await tokenFor(ctx(), org, org.admin, 'openid offline_access tessera.api', { clientId });
    const userToken = await tokenFor(ctx(), org, user, 'openid profile');
    const userSameClient = await tokenFor(ctx(), org, user, 'openid offline_access tessera.read', { clientId });
    const pending = await authorizationCode(ctx(), clientId, user, 'openid tessera.api');
    const firstParty = await login(ctx(), user);
    const other = await tokenFor(ctx(), org, user, 'openid tessera.read');
    for (const t of [adminToken, userSameClient, other])
      assert.equal(
        (await ctx().inject({ method: 'GET', url: '/v1/user', headers: bearer(t.accessToken) })).statusCode,
        200,
      );
    // The client rotates its refresh token once: both the rotated and the current one must die.
    const rotated = await refreshAtClient(ctx(), clientId, adminToken.refreshToken!);
    assert.equal(rotated.statusCode, 200, rotated.body);
    const currentRefresh = json(rotated).refresh_token as string;

    // Whatever it tries, its tessera.api token of an administrator mints no lasting credential.
    const before = await countCredentials(ctx(), org);
    const attempts = [
      { method: 'POST' as const, url: CREATE, payload: { name: 'k', roleId: org.roles.administrator } },
      {
        method: 'POST' as const,
        url: '/v1/user',
        payload: {
          username: 'mallory',
          email: 'm@example.test',
          firstName: 'M',
          lastName: 'M',
          friendlyName: 'M',
          userRoleId: org.roles.administrator,
          accountType: 'local',
          password: 'Very-Long-Passw0rd!',
          groups: [org.groups.everyone],
        },
      },
      {
        method: 'POST' as const,
        url: '/v1/oauth2/clients',
        payload: { name: 'x', redirectUris: ['https://evil.example/cb'] },
      },
      { method: 'POST' as const, url: '/v1/auth/impersonate', payload: { username: user.username } },
      {
        method: 'PUT' as const,
        url: '/v1/user/password',
        payload: { currentPassword: org.admin.password, newPassword: 'A-new-passw0rd-here' },
      },
      {
        method: 'PUT' as const,
        url: `/v1/user/${user.userId}/password`,
        payload: { newPassword: 'A-new-passw0rd-here' },
      },
    ];
    for (const a of attempts) {
      const res = await ctx().inject({ ...a, headers: bearer(adminToken.accessToken) });
      assert.equal(res.statusCode, 403, `${a.method} ${a.url}: ${res.body}`);
      assert.match(json(res).message, /own sign-in: a third-party \(OAuth\) token cannot/);
    }
    assert.deepEqual(await countCredentials(ctx(), org), before);

    const del = await ctx().inject({
      method: 'DELETE',
      url: `/v1/oauth2/clients/${clientId}`,
      headers: org.admin.headers,
    });
    assert.equal(del.statusCode, 204, del.body);
    // Its access tokens stop at the next request, for every user.
    for (const t of [adminToken, userSameClient])
      assert.equal(
        (await ctx().inject({ method: 'GET', url: '/v1/user', headers: bearer(t.accessToken) })).statusCode,
        401,
      );
    // Its sessions (the refresh families) are ended in the database, not merely unreachable because the client is gone.
    const sessions = await ctx()
      .deps.db.selectFrom('auth_sessions')
      .select(['revoked_at', 'revoked_reason'])
      .where('client_id', '=', clientId)
      .execute();
    assert.equal(sessions.length, 2);
    for (const s of sessions) assert.equal(s.revoked_reason, 'client_deleted');
    // Neither refresh token works anywhere, and the code it had not exchanged yet is gone.
    for (const rt of [adminToken.refreshToken!, currentRefresh, userSameClient.refreshToken!]) {
      assert.equal((await refreshAtClient(ctx(), clientId, rt)).statusCode, 401);
      assert.equal(
        (await ctx().inject({ method: 'POST', url: '/v1/auth/token', payload: { refreshToken: rt } })).statusCode,
        401,
      );
    }
    assert.equal((await exchangeCode(ctx(), clientId, pending)).statusCode, 401);
    assert.equal(
      (await ctx().deps.db.selectFrom('oauth_codes').select('code_hash').where('client_id', '=', clientId).execute())
        .length,
      0,
    );
    // Other clients' tokens and the person's own sign-in are untouched.
    assert.equal(
      (await ctx().inject({ method: 'GET', url: '/v1/user', headers: bearer(other.accessToken) })).statusCode,
      200,
    );
    assert.equal(
      (await ctx().inject({ method: 'GET', url: '/v1/user', headers: bearer(userToken.accessToken) })).statusCode,
      200,
    );
    assert.equal(
      (await ctx().inject({ method: 'GET', url: '/v1/user', headers: { accesstoken: firstParty.session.accessToken } }))
        .statusCode,
      200,
    );
  });

  it('revoking consent ends every token the client holds for that person (and only those)', async () => {
    const org = await createTestOrg(ctx());
    const user = await createTestUser(ctx(), org);
    const userHeaders = await loginHeaders(ctx(), user);
    const clientId = await registerClient(ctx(), org.admin.headers, 'Photo app');
    const a1 = await tokenFor(ctx(), org, user, 'openid offline_access tessera.api', { clientId });
    const a2 = await tokenFor(ctx(), org, user, 'openid', { clientId });
    const pending = await authorizationCode(ctx(), clientId, user, 'openid offline_access');
    const someoneElse = await tokenFor(ctx(), org, org.admin, 'openid offline_access', { clientId });
    const otherClient = await tokenFor(ctx(), org, user, 'openid tessera.read');

    const listed = json(await ctx().inject({ method: 'GET', url: '/v1/oauth2/consents', headers: userHeaders }));
    const photo = listed.consents.find((c: { clientId: string }) => c.clientId === clientId);
    assert.deepEqual(
      { name: photo.name, scopes: photo.scopes, sessions: photo.sessions },
      { name: 'Photo app', scopes: ['offline_access', 'openid', 'tessera.api'], sessions: 2 },
    );
    assert.equal(listed.consents.length, 2);

    const res = await ctx().inject({ method: 'DELETE', url: `/v1/oauth2/consents/${clientId}`, headers: userHeaders });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(json(res), { revoked: 2 });
    for (const t of [a1, a2])
      assert.equal(
        (await ctx().inject({ method: 'GET', url: '/v1/user', headers: bearer(t.accessToken) })).statusCode,
        401,
      );
    const refreshed = await refreshAtClient(ctx(), clientId, a1.refreshToken!);
    assert.equal(refreshed.statusCode, 400, refreshed.body);
    assert.equal(json(refreshed).error, 'invalid_grant');
    const exchanged = await exchangeCode(ctx(), clientId, pending);
    assert.equal(exchanged.statusCode, 400, exchanged.body);
    assert.equal(json(exchanged).error, 'invalid_grant');
    // The client still serves other people, and the person's other clients keep working.
    assert.equal(
      (await ctx().inject({ method: 'GET', url: '/v1/user', headers: bearer(someoneElse.accessToken) })).statusCode,
      200,
    );
    assert.equal((await refreshAtClient(ctx(), clientId, someoneElse.refreshToken!)).statusCode, 200);
    assert.equal(
      (await ctx().inject({ method: 'GET', url: '/v1/user', headers: bearer(otherClient.accessToken) })).statusCode,
      200,
    );
    const after = json(await ctx().inject({ method: 'GET', url: '/v1/oauth2/consents', headers: userHeaders }));
    assert.deepEqual(
      after.consents.map((c: { clientId: string }) => c.clientId),
      [otherClient.clientId],
    );
    // Revoking again changes and records nothing.
    assert.deepEqual(
      json(await ctx().inject({ method: 'DELETE', url: `/v1/oauth2/consents/${clientId}`, headers: userHeaders })),
      { revoked: 0 },
    );
    const audits = await ctx()
      .deps.db.selectFrom('audit_log')
      .select(['actor_id', 'target_id'])
      .where('org_id', '=', org.orgId)
      .where('action', '=', 'oauth.consent.revoke')
      .execute();
    assert.deepEqual(audits, [{ actor_id: user.userId, target_id: clientId }]);
    // A client of another organization, an unknown one and a malformed id.
    const stranger = await createTestOrg(ctx());
    const foreign = await registerClient(ctx(), stranger.admin.headers);
    assert.equal(
      (await ctx().inject({ method: 'DELETE', url: `/v1/oauth2/consents/${foreign}`, headers: userHeaders }))
        .statusCode,
      404,
    );
    assert.equal(
      (
        await ctx().inject({
          method: 'DELETE',
          url: '/v1/oauth2/consents/01a2082c-5ea1-7911-b418-8f733df68092',
          headers: userHeaders,
        })
      ).statusCode,
      404,
    );
    const malformed = await ctx().inject({ method: 'DELETE', url: '/v1/oauth2/consents/nope', headers: userHeaders });
    assert.equal(malformed.statusCode, 400);
    assert.equal(json(malformed).details[0].field, 'path.clientId');
  });

  it('ending one OAuth session from the session list ends that token', async () => {
    const org = await createTestOrg(ctx());
    const api = await tokenFor(ctx(), org, org.admin, 'openid tessera.api');
    const sessions = json(await ctx().inject({ method: 'GET', url: '/v1/auth/sessions', headers: org.admin.headers }));
    const oauthSession = sessions.sessions.find(
      (s: { kind: string; clientId: string }) => s.kind === 'oauth' && s.clientId === api.clientId,
    );
    assert.ok(oauthSession);
    const res = await ctx().inject({
      method: 'DELETE',
      url: `/v1/auth/sessions/${oauthSession.id}`,
      headers: org.admin.headers,
    });
    assert.equal(res.statusCode, 204, res.body);
    assert.equal(
      (await ctx().inject({ method: 'GET', url: '/v1/user', headers: bearer(api.accessToken) })).statusCode,
      401,
    );
  });

  securitySuite(ctx, '/v1/oauth2/consents', { method: 'GET', prepare: () => ({ url: '/v1/oauth2/consents' }) });
  securitySuite(ctx, '/v1/oauth2/consents/{clientId}', {
    method: 'DELETE',
    resource: true,
    prepare: async (c, org) => ({ url: `/v1/oauth2/consents/${await registerClient(c, org.admin.headers)}` }),
  });
});

/** API keys, people and OAuth clients of an organization. */
async function countCredentials(ctx: TestContext, org: TestOrg) {
  const count = async (table: 'api_keys' | 'users' | 'oauth_clients') =>
    (await ctx.deps.db.selectFrom(table).select('id').where('org_id', '=', org.orgId).execute()).length;
  return {
    apiKeys: await count('api_keys'),
    users: await count('users'),
    clients: await count('oauth_clients'),
    impersonations: (
      await ctx.deps.db
        .selectFrom('auth_sessions')
        .select('id')
        .where('org_id', '=', org.orgId)
        .where('kind', '=', 'impersonation')
        .execute()
    ).length,
  };
}
