import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  ADMIN,
  apiAs,
  axe,
  type Browser,
  type Call,
  createViewer,
  openBrowser,
  type RunningServer,
  screenshot,
  signIn,
  skip,
  startServer,
} from './harness.ts';

const VIEWER = { username: 'viewer-oauth', password: 'Viewer-oauth-pass-1' };

/** A real local server standing in for the outside world: an OAuth client's callback, a token server, a webhook receiver. */
async function outside(): Promise<{
  server: Server;
  url: string;
  seen: { path: string; auth?: string; body: string }[];
}> {
  const seen: { path: string; auth?: string; body: string }[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      seen.push({ path: req.url ?? '', auth: req.headers.authorization, body });
      if (req.url === '/token')
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ access_token: 'receiver-token-1', token_type: 'Bearer', expires_in: 3600 }));
      else res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

describe('administration: OAuth clients, your consents and a webhook endpoint’s OAuth client in a real browser', {
  skip,
}, () => {
  let server: RunningServer;
  let browser: Browser;
  let admin: Call;
  let world: Awaited<ReturnType<typeof outside>>;
  const state: { clientId?: string; secret?: string; accessToken?: string } = {};
  before(async () => {
    [server, world] = await Promise.all([startServer({ TESSERA_ALLOW_PRIVATE_TARGETS: 'true' }), outside()]);
    admin = await apiAs(server.url);
    await createViewer(admin, VIEWER, 'Vic');
    browser = await openBrowser();
    await signIn(browser.page, server.url);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    world?.server.close();
  });

  it('registers a confidential client after a password check and shows its secret once', async () => {
    const { page } = browser;
    await page.goto(`${server.url}/app/admin/integrations`);
    await page.waitForSelector('#oauth-form');
    // The built-in web app client is listed as built in, with no edit or rotate.
    await page.waitForSelector('#oauth-clients >> text=Tessera web app');
    assert.match((await page.textContent('#oauth-clients li:has-text("Tessera web app")')) ?? '', /built in/);
    assert.equal(await page.$('button[aria-label="Edit Tessera web app"]'), null);
    assert.equal(await page.$('button[aria-label="Rotate secret of Tessera web app"]'), null);
    await page.fill('#oauth-name', 'Photo desk');
    await page.fill('#oauth-uris', `${world.url}/callback\nhttp://example.com/cb`);
    await page.fill('#oauth-password', ADMIN.password);
    await page.click('#oauth-create');
    // A redirect URI the API refuses comes back on the field, naming the line.
    await page.waitForSelector('#oauth-uris[aria-invalid="true"]');
    assert.match(
      (await page.textContent('#oauth-uris-error')) ?? '',
      /Line 2: http is only allowed on a loopback host/,
    );
    await page.fill('#oauth-uris', `${world.url}/callback`);
    await page.fill('#oauth-password', ADMIN.password);
    await page.click('#oauth-create');
    await page.waitForSelector('#oauth-secret');
    state.secret = await page.inputValue('#oauth-secret');
    assert.match(state.secret, /^tcs_/);
    state.clientId = /Client ID: (\S+)/.exec((await page.textContent('#oauth-secret-client')) ?? '')![1];
    await page.waitForSelector('#oauth-clients >> text=Photo desk');
    await screenshot(page, 'admin-oauth-01-client-secret', true);
    assert.deepEqual(await axe(page), []);
    // Shown once: after a reload the secret is nowhere.
    await page.reload();
    await page.waitForSelector('#oauth-clients >> text=Photo desk');
    assert.equal(await page.$('#oauth-secret'), null);
    assert.ok(!(await page.content()).includes(state.secret));
    const listed = await admin<{ clients: { clientId: string; clientSecret?: string; builtIn: boolean }[] }>(
      'GET',
      '/v1/oauth2/clients',
    );
    assert.equal(listed.clients.find((c) => c.clientId === state.clientId)?.clientSecret, undefined);
  });

  it('obtains a token with the client through the real authorize and token endpoints; the consent is listed and revoked', async () => {
    const { page } = browser;
    // Tessera's token endpoint grants authorization_code (with PKCE) and refresh_token: the code flow it is.
    const verifier = randomBytes(32).toString('base64url');
    const authorize = new URL(`${server.url}/v1/oauth2/authorize`);
    for (const [k, v] of Object.entries({
      response_type: 'code',
      client_id: state.clientId!,
      redirect_uri: `${world.url}/callback`,
      scope: 'openid tessera.read',
      state: 'st-1',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    }))
      authorize.searchParams.set(k, v);
    await page.goto(authorize.href);
    await page.waitForSelector('text=Photo desk');
    await page.fill('#username', ADMIN.username);
    await page.fill('#password', ADMIN.password);
    await Promise.all([page.waitForURL((u) => u.pathname === '/callback'), page.click('#allow')]);
    const callback = new URL(page.url());
    assert.equal(callback.searchParams.get('state'), 'st-1');
    const token = await fetch(`${server.url}/v1/oauth2/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: basic(state.clientId!, state.secret!),
      },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: callback.searchParams.get('code')!,
        redirect_uri: `${world.url}/callback`,
        code_verifier: verifier,
      }),
    });
    assert.equal(token.status, 200);
    state.accessToken = ((await token.json()) as { access_token: string }).access_token;
    const me = () => fetch(`${server.url}/v1/user`, { headers: { authorization: `Bearer ${state.accessToken}` } });
    assert.equal((await me()).status, 200);
    // The consent is listed on the page with its scopes, and revoked there.
    await page.goto(`${server.url}/app/admin/integrations`);
    await page.waitForSelector('#consents >> text=Photo desk');
    const row = (await page.textContent('#consents tr:has-text("Photo desk")')) ?? '';
    assert.match(row, /openid tessera\.read/);
    assert.match((await page.textContent('#consents')) ?? '', /Tessera web app/);
    await screenshot(page, 'admin-oauth-02-consents', true);
    assert.deepEqual(await axe(page), []);
    await page.click('button[aria-label="Revoke access of Photo desk"]');
    await page.click('#consent-revoke-yes');
    await page.waitForSelector('#consents-notice >> text=Access of "Photo desk" revoked: 1 session(s) ended.');
    assert.equal(await page.$('#consents >> text=Photo desk'), null);
    assert.equal((await me()).status, 401, 'the token ended with the consent');
    // The web app's own consent warns before signing you out.
    await page.click('button[aria-label="Revoke access of Tessera web app"]');
    await page.waitForSelector('#consent-question >> text=signs you out of the web app');
    await page.click('.confirm >> text=Cancel');
  });

  it('edits the redirect URIs, rotates the secret (the old one stops working), guards the built-in client and deletes', async () => {
    const { page } = browser;
    await page.click('button[aria-label="Edit Photo desk"]');
    await page.fill('#oauth-edit-uris', 'not a uri');
    await page.fill('#oauth-edit-password', ADMIN.password);
    await page.click('#oauth-edit-save');
    await page.waitForSelector('#oauth-edit-uris[aria-invalid="true"]');
    await page.fill('#oauth-edit-uris', `${world.url}/callback\n${world.url}/second`);
    await page.fill('#oauth-edit-password', ADMIN.password);
    await page.click('#oauth-edit-save');
    await page.waitForSelector('#oauth-notice >> text=Client "Photo desk" saved.');
    const shown = await admin<{ redirectUris: string[] }>('GET', `/v1/oauth2/clients/${state.clientId}`);
    assert.deepEqual(shown.redirectUris, [`${world.url}/callback`, `${world.url}/second`]);
    // Rotation: the new secret is shown once; the token endpoint refuses the old one.
    await page.click('button[aria-label="Rotate secret of Photo desk"]');
    await page.fill('#oauth-rotate-password', ADMIN.password);
    await page.click('#oauth-rotate-yes');
    await page.waitForSelector('#oauth-secret');
    const rotated = await page.inputValue('#oauth-secret');
    assert.match(rotated, /^tcs_/);
    assert.notEqual(rotated, state.secret);
    const revoke = (secret: string) =>
      fetch(`${server.url}/v1/oauth2/revoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(state.clientId!, secret) },
        body: new URLSearchParams({ token: 'unknown' }),
      });
    assert.equal((await revoke(state.secret!)).status, 401, 'the old secret no longer authenticates');
    assert.equal((await revoke(rotated)).status, 200, 'the new one does');
    await page.click('text=I have stored it');
    // The built-in client: deleting it takes an explicit acknowledgement; cancelled here.
    await page.click('button[aria-label="Delete Tessera web app"]');
    await page.waitForSelector('#oauth-delete-question >> text=nobody can sign in to the web app again');
    assert.equal(await page.isDisabled('#oauth-delete-yes'), true);
    await page.check('#oauth-delete-understood');
    assert.equal(await page.isDisabled('#oauth-delete-yes'), false);
    await screenshot(page, 'admin-oauth-03-built-in-delete-warning', true);
    assert.deepEqual(await axe(page), []);
    await page.click('[role=alertdialog] >> text=Cancel');
    // Deleting a registered client.
    await page.click('button[aria-label="Delete Photo desk"]');
    await page.click('#oauth-delete-yes');
    await page.waitForSelector('#oauth-notice >> text=Client "Photo desk" deleted; its sessions ended.');
    const after = await admin<{ clients: { clientId: string; builtIn: boolean }[] }>('GET', '/v1/oauth2/clients');
    assert.deepEqual(
      after.clients.map((c) => c.builtIn),
      [true],
      'only the built-in client is left',
    );
  });

  it("sets a webhook endpoint's OAuth client (secret write-only), and deliveries carry its token", async () => {
    const { page } = browser;
    const endpoint = await admin<{ id: string }>('POST', '/v1/webhooks/endpoint', [
      { description: 'Token-protected receiver', url: `${world.url}/hook`, eventTypes: ['user.*'] },
    ]);
    await page.goto(`${server.url}/app/admin/integrations/${endpoint!.id}`);
    await page.waitForSelector('#hook-oauth-form');
    await page.waitForSelector('#hook-oauth-current >> text=No OAuth client');
    await page.fill('#hook-oauth-tokenUrl', `${world.url}/token`);
    await page.fill('#hook-oauth-clientId', 'tessera-sender');
    await page.fill('#hook-oauth-clientSecret', 'receiver-secret-1');
    await page.fill('#hook-oauth-scope', 'hooks:write');
    await page.click('#hook-oauth-save');
    await page.waitForSelector('#hook-oauth-notice >> text=OAuth client saved.');
    await page.waitForSelector(`#hook-oauth-current >> text=Client tessera-sender at ${world.url}/token`);
    assert.equal(await page.inputValue('#hook-oauth-clientSecret'), '', 'the secret is not kept on the page');
    const saved = await admin<{ oauth: Record<string, unknown> }>('GET', `/v1/webhooks/endpoint/${endpoint!.id}`);
    assert.deepEqual(
      { clientId: saved.oauth.clientId, tokenUrl: saved.oauth.tokenUrl, scope: saved.oauth.scope },
      { clientId: 'tessera-sender', tokenUrl: `${world.url}/token`, scope: ['hooks:write'] },
    );
    assert.ok(!JSON.stringify(saved).includes('receiver-secret-1'), 'the secret is never returned');
    await screenshot(page, 'admin-oauth-04-endpoint-oauth', true);
    assert.deepEqual(await axe(page), []);
    // A delivery: Tessera fetched a token with the client's credentials and sent it as Bearer.
    await admin('PATCH', `/v1/user/${(await admin<{ userId: string }>('GET', '/v1/user')).userId}`, {
      friendlyName: 'Admin with a token',
    });
    for (let i = 0; i < 300 && !world.seen.some((s) => s.path === '/hook'); i++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    const tokenCall = world.seen.find((s) => s.path === '/token');
    assert.ok(tokenCall, 'the token URL was called');
    assert.equal(tokenCall.auth, basic('tessera-sender', 'receiver-secret-1'));
    assert.match(tokenCall.body, /grant_type=client_credentials/);
    assert.equal(world.seen.find((s) => s.path === '/hook')?.auth, 'Bearer receiver-token-1');
    // Removing it.
    await page.click('#hook-oauth-remove');
    await page.waitForSelector('#hook-oauth-current >> text=No OAuth client');
  });

  it('fits a phone and the dark theme', async () => {
    const { page } = browser;
    await page.goto(`${server.url}/app/admin/integrations`);
    await page.waitForSelector('#oauth-form');
    await page.click('button[aria-label^="Switch to dark"]');
    await page.setViewportSize({ width: 390, height: 800 });
    await page.locator('#oauth-title').scrollIntoViewIfNeeded();
    await screenshot(page, 'admin-oauth-05-phone-dark');
    assert.deepEqual(await axe(page), []);
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.click('button[aria-label^="Switch to light"]');
    assert.deepEqual(browser.problems, []);
  });

  it('shows a caller without User Management that they may not manage OAuth clients; their own consents stay theirs', async () => {
    const viewer = await openBrowser({ width: 390, height: 800 });
    try {
      await signIn(viewer.page, server.url, VIEWER);
      await viewer.page.goto(`${server.url}/app/admin/integrations`);
      await viewer.page.waitForSelector(
        'text=You may not manage OAuth clients: it takes the User Management privilege',
      );
      assert.equal(await viewer.page.$('#oauth-form'), null);
      await viewer.page.waitForSelector('#consents >> text=Tessera web app');
      await viewer.page.locator('#oauth-title').scrollIntoViewIfNeeded();
      await screenshot(viewer.page, 'admin-oauth-06-refused');
      assert.deepEqual(await axe(viewer.page), []);
      const asViewer = await apiAs(server.url, VIEWER);
      await asViewer('GET', '/v1/oauth2/clients', undefined, 403);
      await asViewer('POST', '/v1/oauth2/clients', { name: 'x', redirectUris: [`${world.url}/cb`] }, 403);
      assert.deepEqual(viewer.problems, []);
    } finally {
      await viewer.close();
    }
  });
});
