import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import {
  axe,
  openBrowser,
  screenshot,
  signIn,
  skip,
  startServer,
  type Browser,
  type RunningServer,
} from './harness.ts';

/** A folder of real JPEGs (and a nested folder), made with sharp. */
async function imageFolder(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-web-images-'));
  mkdirSync(join(dir, 'campaign', 'extra'), { recursive: true });
  const images = [
    ['campaign/beach-sunset.jpg', '#f2a93b', 640, 427],
    ['campaign/beach-morning.jpg', '#5bc0eb', 600, 400],
    ['campaign/product-red.jpg', '#e4572e', 500, 500],
    ['campaign/product-green.jpg', '#3bb273', 500, 500],
    ['campaign/team-offsite.jpg', '#2f6fde', 720, 480],
    ['campaign/extra/logo-draft.jpg', '#9b5de5', 400, 400],
  ] as const;
  for (const [name, colour, width, height] of images) {
    const stripe = Buffer.from(
      `<svg width="${width}" height="${height}"><rect width="${width}" height="${height}" fill="${colour}"/><circle cx="${width / 2}" cy="${height / 2}" r="${Math.min(width, height) / 3}" fill="#ffffff" fill-opacity="0.5"/></svg>`,
    );
    await sharp(stripe).jpeg({ quality: 80 }).toFile(join(dir, name));
  }
  return join(dir, 'campaign');
}

