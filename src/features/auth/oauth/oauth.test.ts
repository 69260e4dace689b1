import assert from 'node:assert/strict';
import { it } from 'node:test';
import * as oauth from 'oauth4webapi';
import { forEachEngine, json, type TestContext } from '../../../../test/helpers/context.ts';
import { createTestOrg, createTestUser, type TestOrg } from '../../../../test/helpers/factories.ts';
import { loginForm, oauthOptions, signInThroughPage } from '../../../../test/helpers/oauth.ts';
import { securitySuite } from '../../../../test/helpers/security.ts';
import { ensureWebAppClient, webAppClientRowId } from './clients/web-app-client.ts';

const REDIRECT = 'http://127.0.0.1:9/callback';

async function discover(ctx: TestContext) {
  const issuer = new URL(ctx.config.publicUrl);
  return oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { ...oauthOptions(ctx.app), algorithm: 'oidc' }),
  );
}

async function registerClient(ctx: TestContext, org: TestOrg, confidential = false) {
  const res = await ctx.inject({
    method: 'POST',
    url: '/v1/oauth2/clients',
    headers: org.admin.headers,
    payload: { name: 'Test <App>', redirectUris: [REDIRECT], confidential },
  });
  assert.equal(res.statusCode, 201, res.body);
  return json(res);
}

async function authorizationUrl(
  as: oauth.AuthorizationServer,
  clientId: string,
  overrides: Record<string, string> = {},
) {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const nonce = oauth.generateRandomNonce();
  const url = new URL(as.authorization_endpoint!);
  const params = {
    client_id: clientId,
    redirect_uri: REDIRECT,
    response_type: 'code',
    scope: 'openid email offline_access',
    state,
    nonce,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    ...overrides,
  };
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return { url, verifier, state, nonce };
}

/** Runs the whole flow up to the token response. */
async function codeFlow(
  ctx: TestContext,
  org: TestOrg,
  user: { username: string; password: string },
  options: { confidential?: boolean } = {},
) {
  const registered = await registerClient(ctx, org, options.confidential);
  const as = await discover(ctx);
  const client: oauth.Client = { client_id: registered.clientId, id_token_signed_response_alg: 'EdDSA' };
  const auth = options.confidential ? oauth.ClientSecretBasic(registered.clientSecret) : oauth.None();
  const { url, verifier, state, nonce } = await authorizationUrl(as, registered.clientId);
  const submitted = await signInThroughPage(ctx.app, url, user);
  assert.equal(submitted.statusCode, 303, submitted.body);
  const callback = oauth.validateAuthResponse(as, client, new URL(String(submitted.headers.location)), state);
  const exchange = () =>
    oauth.authorizationCodeGrantRequest(as, client, auth, callback, REDIRECT, verifier, oauthOptions(ctx.app));
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, await exchange(), {
    expectedNonce: nonce,
    requireIdToken: true,
  });
  return { as, client, auth, tokens, exchange, registered, callback, verifier };
}

const me = (ctx: TestContext, token: string) =>
  ctx.inject({ method: 'GET', url: '/v1/user', headers: { authorization: `Bearer ${token}` } });

