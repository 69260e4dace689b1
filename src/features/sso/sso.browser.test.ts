import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium } from 'playwright-core';
import { ENGINES, json, type TestContext } from '../../../test/helpers/context.ts';
import { createTestOrg, createTestUser } from '../../../test/helpers/factories.ts';
import { authorizeRequest, exchange, listeningContext } from '../../../test/helpers/sso.ts';

const CHROMIUM = '/usr/bin/chromium';
const skip =
  existsSync(CHROMIUM) || process.env.CI === 'true'
    ? false
    : `Chromium not installed at ${CHROMIUM} (apt-get install chromium); CI always runs this test`;

// Headless Chromium on the OAuth login page of one Tessera (the relying party): it offers the
// organization's identity provider (a second Tessera), and the click-through signs in there.
for (const engine of ENGINES) {
  describe(`single sign-on in a real browser [${engine.name}]`, { skip: engine.skip || skip }, () => {
    let rp: TestContext;
    let idp: TestContext;
    before(async () => {
      rp = await listeningContext(engine.name);
      idp = await listeningContext(engine.name);
    });
    after(async () => {
      await rp?.close();
      await idp?.close();
    });

    // Tessera's web app (the first-party client, on the relying party's own origin) names the
    // organization whose providers its login page offers.
    it('the login page offers the provider; clicking through signs in with a new account', async () => {
      const rpOrg = await createTestOrg(rp);
      const idpOrg = await createTestOrg(idp);
      const person = await createTestUser(idp, idpOrg);
      const idpClient = json(
        await idp.inject({
          method: 'POST',
          url: '/v1/oauth2/clients',
          headers: idpOrg.admin.headers,
          payload: { name: 'Tessera RP', redirectUris: [`${rp.config.publicUrl}/v1/sso/callback`], confidential: true },
        }),
      );
      const appCallback = `${rp.config.publicUrl}/app/callback`;
      const provider = await rp.inject({
        method: 'POST',
        url: '/v1/sso/providers',
        headers: rpOrg.admin.headers,
        payload: {
          name: 'Acme',
          issuer: idp.config.publicUrl,
          clientId: idpClient.clientId,
          clientSecret: idpClient.clientSecret,
          defaultRoleId: rpOrg.roles.viewer,
        },
      });
      assert.equal(provider.statusCode, 201, provider.body);
      const request = authorizeRequest(rp.config.publicUrl, 'tessera-web', appCallback, {
        organization: rpOrg.orgId,
      });

      const profile = mkdtempSync(join(tmpdir(), 'tessera-chromium-'));
      const browser = await chromium.launchPersistentContext(profile, {
        executablePath: CHROMIUM,
        headless: true,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
      });
      const violations: string[] = [];
      let landed = '';
      try {
        const page = await browser.newPage();
        // The app's own callback page would spend the code and move on to /app/; the test answers it itself so
        // that the code and state stay in the URL for the exchange below.
        await page.route(
          (u) => u.toString().startsWith(appCallback),
          (route) => route.fulfill({ status: 200, contentType: 'text/plain', body: 'callback' }),
        );
        page.on('console', (message) => {
          if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
        });
        assert.equal((await page.goto(request.url))?.status(), 200);
        const link = page.getByRole('link', { name: 'Sign in with Acme' });
        assert.equal(await link.count(), 1);
        await Promise.all([page.waitForURL((u) => u.toString().startsWith(idp.config.publicUrl)), link.click()]);
        await page.fill('#username', person.username);
        await page.fill('#password', person.password);
        await Promise.all([
          page.waitForURL((u) => u.toString().startsWith(appCallback) && u.searchParams.has('state')),
          page.click('#allow'),
        ]);
        landed = page.url();
        assert.equal(violations.length, 0, violations.join('\n'));
      } finally {
        await browser.close();
        rmSync(profile, { recursive: true, force: true });
      }
      const back = new URL(landed);
      assert.equal(back.searchParams.get('state'), request.state, `landed on ${landed}`);
      const tokens = await exchange(rp.config.publicUrl, {
        grant_type: 'authorization_code',
        code: back.searchParams.get('code')!,
        redirect_uri: appCallback,
        client_id: 'tessera-web',
        code_verifier: request.verifier,
      });
      assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
      const made = await rp.deps.db
        .selectFrom('users')
        .select(['id', 'account_type'])
        .where('org_id', '=', rpOrg.orgId)
        .where('account_type', '=', 'federated')
        .execute();
      assert.equal(made.length, 1);
    });
  });
}
