import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine, json, type TestContext } from '../../../test/helpers/context.ts';
import { CREATE } from '../../../test/helpers/api-keys.ts';
import { createTestOrg, createTestUser, type TestOrg, type TestUser } from '../../../test/helpers/factories.ts';
import { oauthTokenFor, signInThroughPage } from '../../../test/helpers/oauth.ts';

// Issue 8, item 1: OAuth scopes are enforced in the credential check, and a third-party token
// never creates lasting credentials.

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function tokenFor(ctx: TestContext, org: TestOrg, user: TestUser, scope: string) {
  return oauthTokenFor(ctx, org.admin.headers, user, scope);
}

forEachEngine('OAuth scopes', (ctx) => {
  it('an openid-only token reaches the caller\'s own identity and nothing else', async () => {
    const org = await createTestOrg(ctx());
    const { accessToken, refreshToken } = await tokenFor(ctx(), org, org.admin, 'openid');
    assert.equal(refreshToken, undefined, 'no offline_access, no refresh token');
    const me = await ctx().inject({ method: 'GET', url: '/v1/user', headers: bearer(accessToken) });
    assert.equal(me.statusCode, 200, me.body);
    assert.equal(json(me).userId, org.admin.userId);
    const attempts = [
      { method: 'POST' as const, url: CREATE, payload: { name: 'k', roleId: org.roles.administrator } },
      { method: 'POST' as const, url: '/v1/user', payload: { username: 'mallory', email: 'm@example.test', firstName: 'M', lastName: 'M', friendlyName: 'M', userRoleId: org.roles.administrator, accountType: 'local', password: 'Very-Long-Passw0rd!', groups: [] } },
      { method: 'POST' as const, url: '/v1/oauth2/clients', payload: { name: 'x', redirectUris: ['https://evil.example/cb'] } },
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
    assert.equal((await ctx().inject({ method: 'GET', url: '/v1/security/groups', headers: bearer(read.accessToken) })).statusCode, 200);
    const write = await ctx().inject({ method: 'POST', url: '/v1/security/groups', headers: bearer(read.accessToken), payload: { groupName: 'g-read' } });
    assert.equal(write.statusCode, 403, write.body);

    const api = await tokenFor(ctx(), org, org.admin, 'openid tessera.api');
    const group = await ctx().inject({ method: 'POST', url: '/v1/security/groups', headers: bearer(api.accessToken), payload: { groupName: 'g-api' } });
    assert.equal(group.statusCode, 201, group.body);
    for (const [url, payload] of [
      [CREATE, { name: 'k', roleId: org.roles.viewer }],
      ['/v1/oauth2/clients', { name: 'x', redirectUris: ['https://evil.example/cb'] }],
      ['/v1/user', { username: `u${Date.now()}`, email: 'u@example.test', firstName: 'U', lastName: 'U', friendlyName: 'U', userRoleId: org.roles.viewer, accountType: 'local', password: 'Very-Long-Passw0rd!', groups: [org.groups.everyone] }],
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
    const reg = json(await ctx().inject({ method: 'POST', url: '/v1/oauth2/clients', headers: org.admin.headers, payload: { name: 'App', redirectUris: ['http://127.0.0.1:9/cb'] } }));
    const url = `/v1/oauth2/authorize?client_id=${reg.clientId}&redirect_uri=${encodeURIComponent('http://127.0.0.1:9/cb')}&response_type=code&scope=${encodeURIComponent('openid tessera.api')}&code_challenge=${'a'.repeat(43)}&code_challenge_method=S256`;
    const page = await ctx().inject({ method: 'GET', url });
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /tessera\.api<\/code>: Read and change/);
    assert.match(page.body, /except creating API keys, users, passwords or OAuth clients/);
    const bad = await signInThroughPage(ctx().app, new URL(`http://x${url.replace('tessera.api', 'admin')}`), org.admin);
    assert.equal(bad.statusCode, 303);
    assert.match(String(bad.headers.location), /error=invalid_scope/);
  });

  it('deleting the client ends every token it issued, and nothing it did outlives it', async () => {
    const org = await createTestOrg(ctx());
    const api = await tokenFor(ctx(), org, org.admin, 'openid offline_access tessera.api');
    assert.equal((await ctx().inject({ method: 'GET', url: '/v1/user', headers: bearer(api.accessToken) })).statusCode, 200);
    const key = await ctx().inject({ method: 'POST', url: CREATE, headers: bearer(api.accessToken), payload: { name: 'k', roleId: org.roles.administrator } });
    assert.equal(key.statusCode, 403);
    const del = await ctx().inject({ method: 'DELETE', url: `/v1/oauth2/clients/${api.clientId}`, headers: org.admin.headers });
    assert.equal(del.statusCode, 204);
    assert.equal((await ctx().inject({ method: 'GET', url: '/v1/user', headers: bearer(api.accessToken) })).statusCode, 401);
    const refresh = await ctx().app.inject({
      method: 'POST', url: '/v1/oauth2/token', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: api.refreshToken!, client_id: api.clientId }).toString(),
    });
    assert.equal(refresh.statusCode, 401);
  });

  it('revoking consent (ending the session) ends the token', async () => {
    const org = await createTestOrg(ctx());
    const api = await tokenFor(ctx(), org, org.admin, 'openid tessera.api');
    const sessions = json(await ctx().inject({ method: 'GET', url: '/v1/auth/sessions', headers: org.admin.headers }));
    const oauthSession = sessions.sessions.find((s: { kind: string; clientId: string }) => s.kind === 'oauth' && s.clientId === api.clientId);
    assert.ok(oauthSession);
    const res = await ctx().inject({ method: 'DELETE', url: `/v1/auth/sessions/${oauthSession.id}`, headers: org.admin.headers });
    assert.equal(res.statusCode, 204, res.body);
    assert.equal((await ctx().inject({ method: 'GET', url: '/v1/user', headers: bearer(api.accessToken) })).statusCode, 401);
  });
});