forEachEngine('oauth2 authorization code flow', (ctx) => {
  it('publishes discovery metadata and a JWKS that oauth4webapi accepts', async () => {
    const as = await discover(ctx());
    assert.equal(as.issuer, ctx().config.publicUrl);
    assert.deepEqual(as.code_challenge_methods_supported, ['S256']);
    const jwks = json(await ctx().inject({ method: 'GET', url: '/.well-known/jwks.json' }));
    assert.ok(jwks.keys.length >= 1);
    assert.equal(jwks.keys[0].kty, 'OKP');
    assert.equal(jwks.keys[0].d, undefined, 'no private part');
  });

  it('code + PKCE with a public client: tokens work as Bearer, refresh rotates, revoke ends the session', async () => {
    const org = await createTestOrg(ctx());
    const user = await createTestUser(ctx(), org);
    const { as, client, auth, tokens } = await codeFlow(ctx(), org, user);
    assert.equal(tokens.token_type, 'bearer');
    assert.equal(tokens.expires_in, 3600);
    const claims = oauth.getValidatedIdTokenClaims(tokens)!;
    assert.equal(claims.sub, user.userId);
    assert.equal(claims.aud, client.client_id);
    const res = await me(ctx(), tokens.access_token);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(json(res).userId, user.userId);

    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token!, oauthOptions(ctx().app)),
    );
    assert.notEqual(refreshed.refresh_token, tokens.refresh_token);
    assert.equal((await me(ctx(), refreshed.access_token)).statusCode, 200);

    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, client, auth, refreshed.refresh_token!, oauthOptions(ctx().app)),
    );
    assert.equal((await me(ctx(), refreshed.access_token)).statusCode, 401);
    assert.equal((await me(ctx(), tokens.access_token)).statusCode, 401);
    // RFC 7009: unknown tokens are answered 200 too.
    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, client, auth, 'no-such-token', oauthOptions(ctx().app)),
    );
    // With no body (RFC 7009 §2.2; /openapi.json declares none), not a JSON `null`.
    const raw = await ctx().inject({
      method: 'POST',
      url: '/v1/oauth2/revoke',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `token=no-such-token&client_id=${encodeURIComponent(client.client_id)}`,
    });
    assert.equal(raw.statusCode, 200, raw.body);
    assert.equal(raw.body, '');
    assert.equal(raw.headers['content-type'], undefined);
  });

  it('a replayed code is refused and revokes the tokens it issued', async () => {
    const org = await createTestOrg(ctx());
    const { as, client, tokens, exchange } = await codeFlow(ctx(), org, org.admin);
    assert.equal((await me(ctx(), tokens.access_token)).statusCode, 200);
    const replay = await exchange();
    assert.equal(replay.status, 400);
    assert.equal(((await replay.json()) as { error: string }).error, 'invalid_grant');
    assert.equal((await me(ctx(), tokens.access_token)).statusCode, 401);
    const refresh = await oauth.refreshTokenGrantRequest(
      as,
      client,
      oauth.None(),
      tokens.refresh_token!,
      oauthOptions(ctx().app),
    );
    assert.equal(refresh.status, 400);
  });

  it('refuses a PKCE mismatch, a wrong redirect_uri at the token endpoint and a missing verifier', async () => {
    const org = await createTestOrg(ctx());
    const registered = await registerClient(ctx(), org);
    const as = await discover(ctx());
    const client: oauth.Client = { client_id: registered.clientId, id_token_signed_response_alg: 'EdDSA' };
    const token = (body: Record<string, string>) =>
      ctx().inject({
        method: 'POST',
        url: '/v1/oauth2/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({
          client_id: registered.clientId,
          grant_type: 'authorization_code',
          ...body,
        }).toString(),
      });
    const codeFor = async () => {
      const { url, state, verifier } = await authorizationUrl(as, registered.clientId);
      const submitted = await signInThroughPage(ctx().app, url, org.admin);
      return {
        code: oauth.validateAuthResponse(as, client, new URL(String(submitted.headers.location)), state).get('code')!,
        verifier,
      };
    };
    const a = await codeFor();
    const wrong = await token({
      code: a.code,
      redirect_uri: REDIRECT,
      code_verifier: oauth.generateRandomCodeVerifier(),
    });
    assert.equal(wrong.statusCode, 400);
    assert.equal(json(wrong).error, 'invalid_grant');
    assert.equal(
      (await token({ code: a.code, redirect_uri: REDIRECT, code_verifier: a.verifier })).statusCode,
      400,
      'a failed PKCE check burns the code',
    );
    const b = await codeFor();
    assert.equal(
      json(await token({ code: b.code, redirect_uri: 'http://127.0.0.1:9/other', code_verifier: b.verifier })).error,
      'invalid_grant',
    );
    const c = await codeFor();
    assert.equal(json(await token({ code: c.code, redirect_uri: REDIRECT })).error, 'invalid_request');
    assert.equal(
      json(await token({ code: c.code, redirect_uri: REDIRECT, code_verifier: c.verifier, grant_type: 'password' }))
        .error,
      'unsupported_grant_type',
    );
  });

  it('the authorize endpoint refuses plain PKCE, unknown clients and unregistered redirect URIs', async () => {
    const org = await createTestOrg(ctx());
    const registered = await registerClient(ctx(), org);
    const as = await discover(ctx());
    const get = (url: URL) => ctx().inject({ method: 'GET', url: url.pathname + url.search });
    const plain = await get((await authorizationUrl(as, registered.clientId, { code_challenge_method: 'plain' })).url);
    assert.equal(plain.statusCode, 303);
    const location = new URL(String(plain.headers.location));
    assert.equal(location.searchParams.get('error'), 'invalid_request');
    assert.ok(location.searchParams.get('state'));
    assert.equal(location.searchParams.get('iss'), ctx().config.publicUrl);
    const noChallenge = new URL((await authorizationUrl(as, registered.clientId)).url);
    noChallenge.searchParams.delete('code_challenge');
    assert.equal(
      new URL(String((await get(noChallenge)).headers.location)).searchParams.get('error'),
      'invalid_request',
    );
    const token = await get((await authorizationUrl(as, registered.clientId, { response_type: 'token' })).url);
    assert.equal(new URL(String(token.headers.location)).searchParams.get('error'), 'unsupported_response_type');
    const bad: Record<string, string>[] = [
      { redirect_uri: 'http://127.0.0.1:9/callback/' },
      { redirect_uri: 'https://evil.example/callback' },
      { client_id: '00000000-0000-4000-8000-000000000000' },
    ];
    for (const overrides of bad) {
      const res = await get((await authorizationUrl(as, registered.clientId, overrides)).url);
      assert.equal(res.statusCode, 400, JSON.stringify(overrides));
      assert.equal(res.headers.location, undefined, 'never redirects to an unverified URI');
      assert.match(String(res.headers['content-type']), /text\/html/);
    }
  });

  it('the login page is real HTML with CSP, frame protection and CSRF protection', async () => {
    const org = await createTestOrg(ctx());
    const registered = await registerClient(ctx(), org);
    const as = await discover(ctx());
    const { url } = await authorizationUrl(as, registered.clientId);
    const page = await ctx().inject({ method: 'GET', url: url.pathname + url.search });
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    const csp = String(page.headers['content-security-policy']);
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.match(csp, /form-action 'self' http:\/\/127\.0\.0\.1:9/);
    assert.equal(page.headers['x-frame-options'], 'DENY');
    assert.match(page.body, /Test &lt;App&gt;/, 'client name is escaped');
    assert.match(page.body, /<input id="password" name="password" type="password"/);
    const { fields, cookie } = loginForm(page);
    assert.match(cookie, /^tessera_oauth_csrf=/);
    assert.match(String(page.headers['set-cookie']), /HttpOnly; SameSite=Strict/);
    const post = (headers: Record<string, string>, extra: Record<string, string> = {}) =>
      ctx().inject({
        method: 'POST',
        url: '/v1/oauth2/authorize',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        payload: new URLSearchParams({
          ...fields,
          username: org.admin.username,
          password: org.admin.password,
          decision: 'allow',
          ...extra,
        }).toString(),
      });
    assert.equal((await post({})).statusCode, 403, 'no cookie');
    assert.equal(
      (await post({ cookie: `tessera_oauth_csrf=${'x'.repeat(43)}` })).statusCode,
      403,
      'cookie of another browser',
    );
    assert.equal((await post({ cookie }, { csrf: 'forged' })).statusCode, 403);
    const wrong = await post({ cookie }, { password: 'wrong-password-x' });
    assert.equal(wrong.statusCode, 401);
    assert.match(wrong.body, /Incorrect username or password/);
    assert.equal(wrong.headers.location, undefined);
    const deny = await post({ cookie }, { decision: 'deny' });
    assert.equal(deny.statusCode, 303);
    assert.equal(new URL(String(deny.headers.location)).searchParams.get('error'), 'access_denied');
    const ok = await post({ cookie });
    assert.equal(ok.statusCode, 303);
    assert.ok(new URL(String(ok.headers.location)).searchParams.get('code'));
  });

  it('users of another organization cannot sign in to a client', async () => {
    const org = await createTestOrg(ctx());
    const other = await createTestOrg(ctx());
    const registered = await registerClient(ctx(), org);
    const { url } = await authorizationUrl(await discover(ctx()), registered.clientId);
    const res = await signInThroughPage(ctx().app, url, other.admin);
    assert.equal(res.statusCode, 401);
    assert.equal(res.headers.location, undefined);
  });

  it('confidential clients must authenticate at the token endpoint', async () => {
    const org = await createTestOrg(ctx());
    const flow = await codeFlow(ctx(), org, org.admin, { confidential: true });
    assert.match(flow.registered.clientSecret, /^tcs_/);
    const bad = await oauth.refreshTokenGrantRequest(
      flow.as,
      flow.client,
      oauth.ClientSecretPost('tcs_wrong'),
      flow.tokens.refresh_token!,
      oauthOptions(ctx().app),
    );
    assert.equal(bad.status, 401);
    assert.equal(((await bad.json()) as { error: string }).error, 'invalid_client');
    const none = await oauth.refreshTokenGrantRequest(
      flow.as,
      flow.client,
      oauth.None(),
      flow.tokens.refresh_token!,
      oauthOptions(ctx().app),
    );
    assert.equal(none.status, 401);
    const good = await oauth.refreshTokenGrantRequest(
      flow.as,
      flow.client,
      oauth.ClientSecretPost(flow.registered.clientSecret),
      flow.tokens.refresh_token!,
      oauthOptions(ctx().app),
    );
    assert.equal(good.status, 200);
    const listed = json(await ctx().inject({ method: 'GET', url: '/v1/oauth2/clients', headers: org.admin.headers }));
    assert.equal(listed.clients.length, 1);
    assert.equal(listed.clients[0].clientSecret, undefined, 'the secret is never shown again');
    assert.equal(listed.clients[0].confidential, true);
  });

  it('deleting a client ends its sessions', async () => {
    const org = await createTestOrg(ctx());
    const { tokens, registered } = await codeFlow(ctx(), org, org.admin);
    assert.equal((await me(ctx(), tokens.access_token)).statusCode, 200);
    assert.equal(
      (
        await ctx().inject({
          method: 'DELETE',
          url: `/v1/oauth2/clients/${registered.clientId}`,
          headers: org.admin.headers,
        })
      ).statusCode,
      204,
    );
    assert.equal((await me(ctx(), tokens.access_token)).statusCode, 401);
    assert.equal(
      (
        await ctx().inject({
          method: 'GET',
          url: `/v1/oauth2/clients/${registered.clientId}`,
          headers: org.admin.headers,
        })
      ).statusCode,
      404,
    );
  });

  it('client registration validates redirect URIs', async () => {
    const org = await createTestOrg(ctx());
    for (const uri of ['not a uri', 'http://example.com/cb', 'https://example.com/cb#frag', 'javascript:alert(1)']) {
      const res = await ctx().inject({
        method: 'POST',
        url: '/v1/oauth2/clients',
        headers: org.admin.headers,
        payload: { name: 'x', redirectUris: [uri] },
      });
      assert.equal(res.statusCode, 400, uri);
      assert.equal(json(res).details[0].field, 'body.redirectUris.0');
    }
    for (const uri of ['https://app.example/cb?x=1', 'http://localhost:3000/cb', 'com.example.app:/oauth']) {
      assert.equal(
        (
          await ctx().inject({
            method: 'POST',
            url: '/v1/oauth2/clients',
            headers: org.admin.headers,
            payload: { name: 'x', redirectUris: [uri] },
          })
        ).statusCode,
        201,
        uri,
      );
    }
  });

  it('renames a client and replaces its redirect URIs: the old URI is refused, the new one works, bad ones name the field', async () => {
    const org = await createTestOrg(ctx());
    const registered = await registerClient(ctx(), org);
    const NEW = 'http://127.0.0.1:9/new-callback';
    const patch = (payload: unknown, id = registered.clientId) =>
      ctx().inject({ method: 'PATCH', url: `/v1/oauth2/clients/${id}`, headers: org.admin.headers, payload });
    const bad = await patch({ redirectUris: [NEW, 'http://example.com/cb'] });
    assert.equal(bad.statusCode, 400, bad.body);
    assert.equal(json(bad).details[0].field, 'body.redirectUris.1');
    assert.equal((await patch({ name: '' })).statusCode, 400);
    const changed = await patch({ name: 'Renamed', redirectUris: [NEW, NEW] });
    assert.equal(changed.statusCode, 200, changed.body);
    assert.deepEqual(
      { name: json(changed).name, redirectUris: json(changed).redirectUris, builtIn: json(changed).builtIn },
      { name: 'Renamed', redirectUris: [NEW], builtIn: false },
    );
    const shown = json(
      await ctx().inject({
        method: 'GET',
        url: `/v1/oauth2/clients/${registered.clientId}`,
        headers: org.admin.headers,
      }),
    );
    assert.equal(shown.name, 'Renamed');
    assert.deepEqual(shown.redirectUris, [NEW]);
    const as = await discover(ctx());
    const old = await authorizationUrl(as, registered.clientId);
    const refused = await ctx().inject({ method: 'GET', url: old.url.pathname + old.url.search });
    assert.equal(refused.statusCode, 400, 'the old redirect URI is no longer registered');
    const fresh = await authorizationUrl(as, registered.clientId, { redirect_uri: NEW });
    const page = await ctx().inject({ method: 'GET', url: fresh.url.pathname + fresh.url.search });
    assert.equal(page.statusCode, 200, page.body);
    assert.match(page.body, /Renamed/);
    assert.equal((await patch({ name: 'x' }, '01a2082c-5ea1-7911-b418-8f733df68092')).statusCode, 404);
  });

  it('rotates a confidential client secret: the old secret stops working, the new one works, shown once', async () => {
    const org = await createTestOrg(ctx());
    const flow = await codeFlow(ctx(), org, org.admin, { confidential: true });
    const rotate = (id: string) =>
      ctx().inject({ method: 'POST', url: `/v1/oauth2/clients/${id}/secret`, headers: org.admin.headers });
    const res = await rotate(flow.registered.clientId);
    assert.equal(res.statusCode, 200, res.body);
    const rotated = json(res);
    assert.match(rotated.clientSecret, /^tcs_/);
    assert.notEqual(rotated.clientSecret, flow.registered.clientSecret);
    assert.equal(rotated.confidential, true);
    const refresh = (secret: string) =>
      oauth.refreshTokenGrantRequest(
        flow.as,
        flow.client,
        oauth.ClientSecretBasic(secret),
        flow.tokens.refresh_token!,
        oauthOptions(ctx().app),
      );
    assert.equal((await refresh(flow.registered.clientSecret)).status, 401, 'the old secret is refused');
    assert.equal((await refresh(rotated.clientSecret)).status, 200, 'the new secret works');
    const listed = json(await ctx().inject({ method: 'GET', url: '/v1/oauth2/clients', headers: org.admin.headers }));
    assert.equal(listed.clients[0].clientSecret, undefined);
    // A public client has no secret to rotate.
    const pub = await registerClient(ctx(), org);
    const refused = await rotate(pub.clientId);
    assert.equal(refused.statusCode, 409, refused.body);
    assert.match(json(refused).message, /public client/);
  });

  it('shows the built-in web app client as built in, and refuses to edit it or give it a secret', async () => {
    const org = await createTestOrg(ctx());
    await ensureWebAppClient(ctx().deps.db, org.orgId, ctx().clock.now());
    await registerClient(ctx(), org);
    const listed = json(await ctx().inject({ method: 'GET', url: '/v1/oauth2/clients', headers: org.admin.headers }));
    const builtIn = listed.clients.filter((c: { builtIn: boolean }) => c.builtIn);
    assert.equal(builtIn.length, 1);
    assert.equal(builtIn[0].clientId, webAppClientRowId(org.orgId));
    assert.equal(builtIn[0].name, 'Tessera web app');
    assert.equal(listed.clients.length, 2);
    const url = `/v1/oauth2/clients/${builtIn[0].clientId}`;
    const patched = await ctx().inject({ method: 'PATCH', url, headers: org.admin.headers, payload: { name: 'Mine' } });
    assert.equal(patched.statusCode, 409, patched.body);
    assert.match(json(patched).message, /built in/);
    const secret = await ctx().inject({ method: 'POST', url: `${url}/secret`, headers: org.admin.headers });
    assert.equal(secret.statusCode, 409, secret.body);
  });

  it('codes expire after 60 seconds', async () => {
    const org = await createTestOrg(ctx());
    const registered = await registerClient(ctx(), org);
    const as = await discover(ctx());
    const client: oauth.Client = { client_id: registered.clientId };
    const { url, state, verifier } = await authorizationUrl(as, registered.clientId);
    const submitted = await signInThroughPage(ctx().app, url, org.admin);
    const params = oauth.validateAuthResponse(as, client, new URL(String(submitted.headers.location)), state);
    ctx().clock.advance(60_000);
    const res = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      oauth.None(),
      params,
      REDIRECT,
      verifier,
      oauthOptions(ctx().app),
    );
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as { error: string }).error, 'invalid_grant');
  });

  const prepareClient = async (c: TestContext, org: TestOrg) => ({
    url: `/v1/oauth2/clients/${(await registerClient(c, org)).clientId}`,
  });
  securitySuite(ctx, '/v1/oauth2/clients', {
    method: 'POST',
    privileges: ['user_management'],
    credentials: true,
    prepare: () => ({ url: '/v1/oauth2/clients', body: { name: 'x', redirectUris: [REDIRECT] } }),
  });
  securitySuite(ctx, '/v1/oauth2/clients', {
    method: 'GET',
    privileges: ['user_management'],
    prepare: () => ({ url: '/v1/oauth2/clients' }),
  });
  securitySuite(ctx, '/v1/oauth2/clients/{id}', {
    method: 'GET',
    privileges: ['user_management'],
    resource: true,
    prepare: prepareClient,
  });
  securitySuite(ctx, '/v1/oauth2/clients/{id}', {
    method: 'PATCH',
    privileges: ['user_management'],
    resource: true,
    credentials: true,
    prepare: async (c, org) => ({ ...(await prepareClient(c, org)), body: { name: 'Renamed' } }),
  });
  securitySuite(ctx, '/v1/oauth2/clients/{id}/secret', {
    method: 'POST',
    privileges: ['user_management'],
    resource: true,
    credentials: true,
    prepare: async (c, org) => ({ url: `/v1/oauth2/clients/${(await registerClient(c, org, true)).clientId}/secret` }),
  });
  securitySuite(ctx, '/v1/oauth2/clients/{id}', {
    method: 'DELETE',
    privileges: ['user_management'],
    resource: true,
    prepare: prepareClient,
  });
});
