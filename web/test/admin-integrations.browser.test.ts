import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
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

const VIEWER = { username: 'viewer-web', password: 'Viewer-web-pass-1' };

/** A real webhook receiver: answers 500 until told otherwise, and keeps what it got. */
async function receiver(): Promise<{
  server: Server;
  url: string;
  answer: { status: number; body: string };
  received: string[];
}> {
  const state = { answer: { status: 500, body: 'receiver down for maintenance' }, received: [] as string[] };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      state.received.push(body);
      res.writeHead(state.answer.status, { 'content-type': 'text/plain' }).end(state.answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    get answer() {
      return state.answer;
    },
    set answer(v) {
      state.answer = v;
    },
    received: state.received,
  };
}

describe('administration: integrations (API keys, webhook endpoints) in a real browser', { skip }, () => {
  let server: RunningServer;
  let browser: Browser;
  let admin: Call;
  let hook: Awaited<ReturnType<typeof receiver>>;
  before(async () => {
    [server, hook] = await Promise.all([startServer({ TESSERA_ALLOW_PRIVATE_TARGETS: 'true' }), receiver()]);
    admin = await apiAs(server.url);
    await createViewer(admin, VIEWER, 'Vera');
    browser = await openBrowser();
    await signIn(browser.page, server.url);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    hook?.server.close();
  });

  it('opens Administration as its own chunk and shows both sections without accessibility problems', async () => {
    const { page } = browser;
    const scripts: string[] = [];
    page.on('request', (r) => r.resourceType() === 'script' && scripts.push(r.url()));
    await page.click('nav[aria-label="Main"] >> text=Administration');
    await page.waitForSelector('#key-form');
    await page.waitForSelector('#endpoint-form .events input[type=checkbox]');
    assert.ok(
      scripts.some((s) => /\/assets\/integrations-[\w-]+\.js$/.test(s)),
      `the section is a lazy chunk: ${scripts.join(', ')}`,
    );
    assert.equal(new URL(page.url()).pathname, '/app/admin');
    assert.deepEqual(await axe(page), []);
  });

  it('creates an API key with a role and an expiry after a password check, shows it once, and revokes it', async () => {
    const { page } = browser;
    await page.fill('#key-name', 'Nightly import');
    await page.selectOption('#key-role', { label: 'Editor' });
    const nextYear = `${new Date().getUTCFullYear() + 1}-06-30`;
    await page.fill('#key-expires', nextYear);
    // A wrong password is refused on the password field; nothing is created.
    await page.fill('#key-password', 'not my password');
    await page.click('#key-create');
    await page.waitForSelector('#key-password[aria-invalid="true"]');
    assert.match((await page.textContent('#key-password-error')) ?? '', /not right/);
    assert.equal(await page.inputValue('#key-password'), '', 'the password is not kept');
    await page.fill('#key-password', ADMIN.password);
    await page.click('#key-create');
    await page.waitForSelector('#new-key');
    const key = await page.inputValue('#new-key');
    assert.match(key, /^tsk_[0-9A-Za-z]{49}$/);
    await screenshot(page, 'admin-01-api-key-created', true);
    assert.deepEqual(await axe(page), []);
    // The key works, with the chosen role and expiry.
    const asKey = await fetch(`${server.url}/v1/user`, { headers: { 'x-api-key': key } });
    assert.equal(asKey.status, 200);
    const listed = (
      await admin<{ apiKeys: { name: string; roleId: string; expiresAt: string }[] }>(
        'POST',
        '/api/v1/api-key/list-api-keys',
        {},
      )
    ).apiKeys;
    const editor = (await admin<{ id: string; name: string }[]>('GET', '/v1/roles')).find((r) => r.name === 'Editor')!;
    assert.equal(listed.length, 1);
    assert.equal(listed[0]!.roleId, editor.id);
    assert.equal(listed[0]!.expiresAt.slice(0, 7), nextYear.slice(0, 7));
    // Shown once: dismissed, it is gone and the table shows only its hint.
    await page.click('text=I have stored it');
    await page.waitForSelector('#new-key', { state: 'detached' });
    assert.match((await page.textContent('#api-keys')) ?? '', new RegExp(`…${key.slice(-4)}`));
    await page.click('button[aria-label="Revoke Nightly import"]');
    await page.click('#revoke-yes');
    await page.waitForSelector('text=Key "Nightly import" revoked.');
    assert.equal((await fetch(`${server.url}/v1/user`, { headers: { 'x-api-key': key } })).status, 401);
    await page.check('#keys-old');
    await page.waitForSelector('#api-keys >> text=revoked');
  });

  it("subscribes an endpoint to picked event types, shows each attempt with the receiver's answer, resends, replays, edits, rotates and deletes", async () => {
    const { page } = browser;
    await page.fill('#hook-description', 'People sync');
    await page.fill('#hook-url', hook.url);
    await page.check('text=Every user event (user.*)');
    await page.click('#endpoint-save');
    await page.waitForSelector('#new-hook-secret');
    assert.match(await page.inputValue('#new-hook-secret'), /^whsec_/);
    await page.waitForSelector('#endpoints >> text=People sync');
    // An event it subscribes to: the receiver answers 500 and the log shows that answer.
    await admin('PATCH', `/v1/user/${(await admin<{ userId: string }>('GET', '/v1/user')).userId}`, {
      friendlyName: 'The Admin',
    });
    await page.click('a[aria-label="Open People sync"]');
    await page.waitForSelector('#log-title');
    await page.waitForFunction(
      () => {
        document.querySelector<HTMLButtonElement>('#log-refresh')?.click();
        return document.querySelectorAll('#messages li').length > 0;
      },
      undefined,
      { timeout: 30_000, polling: 500 },
    );
    await page.click('#messages li summary');
    await page.waitForSelector('#messages .attempt >> text=receiver down for maintenance');
    assert.match((await page.textContent('#messages .attempt')) ?? '', /HTTP 500/);
    assert.match((await page.textContent('#messages .attempt')) ?? '', /POST http:\/\/127\.0\.0\.1:\d+\/hook/);
    // The receiver is back: resend, and the successful attempt with its answer is shown.
    hook.answer = { status: 200, body: 'ok, thanks' };
    await page.click('#messages li .resend');
    await page.waitForFunction(
      () => {
        const summary = document.querySelector<HTMLElement>('#messages li summary');
        if (summary && !summary.textContent?.includes('succeeded'))
          document.querySelector<HTMLButtonElement>('#log-refresh')?.click();
        return summary?.textContent?.includes('succeeded');
      },
      undefined,
      { timeout: 30_000, polling: 500 },
    );
    await page.waitForSelector('#messages .attempt >> text=ok, thanks');
    assert.ok(hook.received.some((b) => b.includes('user.updated')));
    await screenshot(page, 'admin-02-delivery-log', true);
    assert.deepEqual(await axe(page), []);
    // Replay since a time: nothing failed now, so nothing would be sent again.
    await page.click('#replay-count');
    await page.waitForSelector('#log-notice >> text=0 failed messages since then would be sent again.');
    await page.click('#replay');
    await page.waitForSelector('#log-notice >> text=0 messages queued again.');
    // Rotate the secret (shown), pause, edit, delete.
    const before = (
      await admin<{ key: string }>(
        'GET',
        `/v1/webhooks/endpoint/${new URL(page.url()).pathname.split('/').pop()}/secret`,
      )
    ).key;
    await page.click('#rotate');
    await page.waitForSelector('#endpoint-secret');
    const rotated = await page.inputValue('#endpoint-secret');
    assert.match(rotated, /^whsec_/);
    assert.notEqual(rotated, before);
    await page.click('#pause');
    await page.waitForSelector('#endpoint-state >> text=paused');
    await page.fill('#hook-description', 'People sync (HR)');
    await page.click('#endpoint-save');
    await page.waitForSelector('h1 >> text=People sync (HR)');
    // A bad value comes back on its field.
    await page.fill('#hook-description', 'abc');
    await page.click('#endpoint-save');
    await page.waitForSelector('#hook-description[aria-invalid="true"]');
    await page.click('#endpoint-delete');
    await page.click('#endpoint-delete-yes');
    await page.waitForURL((u) => u.pathname === '/app/admin/integrations');
    await page.waitForSelector('text=No webhook endpoints.');
    assert.deepEqual(await admin('GET', '/v1/webhooks/endpoint/list'), []);
  });

  it('fits a phone and the dark theme', async () => {
    const { page } = browser;
    await page.click('button[aria-label^="Switch to dark"]');
    await page.setViewportSize({ width: 390, height: 800 });
    await page.waitForSelector('#key-form');
    await screenshot(page, 'admin-03-integrations-phone-dark', true);
    assert.deepEqual(await axe(page), []);
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.click('button[aria-label^="Switch to light"]');
    assert.deepEqual(browser.problems, []);
  });

  it('shows a caller without the privileges what they may not do, before any click', async () => {
    const viewer = await openBrowser({ width: 390, height: 800 });
    try {
      await signIn(viewer.page, server.url, VIEWER);
      await viewer.page.goto(`${server.url}/app/admin/integrations`);
      await viewer.page.waitForSelector('text=You may not manage API keys: it takes the API Key Management privilege');
      await viewer.page.waitForSelector(
        'text=You may not manage webhook endpoints: it takes the Webhooks Administration privilege',
      );
      assert.equal(await viewer.page.$('#key-form'), null);
      assert.equal(await viewer.page.$('#endpoint-form'), null);
      await screenshot(viewer.page, 'admin-04-integrations-refused');
      assert.deepEqual(await axe(viewer.page), []);
      // The API agrees: the same calls are refused.
      const asViewer = await apiAs(server.url, VIEWER);
      await asViewer('GET', '/v1/webhooks/endpoint/list', undefined, 403);
      assert.deepEqual(viewer.problems, []);
    } finally {
      await viewer.close();
    }
  });
});