describe('web app in a real browser', { skip }, () => {
  let server: RunningServer;
  let browser: Browser;
  let folder: string;
  before(async () => {
    [server, folder] = await Promise.all([startServer(), imageFolder()]);
    browser = await openBrowser();
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    if (folder) rmSync(join(folder, '..'), { recursive: true, force: true });
  });

  it('GET / redirects to the app, which is served with a strict Content-Security-Policy', async () => {
    const root = await fetch(`${server.url}/`, { redirect: 'manual' });
    assert.equal(root.status, 302);
    assert.equal(root.headers.get('location'), '/app/');
    const app = await fetch(`${server.url}/app/asset/anything`);
    assert.equal(app.status, 200);
    const csp = app.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.match(csp, /style-src 'self'(;|$)/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https:\/\/(?!127)/);
    const html = await app.text();
    assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
    assert.doesNotMatch(html, /<style/, 'no inline style');
  });

  it('signs in through the OAuth code flow with PKCE, without CSP violations or accessibility problems', async () => {
    const { page } = browser;
    await page.goto(`${server.url}/`);
    await page.waitForSelector('#sign-in');
    await screenshot(page, '01-sign-in');
    assert.deepEqual(await axe(page), []);
    await signIn(page, server.url);
    await page.waitForSelector('.toolbar .count');
    await screenshot(page, '02-empty-library');
    assert.deepEqual(await axe(page), []);
    // The access token is only in memory: nothing but the rotated refresh token is stored.
    const stored = await page.evaluate(() => Object.keys(localStorage));
    assert.ok(stored.includes('tessera.refreshToken'));
    assert.ok(
      !(await page.evaluate(() => JSON.stringify({ ...localStorage, ...sessionStorage }))).includes('eyJ'),
      'no JWT in storage',
    );
  });

  it('uploads a folder of real images and shows their thumbnails', async () => {
    const { page } = browser;
    await page.click('#upload-button');
    await page.waitForSelector('#uploads-title');
    await page.setInputFiles('#folder-input', folder);
    await page.waitForFunction(() => document.querySelectorAll('.queue-item.done').length === 6, undefined, {
      timeout: 60_000,
    });
    await screenshot(page, '03-upload-queue');
    await page.click('[aria-label="Close the upload panel"]');
    await page.waitForFunction(() => document.querySelectorAll('.tile img').length === 6, undefined, {
      timeout: 60_000,
    });
    // Every thumbnail loaded (signed URLs an <img> can fetch without an auth header).
    await page.waitForFunction(() =>
      [...document.querySelectorAll<HTMLImageElement>('.tile img')].every(
        (img) => img.complete && img.naturalWidth > 0,
      ),
    );
    assert.match((await page.textContent('.toolbar .count')) ?? '', /6 assets/);
    await screenshot(page, '04-library-grid');
    assert.deepEqual(await axe(page), []);
  });

  it('searches as you type, filters by a facet, and switches to the list', async () => {
    const { page } = browser;
    await page.fill('#search', 'beac');
    await page.waitForFunction(() => document.querySelector('.toolbar .count')?.textContent?.includes('2 assets'));
    await screenshot(page, '05-search');
    await page.fill('#search', '');
    await page.waitForFunction(() => document.querySelector('.toolbar .count')?.textContent?.includes('6 assets'));
    await page.check('.facet input[type=checkbox] >> nth=0');
    await page.waitForSelector('.facet input:checked');
    await page.click('button:has-text("List")');
    await page.waitForSelector('.tile.list');
    await screenshot(page, '06-list');
    await page.click('button:has-text("Grid")');
    await page.click('button:has-text("Clear filters")');
    // Each new query's answer is measured from its arrival to the frame that shows it (printed, not asserted).
    const paints = await page.evaluate(() =>
      performance.getEntriesByName('tessera:search-paint').map((e) => Math.round(e.duration * 10) / 10),
    );
    assert.ok(paints.length >= 3, `every search answer is measured (${paints.length})`);
    const sorted = [...paints].sort((a, b) => a - b);
    console.log(
      `search answer painted after the API's answer: ${paints.length} searches, median ${sorted[Math.floor(sorted.length / 2)]} ms, ` +
        `max ${sorted.at(-1)} ms (target: within 100 ms)`,
    );
  });

  it('switches to the dark theme and fits a phone', async () => {
    const { page } = browser;
    await page.click('button[aria-label^="Switch to dark"]');
    assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'dark');
    await screenshot(page, '07-dark');
    assert.deepEqual(await axe(page), []);
    await page.setViewportSize({ width: 390, height: 800 });
    await screenshot(page, '08-phone');
    assert.deepEqual(await axe(page), []);
    await page.click('button[aria-label^="Switch to light"]');
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it("opens an asset, shows the API's validation error on its field, then saves", async () => {
    const { page } = browser;
    await page.dblclick('.tile[data-asset-id] >> nth=0');
    await page.waitForSelector('.metadata-form');
    await page.waitForSelector('.preview-box img');
    await page.fill('[data-field="Expiration Date"] input', '31/12/2027');
    await page.fill('[data-field="Title"] input', 'Beach at sunset');
    await page.click('.metadata-form button[type=submit]');
    await page.waitForSelector('[data-field="Expiration Date"] .field-error');
    assert.match((await page.textContent('[data-field="Expiration Date"] .field-error')) ?? '', /is not a date/);
    assert.equal(await page.getAttribute('[data-field="Expiration Date"] input', 'aria-invalid'), 'true');
    // Only the bad field is marked.
    await page.waitForSelector('[data-field="Title"] .field-error', { state: 'detached' });
    await screenshot(page, '09-asset-validation-error');
    assert.deepEqual(await axe(page), []);
    await page.fill('[data-field="Expiration Date"] input', '2027-12-31');
    await page.click('.metadata-form button[type=submit]');
    await page.waitForSelector('.metadata-form .notice:has-text("Saved.")');
    await page.waitForSelector('.field-error', { state: 'detached' });
    await page.click('#tab-technical');
    await page.waitForSelector('.technical dt');
    await page.click('#tab-versions');
    await page.waitForSelector('.versions li');
    await screenshot(page, '10-asset-versions');
    await page.click('button:has-text("Zoom in")');
    await page.waitForSelector('.preview-box.zoomed img');
    await page.click('.back');
    await page.waitForSelector('.tile[data-asset-id]');
  });

  it('bulk-edits a selection made with the keyboard and watches the Action finish', async () => {
    const { page } = browser;
    await page.focus('.scroller');
    await page.keyboard.press('Control+a');
    await page.waitForSelector('.selectionbar:has-text("6 selected")');
    await page.click('#bulk-edit');
    await page.waitForSelector('#bulk-title');
    await page.selectOption('#bulk-attribute', { label: 'Creator' });
    await page.fill('#bulk-value', 'Marketing team');
    await page.click('.modal button[type=submit]');
    await page.waitForSelector('#bulk-result:has-text("Done: 6 changed, 0 failed")', { timeout: 30_000 });
    await screenshot(page, '11-bulk-edit');
    assert.deepEqual(await axe(page), []);
    await page.click('.modal button:has-text("Close")');
    // Add two keywords to the six, then remove one of them: the other stays.
    const bulk = async (mode: string, value: string) => {
      await page.click('#bulk-edit');
      await page.waitForSelector('#bulk-title');
      await page.selectOption('#bulk-attribute', { label: 'Keywords' });
      await page.selectOption('#bulk-mode', mode);
      await page.fill('#bulk-value', value);
      await page.click('.modal button[type=submit]');
      await page.waitForSelector('#bulk-result:has-text("Done: 6 changed, 0 failed")', { timeout: 30_000 });
      await page.click('.modal button:has-text("Close")');
    };
    await bulk('append', 'spring');
    await bulk('append', 'launch');
    await bulk('remove', 'spring');
    await page.keyboard.press('Escape');
    await page.fill('#search', 'marketing');
    await page.waitForFunction(() => document.querySelector('.toolbar .count')?.textContent?.includes('6 assets'));
    await page.fill('#search', 'launch');
    await page.waitForFunction(() => document.querySelector('.toolbar .count')?.textContent?.includes('6 assets'));
    await page.fill('#search', 'spring');
    await page.waitForFunction(() => document.querySelector('.toolbar .count')?.textContent?.includes('0 assets'));
    await page.fill('#search', '');
    await page.waitForFunction(() => document.querySelector('.toolbar .count')?.textContent?.includes('6 assets'));
  });

  it('builds a collection from a selection, reorders it, and shares it as a zip link', async () => {
    const { page } = browser;
    await page.click('.mainnav a:has-text("Collections")');
    await page.fill('#collection-name', 'Spring campaign');
    await page.click('button:has-text("Create")');
    await page.waitForSelector('.collection-list a:has-text("Spring campaign")');
    await page.click('.mainnav a:has-text("Library")');
    await page.waitForSelector('.tile img');
    // Mouse selection: a click, then Ctrl-click two more.
    await page.click('.tile[data-asset-id] >> nth=0');
    await page.click('.tile[data-asset-id] >> nth=1', { modifiers: ['Control'] });
    await page.click('.tile[data-asset-id] >> nth=2', { modifiers: ['Control'] });
    await page.waitForSelector('.selectionbar:has-text("3 selected")');
    await page.click('button:has-text("Add selection to collection")');
    await page.waitForSelector('.notice:has-text("Added 3 assets to Spring campaign")');
    await page.click('.mainnav a:has-text("Collections")');
    await page.waitForSelector('.collection-list a:has-text("Spring campaign")');
    await screenshot(page, '12a-collections-list');
    assert.deepEqual(await axe(page), []);
    await page.click('.collection-list a:has-text("Spring campaign")');
    await page.waitForFunction(() => document.querySelectorAll('.member').length === 3);
    const before = await page.$$eval('.member', (els) => els.map((e) => e.getAttribute('data-file-id')));
    await page.click('.member >> nth=0 >> button[aria-label^="Move"][aria-label$="later"]');
    await page.waitForFunction(
      (first) => document.querySelector('.member')?.getAttribute('data-file-id') !== first,
      before[0],
    );
    await page.reload();
    await page.waitForFunction(() => document.querySelectorAll('.member').length === 3);
    const after = await page.$$eval('.member', (els) => els.map((e) => e.getAttribute('data-file-id')));
    assert.deepEqual(after, [before[1], before[0], before[2]], 'the new order is stored');
    await page.fill('#share-recipients', 'agency@example.com');
    await page.click('button:has-text("Share as a zip link")');
    await page.waitForSelector('.share-links a');
    const link = await page.getAttribute('.share-links a', 'href');
    await screenshot(page, '12-collection');
    assert.deepEqual(await axe(page), []);
    // The link is the zip (once the Action has built it).
    let zip: Response | undefined;
    for (let i = 0; i < 100; i++) {
      zip = await fetch(link!);
      if (zip.status === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    assert.equal(zip!.status, 200);
    assert.match(zip!.headers.get('content-type') ?? '', /zip/);
    await page.click('.mainnav a:has-text("Library")');
  });

  it('says so when the library cannot be loaded, and loads again once the API answers', async () => {
    const { page } = browser;
    const fail = (route: { fulfill(r: { status: number; contentType: string; body: string }): Promise<void> }) =>
      route.fulfill({
        status: 503,
        contentType: 'application/json',
        body: JSON.stringify({
          status: 'error',
          code: 'service_unavailable',
          message: 'The database is not answering',
        }),
      });
    await page.route(/\/v1\/search\/keyword/, fail);
    try {
      await page.fill('#search', 'beach');
      const alert = await page.waitForSelector('.results [role="alert"]', { timeout: 20_000 });
      assert.match((await alert.textContent()) ?? '', /database is not answering/i);
      assert.equal(
        await page.textContent('.toolbar .count .visually-hidden + *, .toolbar .count'),
        'Library: Not loaded',
      );
      await screenshot(page, '13-library-error');
      assert.deepEqual(await axe(page), []);
    } finally {
      await page.unroute(/\/v1\/search\/keyword/, fail);
    }
    await page.fill('#search', '');
    await page.waitForFunction(() => document.querySelector('.toolbar .count')?.textContent?.includes('6 assets'));
    assert.equal(await page.locator('.results [role="alert"]').count(), 0, 'the error is gone once it loads');
  });

  it('signs out, and the refresh token no longer works', async () => {
    const { page } = browser;
    const refreshToken = await page.evaluate(() => localStorage.getItem('tessera.refreshToken'));
    await page.click('#user-menu');
    await page.click('#sign-out');
    await page.waitForSelector('#sign-in');
    assert.equal(await page.evaluate(() => localStorage.getItem('tessera.refreshToken')), null);
    const answer = await fetch(`${server.url}/v1/oauth2/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        client_id: 'tessera-web',
        refresh_token: refreshToken!,
      }),
    });
    assert.equal(answer.status, 400);
    assert.deepEqual(browser.problems, []);
  });
});
