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
      // Two host names: a browser's cookies do not separate ports, so on one name the relying party
      // and the provider would see each other's sign-in cookies.
      rp = await listeningContext(engine.name, { hostName: 'localhost' });
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
        // The URL is kept as it is matched: the page may move on afterwards (the flake of earlier runs).
        await Promise.all([
          page.waitForURL((u) => {
            const hit = u.toString().startsWith(appCallback) && u.searchParams.has('state');
            if (hit) landed = u.toString();
            return hit;
          }),
          page.click('#allow'),
        ]);
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

    // The whole round trip through Tessera's own web app: an /app link naming the organization, its
    // provider on the sign-in page, a new account made on first sign-in, the library, and a sign-out
    // that ends the provider's session too (RP-initiated logout at both ends).
    it("the web app: sign in through the organization's provider, see the library, sign out at both ends", async () => {
      const rpOrg = await createTestOrg(rp);
      const idpOrg = await createTestOrg(idp);
      const person = await createTestUser(idp, idpOrg);
      const idpClient = json(
        await idp.inject({
          method: 'POST',
          url: '/v1/oauth2/clients',
          headers: idpOrg.admin.headers,
          payload: {
            name: 'Tessera RP',
            redirectUris: [`${rp.config.publicUrl}/v1/sso/callback`, `${rp.config.publicUrl}/v1/sso/logged-out`],
            confidential: true,
          },
        }),
      );
      const provider = await rp.inject({
        method: 'POST',
        url: '/v1/sso/providers',
        headers: rpOrg.admin.headers,
        payload: {
          name: 'Acme Web',
          issuer: idp.config.publicUrl,
          clientId: idpClient.clientId,
          clientSecret: idpClient.clientSecret,
          defaultRoleId: rpOrg.roles.viewer,
        },
      });
      assert.equal(provider.statusCode, 201, provider.body);

      const profile = mkdtempSync(join(tmpdir(), 'tessera-chromium-'));
      const browser = await chromium.launchPersistentContext(profile, {
        executablePath: CHROMIUM,
        headless: true,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
      });
      const shots = join(process.cwd(), 'web', 'test-results');
      try {
        const page = await browser.newPage();
        // An administrator's link names the organization; the app passes it to the sign-in page.
        assert.equal((await page.goto(`${rp.config.publicUrl}/app/?organization=${rpOrg.orgId}`))?.status(), 200);
        await Promise.all([page.waitForURL((u) => u.pathname === '/v1/oauth2/authorize'), page.click('#sign-in')]);
        assert.equal(new URL(page.url()).searchParams.get('organization'), rpOrg.orgId);
        const link = page.getByRole('link', { name: 'Sign in with Acme Web' });
        assert.equal(await link.count(), 1);
        await Promise.all([page.waitForURL((u) => u.toString().startsWith(idp.config.publicUrl)), link.click()]);
        await page.fill('#username', person.username);
        await page.fill('#password', person.password);
        await Promise.all([
          page.waitForURL(
            (u) => u.toString().startsWith(`${rp.config.publicUrl}/app/`) && !u.pathname.includes('callback'),
            {
              timeout: 20_000,
            },
          ),
          page.click('#allow'),
        ]);
        await page.locator('#user-menu').waitFor({ timeout: 20_000 });
        await page.screenshot({ path: join(shots, 'sso-web-app-signed-in.png') }).catch(() => undefined);
        const made = await rp.deps.db
          .selectFrom('users')
          .select(['id'])
          .where('org_id', '=', rpOrg.orgId)
          .where('account_type', '=', 'federated')
          .execute();
        assert.equal(made.length, 1, 'a new account on first sign-in');
        // The app remembers the organization for the next sign-in.
        assert.equal(await page.evaluate(() => localStorage.getItem('tessera.organization')), rpOrg.orgId);

        const openAtProvider = async () =>
          Number(
            (
              await idp.deps.db
                .selectFrom('auth_sessions')
                .select((eb) => eb.fn.countAll<number>().as('n'))
                .where('user_id', '=', person.userId)
                .where('revoked_at', 'is', null)
                .executeTakeFirstOrThrow()
            ).n,
          );
        assert.ok((await openAtProvider()) >= 1, 'signed in at the provider');

        // Sign out: through the relying party's end-session endpoint, the provider's, and back to the app.
        const visited: string[] = [];
        page.on('request', (request) => {
          if (request.isNavigationRequest() && request.frame() === page.mainFrame()) visited.push(request.url());
        });
        await page.click('#user-menu');
        await page.click('#sign-out');
        await page
          .getByText('You are signed out')
          .waitFor({ timeout: 20_000 })
          .catch(async (e) => {
            throw new Error(
              `${e}\nvisited: ${visited.join(' → ')}\nnow: ${page.url()}\n${(await page.content()).slice(0, 800)}`,
            );
          });
        await page.locator('#sign-in').waitFor({ timeout: 20_000 });
        const hops = visited.map((u) => {
          const url = new URL(u);
          return `${url.origin === rp.config.publicUrl ? 'rp' : url.origin === idp.config.publicUrl ? 'idp' : url.origin}${url.pathname}`;
        });
        assert.deepEqual(
          hops,
          ['rp/v1/oauth2/logout', 'idp/v1/oauth2/logout', 'rp/v1/sso/logged-out', 'rp/app/'].filter((h) =>
            hops.includes(h),
          ),
          hops.join(' → '),
        );
        assert.ok(
          hops.includes('idp/v1/oauth2/logout'),
          `through the provider's end-session endpoint: ${hops.join(' → ')}`,
        );
        assert.equal(hops.at(-1), 'rp/app/', hops.join(' → '));
        assert.equal(await openAtProvider(), 0, "the provider's session ended too");
        const rpSessions = await rp.deps.db
          .selectFrom('auth_sessions')
          .select(['revoked_at'])
          .where('user_id', '=', made[0]!.id)
          .execute();
        assert.ok(rpSessions.length >= 1 && rpSessions.every((r) => r.revoked_at !== null), "and the app's");
        // The next sign-in offers the organization's provider again, without the link.
        await Promise.all([page.waitForURL((u) => u.pathname === '/v1/oauth2/authorize'), page.click('#sign-in')]);
        assert.equal(await page.getByRole('link', { name: 'Sign in with Acme Web' }).count(), 1);
      } finally {
        await browser.close();
        rmSync(profile, { recursive: true, force: true });
      }
    });
  });
}
