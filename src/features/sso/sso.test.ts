import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { toJson } from '../../core/db/json.ts';
import { newId } from '../../core/ids.ts';
import { ENGINES, json, type TestContext } from '../../../test/helpers/context.ts';
import { createTestOrg, createTestUser, type TestOrg } from '../../../test/helpers/factories.ts';
import {
  assertRedirect,
  authorizeRequest,
  Browser,
  exchange,
  hiddenFields,
  listeningContext,
  providerLinks,
} from '../../../test/helpers/sso.ts';
import { verifyIdToken } from './oidc.ts';

// Two Tessera instances on real ports: `rp` (the relying party under test) and `idp` (the OpenID
// provider its organization trusts). The test is the browser: it follows every redirect itself.

const APP_CALLBACK = 'http://127.0.0.1:9/app-callback';

async function addGroup(ctx: TestContext, orgId: string, name: string): Promise<string> {
  const now = ctx.deps.clock.now();
  const id = newId(now);
  await ctx.deps.db
    .insertInto('groups')
    .values({
      id,
      org_id: orgId,
      name,
      name_key: name.toLowerCase(),
      description: '',
      created_at: now,
      updated_at: now,
    })
    .execute();
  return id;
}

async function setGroups(ctx: TestContext, orgId: string, userId: string, groupIds: string[]) {
  await ctx.deps.db.deleteFrom('user_groups').where('user_id', '=', userId).execute();
  if (groupIds.length > 0)
    await ctx.deps.db
      .insertInto('user_groups')
      .values(groupIds.map((group_id) => ({ org_id: orgId, user_id: userId, group_id })))
      .execute();
}

async function registerClient(ctx: TestContext, org: TestOrg, redirectUris: string[], confidential: boolean) {
  const res = await ctx.inject({
    method: 'POST',
    url: '/v1/oauth2/clients',
    headers: org.admin.headers,
    payload: { name: 'App', redirectUris, confidential },
  });
  assert.equal(res.statusCode, 201, res.body);
  return json<{ clientId: string; clientSecret?: string }>(res);
}

