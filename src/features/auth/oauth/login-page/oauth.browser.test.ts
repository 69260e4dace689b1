import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import * as oauth from 'oauth4webapi';
import { chromium } from 'playwright-core';
import { forEachEngine, json } from '../../../../../test/helpers/context.ts';
import { createTestOrg, createTestUser } from '../../../../../test/helpers/factories.ts';

const CHROMIUM = '/usr/bin/chromium';
const skip =
  existsSync(CHROMIUM) || process.env.CI === 'true'
    ? false
    : `Chromium not installed at ${CHROMIUM} (apt-get install chromium); CI always runs this test`;

/** The issuer must be the address the browser and the client really use, so the port is chosen first. */
async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
const PORT = await freePort();
const ISSUER = `http://127.0.0.1:${PORT}`;

forEachEngine(
  'oauth2 code flow in a real browser',
  (ctx) => {
    let callbackServer: Server;
    let callbackUrl = '';
    const hits: string[] = [];
    before(async () => {
      await ctx().app.listen({ port: PORT, host: '127.0.0.1' });
      callbackServer = createServer((req, res) => {
        if (req.url?.startsWith('/callback')) hits.push(`http://127.0.0.1${req.url}`);
        res.setHeader('content-type', 'text/html');
        res.end('<!doctype html><title>done</title><p>Signed in</p>');
      });
      await new Promise<void>((resolve) => callbackServer.listen(0, '127.0.0.1', resolve));
      callbackUrl = `http://127.0.0.1:${(callbackServer.address() as AddressInfo).port}/callback`;
    });
    after(async () => {
      await new Promise((resolve) => callbackServer?.close(resolve));
    });

    it('headless Chromium signs in on the login page; oauth4webapi completes the flow over HTTP', {
      skip,
    }, async () => {
      const org = await createTestOrg(ctx());
      const user = await createTestUser(ctx(), org);
      const registered = json(
        await ctx().inject({
          method: 'POST',
          url: '/v1/oauth2/clients',
          headers: org.admin.headers,
          payload: { name: 'Browser App', redirectUris: [callbackUrl] },
        }),
      );
      const options = { [oauth.allowInsecureRequests]: true } as const;
      const issuer = new URL(ISSUER);
      const as = await oauth.processDiscoveryResponse(
        issuer,
        await oauth.discoveryRequest(issuer, { ...options, algorithm: 'oidc' }),
      );
      const client: oauth.Client = { client_id: registered.clientId, id_token_signed_response_alg: 'EdDSA' };
      const verifier = oauth.generateRandomCodeVerifier();
      const state = oauth.generateRandomState();
      const nonce = oauth.generateRandomNonce();
      const url = new URL(as.authorization_endpoint!);
      for (const [k, v] of Object.entries({
        client_id: client.client_id,
        redirect_uri: callbackUrl,
        response_type: 'code',
        scope: 'openid email',
        state,
        nonce,
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      }))
        url.searchParams.set(k, v);

      const profile = mkdtempSync(join(tmpdir(), 'tessera-chromium-'));
      const browser = await chromium.launchPersistentContext(profile, {
        executablePath: CHROMIUM,
        headless: true,
        args: [
          '--headless',
          '--no-sandbox',
          '--disable-gpu',
          '--disable-quic',
          '--no-first-run',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
        ],
      });
      const violations: string[] = [];
      try {
        const page = await browser.newPage();
        page.on('console', (message) => {
          if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
        });
        const response = await page.goto(url.toString());
        assert.equal(response?.status(), 200);
        assert.equal(await page.title(), 'Sign in — Tessera');
        await page.fill('#username', user.username);
        await page.fill('#password', 'wrong-password-x');
        await page.click('#allow');
        await page.waitForSelector('.error');
        assert.match((await page.textContent('.error')) ?? '', /Incorrect username or password/);
        await page.fill('#password', user.password);
        await Promise.all([page.waitForURL((u) => u.toString().startsWith(callbackUrl)), page.click('#allow')]);
        assert.equal(violations.length, 0, violations.join('\n'));
      } finally {
        await browser.close();
        rmSync(profile, { recursive: true, force: true });
      }
      assert.equal(hits.length, 1);
      const params = oauth.validateAuthResponse(as, client, new URL(hits[0]!), state);
      const tokens = await oauth.processAuthorizationCodeResponse(
        as,
        client,
        await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, callbackUrl, verifier, options),
        { expectedNonce: nonce, requireIdToken: true },
      );
      const me = await fetch(`${ISSUER}/v1/user`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
      assert.equal(me.status, 200);
      assert.equal(((await me.json()) as { userId: string }).userId, user.userId);
    });
  },
  { env: { TESSERA_PUBLIC_URL: ISSUER } },
);