for (const engine of ENGINES) {
  describe(`single sign-on through a second Tessera [${engine.name}]`, { skip: engine.skip }, () => {
    let rp: TestContext;
    let idp: TestContext;
    const logs: string[] = [];
    let rpOrg: TestOrg;
    let idpOrg: TestOrg;
    let design: string;
    let marketing: string;
    let designers: string;
    let marketers: string;
    let alice: { userId: string; username: string; password: string };
    let providerId: string;
    let idpClient: { clientId: string; clientSecret?: string };
    let appClient: string;

    before(async () => {
      const logTo = new PassThrough();
      logTo.on('data', (chunk: Buffer) => logs.push(chunk.toString('utf8')));
      rp = await listeningContext(engine.name, { env: { TESSERA_LOG_LEVEL: 'debug' }, logTo });
      idp = await listeningContext(engine.name);
      rpOrg = await createTestOrg(rp);
      idpOrg = await createTestOrg(idp);
      design = await addGroup(rp, rpOrg.orgId, 'Design');
      marketing = await addGroup(rp, rpOrg.orgId, 'Marketing');
      designers = await addGroup(idp, idpOrg.orgId, 'designers');
      marketers = await addGroup(idp, idpOrg.orgId, 'marketers');
      alice = await createTestUser(idp, idpOrg);
      await setGroups(idp, idpOrg.orgId, alice.userId, [designers]);
      const rpBase = rp.config.publicUrl;
      idpClient = await registerClient(idp, idpOrg, [`${rpBase}/v1/sso/callback`, `${rpBase}/v1/sso/logged-out`], true);
      appClient = (await registerClient(rp, rpOrg, [APP_CALLBACK], false)).clientId;
      const created = await rp.inject({
        method: 'POST',
        url: '/v1/sso/providers',
        headers: rpOrg.admin.headers,
        payload: {
          name: 'Acme IdP',
          issuer: idp.config.publicUrl,
          clientId: idpClient.clientId,
          clientSecret: idpClient.clientSecret,
          groupMappings: [
            { value: 'designers', groupId: design },
            { value: 'marketers', groupId: marketing },
          ],
          defaultRoleId: rpOrg.roles.viewer,
        },
      });
      assert.equal(created.statusCode, 201, created.body);
      providerId = json(created).id;
    });
    after(async () => {
      await rp?.close();
      await idp?.close();
    });

    /** The whole browser round trip up to the application's callback; returns the hops and the app's request. */
    async function signIn(browser: Browser, options: { tamper?: (url: URL) => void } = {}) {
      const request = authorizeRequest(rp.config.publicUrl, appClient, APP_CALLBACK, {
        scope: 'openid email tessera.read',
      });
      const page = await browser.request(request.url);
      assert.equal(page.status, 200, page.body);
      const link = providerLinks(page.body).get('Acme IdP');
      assert.ok(link, 'the login page offers the provider');
      const toIdp = assertRedirect(await browser.request(link), `${idp.config.publicUrl}/v1/oauth2/authorize`);
      options.tamper?.(toIdp);
      const idpPage = await browser.request(toIdp.toString());
      assert.equal(idpPage.status, 200, idpPage.body);
      const submitted = await browser.request(`${idp.config.publicUrl}/v1/oauth2/authorize`, {
        form: { ...hiddenFields(idpPage.body), username: alice.username, password: alice.password, decision: 'allow' },
      });
      const callback = assertRedirect(submitted, `${rp.config.publicUrl}/v1/sso/callback`);
      const back = await browser.request(callback.toString());
      return { request, callback, back };
    }

    async function completeSignIn(browser: Browser) {
      const { request, callback, back } = await signIn(browser);
      const toApp = assertRedirect(back, APP_CALLBACK);
      assert.equal(toApp.searchParams.get('state'), request.state);
      const tokens = await exchange(rp.config.publicUrl, {
        grant_type: 'authorization_code',
        code: toApp.searchParams.get('code')!,
        redirect_uri: APP_CALLBACK,
        client_id: appClient,
        code_verifier: request.verifier,
      });
      assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
      return { tokens: tokens.body, callback };
    }

    const rpUserOf = () =>
      rp.deps.db
        .selectFrom('sso_identities')
        .select('user_id')
        .where('provider_id', '=', providerId)
        .where('subject', '=', alice.userId)
        .executeTakeFirst();

    const groupsOf = async (userId: string) =>
      (await rp.deps.db.selectFrom('user_groups').select('group_id').where('user_id', '=', userId).execute()).map(
        (r) => r.group_id,
      );

    it('signs in end to end: a new account, groups mapped from the claim, the session like a password sign-in', async () => {
      const { tokens } = await completeSignIn(new Browser());
      const link = await rpUserOf();
      assert.ok(link, 'the provider subject is linked to an account');
      const user = await rp.deps.db
        .selectFrom('users')
        .selectAll()
        .where('id', '=', link.user_id)
        .executeTakeFirstOrThrow();
      assert.equal(user.org_id, rpOrg.orgId);
      assert.equal(user.account_type, 'federated');
      assert.equal(user.password_hash, null);
      assert.equal(user.role_id, rpOrg.roles.viewer);
      assert.equal(user.email, `${alice.username}@example.test`);
      const groups = await groupsOf(user.id);
      assert.ok(groups.includes(design) && !groups.includes(marketing), 'designers → Design');
      // The Tessera session works like any other.
      const me = await fetch(`${rp.config.publicUrl}/v1/auth/sessions`, {
        headers: { authorization: `Bearer ${tokens.access_token}` },
      });
      assert.equal(me.status, 200);
      const sessions = (await me.json()) as { sessions: { kind: string }[] };
      assert.equal(sessions.sessions.length, 1);
      const rows = await rp.deps.db
        .selectFrom('audit_log')
        .select(['action', 'data'])
        .where('org_id', '=', rpOrg.orgId)
        .where('action', 'in', ['auth.sso.signin', 'auth.signin'])
        .execute();
      assert.ok(rows.some((r) => r.action === 'auth.sso.signin' && String(r.data).includes('"created":true')));
      assert.ok(rows.some((r) => r.action === 'auth.signin' && String(r.data).includes(providerId)));
    });

    it('a second sign-in finds the same account and applies the groups claim again', async () => {
      const before = (await rpUserOf())!.user_id;
      await setGroups(idp, idpOrg.orgId, alice.userId, [marketers]);
      await completeSignIn(new Browser());
      const link = await rpUserOf();
      assert.equal(link!.user_id, before, 'no second account');
      const groups = await groupsOf(before);
      assert.ok(groups.includes(marketing) && !groups.includes(design), 'marketers → Marketing, Design removed');
      const count = await rp.deps.db
        .selectFrom('users')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('org_id', '=', rpOrg.orgId)
        .where('account_type', '=', 'federated')
        .executeTakeFirstOrThrow();
      assert.equal(Number(count.n), 1);
    });

    it('signing out ends the Tessera session and the provider session, then returns to the application', async () => {
      const { tokens } = await completeSignIn(new Browser());
      const browser = new Browser();
      const logout = new URL(`${rp.config.publicUrl}/v1/oauth2/logout`);
      logout.searchParams.set('id_token_hint', tokens.id_token!);
      logout.searchParams.set('post_logout_redirect_uri', APP_CALLBACK);
      logout.searchParams.set('state', 'bye');
      const { hops, last } = await browser.follow(logout.toString(), APP_CALLBACK);
      assert.ok(
        hops.some((h) => h.url.startsWith(`${idp.config.publicUrl}/v1/oauth2/logout`)),
        'went through the provider end_session_endpoint',
      );
      const final = assertRedirect(last, APP_CALLBACK);
      assert.equal(final.searchParams.get('state'), 'bye');
      const me = await fetch(`${rp.config.publicUrl}/v1/auth/sessions`, {
        headers: { authorization: `Bearer ${tokens.access_token}` },
      });
      assert.equal(me.status, 401, 'the Tessera session ended');
      const ended = await idp.deps.db
        .selectFrom('auth_sessions')
        .select('id')
        .where('user_id', '=', alice.userId)
        .where('revoked_reason', '=', 'logout')
        .execute();
      assert.ok(ended.length >= 1, 'the provider session ended');
    });

    it('refuses a disabled account, and records why', async () => {
      const userId = (await rpUserOf())!.user_id;
      await rp.deps.db.updateTable('users').set({ status: 'disabled' }).where('id', '=', userId).execute();
      try {
        const { back } = await signIn(new Browser());
        assert.equal(back.status, 403);
        const failed = await rp.deps.db
          .selectFrom('audit_log')
          .select('data')
          .where('org_id', '=', rpOrg.orgId)
          .where('action', '=', 'auth.signin_failed')
          .execute();
        assert.ok(failed.some((r) => String(r.data).includes('account_disabled')));
      } finally {
        await rp.deps.db.updateTable('users').set({ status: 'enabled' }).where('id', '=', userId).execute();
      }
    });

    it("the web app's login page offers the organization it names, also when shown again after a wrong password", async () => {
      const browser = new Browser();
      const request = authorizeRequest(rp.config.publicUrl, 'tessera-web', `${rp.config.publicUrl}/app/callback`, {
        organization: rpOrg.orgId,
      });
      const page = await browser.request(request.url);
      assert.equal(page.status, 200);
      assert.ok(providerLinks(page.body).has('Acme IdP'));
      const again = await browser.request(`${rp.config.publicUrl}/v1/oauth2/authorize`, {
        form: { ...hiddenFields(page.body), username: 'nobody-here', password: 'wrong-password-1', decision: 'allow' },
      });
      assert.equal(again.status, 401);
      assert.ok(providerLinks(again.body).has('Acme IdP'));
      const plain = await browser.request(
        authorizeRequest(rp.config.publicUrl, 'tessera-web', `${rp.config.publicUrl}/app/callback`).url,
      );
      assert.equal(providerLinks(plain.body).size, 0, 'no organization named, none offered');
    });

    it('forgets sign-ins that were never finished', async () => {
      rp.clock.advance(25 * 60_000);
      try {
        const request = authorizeRequest(rp.config.publicUrl, appClient, APP_CALLBACK);
        const page = await new Browser().request(request.url);
        assertRedirect(await new Browser().request(providerLinks(page.body).get('Acme IdP')!), idp.config.publicUrl);
        const stale = await rp.deps.db
          .selectFrom('sso_logins')
          .select('state_hash')
          .where('expires_at', '<', rp.clock.now() - 10 * 60_000)
          .execute();
        assert.equal(stale.length, 0);
      } finally {
        rp.clock.advance(-25 * 60_000);
      }
    });

    it('refuses an unknown state, and a replayed answer', async () => {
      const bad = await new Browser().request(`${rp.config.publicUrl}/v1/sso/callback?state=nope&code=abc`);
      assert.equal(bad.status, 400);
      const browser = new Browser();
      const { callback, back } = await signIn(browser);
      assertRedirect(back, APP_CALLBACK);
      const again = await browser.request(callback.toString());
      assert.equal(again.status, 400);
      assert.match(again.body, /already used/);
      const failed = await rp.deps.db
        .selectFrom('audit_log')
        .select('data')
        .where('org_id', '=', rpOrg.orgId)
        .where('action', '=', 'auth.signin_failed')
        .execute();
      assert.ok(failed.some((r) => String(r.data).includes('state_replayed')));
    });

    it('refuses an answer delivered to another browser (login CSRF)', async () => {
      const { callback } = await signIn(new Browser()).then(async (r) => r);
      // The first browser already used it; a fresh start whose callback goes to a different browser:
      const browser = new Browser();
      const request = authorizeRequest(rp.config.publicUrl, appClient, APP_CALLBACK);
      const page = await browser.request(request.url);
      const toIdp = await browser.request(providerLinks(page.body).get('Acme IdP')!);
      const idpPage = await browser.request(toIdp.location!);
      const submitted = await browser.request(`${idp.config.publicUrl}/v1/oauth2/authorize`, {
        form: { ...hiddenFields(idpPage.body), username: alice.username, password: alice.password, decision: 'allow' },
      });
      const other = await new Browser().request(submitted.location!);
      assert.equal(other.status, 400);
      assert.ok(callback);
    });

    it('refuses an id token whose nonce is not the one sent', async () => {
      const { back } = await signIn(new Browser(), {
        tamper: (url) => url.searchParams.set('nonce', 'not-the-nonce-tessera-sent'),
      });
      assert.equal(back.status, 401);
      assert.match(back.body, /nonce/);
    });

    it('refuses an answer naming another issuer', async () => {
      const browser = new Browser();
      const request = authorizeRequest(rp.config.publicUrl, appClient, APP_CALLBACK);
      const page = await browser.request(request.url);
      const toIdp = await browser.request(providerLinks(page.body).get('Acme IdP')!);
      const idpPage = await browser.request(toIdp.location!);
      const submitted = await browser.request(`${idp.config.publicUrl}/v1/oauth2/authorize`, {
        form: { ...hiddenFields(idpPage.body), username: alice.username, password: alice.password, decision: 'allow' },
      });
      const callback = new URL(submitted.location!);
      callback.searchParams.set('iss', 'http://127.0.0.1:1/evil');
      const back = await browser.request(callback.toString());
      assert.equal(back.status, 401);
      assert.match(back.body, /another identity provider/);
    });

    it('checks the id token: signature, issuer, audience and expiry', async () => {
      // A real id token of the provider, for the relying party's client, with a known nonce.
      const request = authorizeRequest(
        idp.config.publicUrl,
        idpClient.clientId,
        `${rp.config.publicUrl}/v1/sso/callback`,
      );
      const browser = new Browser();
      const idpPage = await browser.request(request.url);
      const submitted = await browser.request(`${idp.config.publicUrl}/v1/oauth2/authorize`, {
        form: { ...hiddenFields(idpPage.body), username: alice.username, password: alice.password, decision: 'allow' },
      });
      const code = new URL(submitted.location!).searchParams.get('code')!;
      const tokens = await exchange(idp.config.publicUrl, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: `${rp.config.publicUrl}/v1/sso/callback`,
        client_id: idpClient.clientId,
        client_secret: idpClient.clientSecret!,
        code_verifier: request.verifier,
      });
      assert.equal(tokens.status, 200);
      const idToken = tokens.body.id_token!;
      const provider = {
        issuer: idp.config.publicUrl,
        client_id: idpClient.clientId,
        jwks_uri: `${idp.config.publicUrl}/.well-known/jwks.json`,
      };
      const claims = await verifyIdToken(rp.deps, provider, idToken, request.nonce);
      assert.equal(claims.sub, alice.userId);
      assert.deepEqual(claims.groups, ['marketers']);
      const reason = (p: Promise<unknown>) =>
        p.then(
          () => 'accepted',
          (e: { reason?: string }) => e.reason ?? String(e),
        );
      const [h, p, s] = idToken.split('.');
      const payload = JSON.parse(Buffer.from(p!, 'base64url').toString('utf8'));
      const tampered = `${h}.${Buffer.from(JSON.stringify({ ...payload, sub: 'someone-else' })).toString('base64url')}.${s}`;
      assert.equal(await reason(verifyIdToken(rp.deps, provider, tampered, request.nonce)), 'id_token_signature');
      assert.equal(
        await reason(verifyIdToken(rp.deps, { ...provider, issuer: 'http://127.0.0.1:1' }, idToken, request.nonce)),
        'id_token_issuer',
      );
      assert.equal(
        await reason(verifyIdToken(rp.deps, { ...provider, client_id: 'another' }, idToken, request.nonce)),
        'id_token_audience',
      );
      assert.equal(await reason(verifyIdToken(rp.deps, provider, idToken, 'other-nonce')), 'id_token_nonce');
      rp.clock.advance(2 * 60 * 60_000);
      try {
        assert.equal(await reason(verifyIdToken(rp.deps, provider, idToken, request.nonce)), 'id_token_expired');
      } finally {
        rp.clock.advance(-2 * 60 * 60_000);
      }
    });

    it('answers 404 for a provider of another organization, 403 to non-administrators', async () => {
      const other = await createTestOrg(rp);
      for (const [method, payload] of [
        ['GET', undefined],
        ['PATCH', { name: 'x' }],
        ['DELETE', undefined],
      ] as const) {
        const res = await rp.inject({
          method,
          url: `/v1/sso/providers/${providerId}`,
          headers: other.admin.headers,
          payload,
        });
        assert.equal(res.statusCode, 404, `${method}: ${res.body}`);
      }
      const list = await rp.inject({ method: 'GET', url: '/v1/sso/providers', headers: other.admin.headers });
      assert.deepEqual(json(list).providers, []);
      // A sign-in for another organization's application cannot use this organization's provider.
      const otherApp = (await registerClient(rp, other, [APP_CALLBACK], false)).clientId;
      const request = authorizeRequest(rp.config.publicUrl, otherApp, APP_CALLBACK);
      const query = new URL(request.url).search;
      const res = await new Browser().request(`${rp.config.publicUrl}/v1/sso/providers/${providerId}/signin${query}`);
      assert.equal(res.status, 404);
      const page = await new Browser().request(request.url);
      assert.equal(providerLinks(page.body).size, 0, "another organization's login page does not offer it");

      const manager = await createTestUser(rp, rpOrg, { privileges: ['user_management'] });
      for (const [method, url, payload] of [
        ['GET', '/v1/sso/providers', undefined],
        ['GET', `/v1/sso/providers/${providerId}`, undefined],
        [
          'POST',
          '/v1/sso/providers',
          { name: 'x', issuer: idp.config.publicUrl, clientId: 'c', defaultRoleId: rpOrg.roles.viewer },
        ],
        ['DELETE', `/v1/sso/providers/${providerId}`, undefined],
      ] as const) {
        const r = await rp.inject({ method, url, headers: manager.headers, payload });
        assert.equal(r.statusCode, 403, `${method} ${url}: ${r.body}`);
      }
    });

    it('keeps the client secret out of responses, the database in clear, the audit trail and the logs', async () => {
      const secret = idpClient.clientSecret!;
      const one = await rp.inject({
        method: 'GET',
        url: `/v1/sso/providers/${providerId}`,
        headers: rpOrg.admin.headers,
      });
      assert.equal(one.statusCode, 200);
      assert.equal(json(one).hasClientSecret, true);
      assert.ok(!one.body.includes(secret));
      const list = await rp.inject({ method: 'GET', url: '/v1/sso/providers', headers: rpOrg.admin.headers });
      assert.ok(!list.body.includes(secret));
      const patched = await rp.inject({
        method: 'PATCH',
        url: `/v1/sso/providers/${providerId}`,
        headers: rpOrg.admin.headers,
        payload: { clientSecret: secret, name: 'Acme IdP' },
      });
      assert.equal(patched.statusCode, 200, patched.body);
      assert.ok(!patched.body.includes(secret));
      const row = await rp.deps.db
        .selectFrom('sso_providers')
        .selectAll()
        .where('id', '=', providerId)
        .executeTakeFirstOrThrow();
      assert.ok(row.client_secret && !row.client_secret.includes(secret));
      assert.equal(rp.deps.keys.decrypt(row.client_secret), secret);
      const audit = await rp.deps.db.selectFrom('audit_log').selectAll().where('org_id', '=', rpOrg.orgId).execute();
      assert.ok(!toJson(audit).includes(secret), 'not in the audit trail');
      assert.ok(logs.length > 0, 'the log was captured');
      assert.ok(!logs.join('').includes(secret), 'not in the logs');
    });

    it('validates input: unknown group, unknown role, bad issuer, discovery failure, prototype keys', async () => {
      const base = { name: 'P', issuer: idp.config.publicUrl, clientId: 'c', defaultRoleId: rpOrg.roles.viewer };
      const cases: [Record<string, unknown>, number, string][] = [
        [{ ...base, groupMappings: [{ value: 'x', groupId: newId(Date.now()) }] }, 400, 'body.groupMappings.0.groupId'],
        [{ ...base, defaultRoleId: newId(Date.now()) }, 400, 'body.defaultRoleId'],
        [{ ...base, issuer: 'ftp://example' }, 400, 'body.issuer'],
        [{ ...base, issuer: `${idp.config.publicUrl}/nothing-here` }, 422, 'body.issuer'],
        [{ ...base, ['__proto__']: { x: 1 } }, 400, ''],
      ];
      for (const [payload, status, field] of cases) {
        const res = await rp.inject({
          method: 'POST',
          url: '/v1/sso/providers',
          headers: { ...rpOrg.admin.headers, 'content-type': 'application/json' },
          payload: JSON.stringify(payload),
        });
        assert.equal(res.statusCode, status, res.body);
        if (field) assert.ok(res.body.includes(field), res.body);
      }
      const count = await rp.deps.db
        .selectFrom('sso_providers')
        .select('id')
        .where('org_id', '=', rpOrg.orgId)
        .execute();
      assert.equal(count.length, 1, 'nothing half-written');
    });

    it('the provider publishes what a relying party needs', async () => {
      const res = await fetch(`${idp.config.publicUrl}/.well-known/openid-configuration`);
      const doc = (await res.json()) as Record<string, unknown>;
      assert.equal(doc.end_session_endpoint, `${idp.config.publicUrl}/v1/oauth2/logout`);
      assert.ok((doc.claims_supported as string[]).includes('groups'));
    });
  });
}
