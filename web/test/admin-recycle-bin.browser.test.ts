import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import {
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
  uploadAsset,
} from './harness.ts';

const VIEWER = { username: 'viewer-bin', password: 'Viewer-bin-pass-1' };

const jpeg = (colour: string) =>
  sharp({ create: { width: 120, height: 80, channels: 3, background: colour } })
    .jpeg()
    .toBuffer();

/**
 * Recycle bin and Actions. The web server runs without workers, so an Action stays queued until the
 * test starts a second Tessera process (workers on, same data directory): the queued purge can be
 * cancelled and resumed in the page without a race, then seen to run.
 */
describe('administration: recycle bin and Actions in a real browser', { skip }, () => {
  let server: RunningServer;
  let workers: RunningServer | undefined;
  let browser: Browser;
  let admin: Call;
  const ids: Record<string, string> = {};
  let metadataTemplateId = '';
  before(async () => {
    server = await startServer({ TESSERA_WORKERS: 'false' });
    admin = await apiAs(server.url);
    await createViewer(admin, VIEWER, 'Vic');
    const security = await admin<{ templateId: string }[]>('GET', '/v1/security/template');
    const template = await admin<{ template: { templateId: string } }[]>('GET', '/v1/metadata/template');
    metadataTemplateId = template[0]!.template.templateId;
    const common = { metadataTemplateId, securityTemplateIds: [security[0]!.templateId] };
    for (const [name, colour] of [
      ['autumn.jpg', '#c0541e'],
      ['beach.jpg', '#1e8cc0'],
      ['city.jpg', '#555555'],
      ['dunes.jpg', '#d6b25e'],
    ] as const)
      ids[name] = (await uploadAsset(admin, name, await jpeg(colour), common)).objectId;
    for (const name of ['autumn.jpg', 'beach.jpg', 'city.jpg'])
      await admin('POST', `/v1/asset/${ids[name]}/delete`, { action: 'delete' });
    browser = await openBrowser();
    await signIn(browser.page, server.url);
  });
  after(async () => {
    await browser?.close();
    await workers?.stop();
    await server?.stop();
  });

  it('sends an asset to the recycle bin from its page and lists it there, newest first, without accessibility problems', async () => {
    const { page } = browser;
    const scripts: string[] = [];
    page.on('request', (r) => r.resourceType() === 'script' && scripts.push(r.url()));
    await page.goto(`${server.url}/app/asset/${ids['dunes.jpg']}`);
    await page.click('button:has-text("Move to recycle bin")');
    await page.waitForSelector('.error:has-text("in the recycle bin")');
    await page.click('nav[aria-label="Main"] >> text=Administration');
    await page.click('nav[aria-label="Administration sections"] >> text=Recycle bin');
    await page.waitForSelector('#recycle-bin');
    assert.ok(
      scripts.some((s) => /\/assets\/recycle-bin-[\w-]+\.js$/.test(s)),
      scripts.join(', '),
    );
    const names = await page.$$eval('#recycle-bin tbody th', (cells) => cells.map((c) => c.textContent));
    assert.deepEqual(names, ['dunes.jpg', 'city.jpg', 'beach.jpg', 'autumn.jpg']);
    assert.match((await page.textContent('#recycle-bin tbody tr:first-child')) ?? '', /admin/);
    await screenshot(page, 'admin-10-recycle-bin', true);
    assert.deepEqual(await axe(page), []);
  });

  it('restores an asset: it leaves the recycle bin and is live again', async () => {
    const { page } = browser;
    await page.click('button[aria-label="Restore autumn.jpg"]');
    await page.waitForSelector('#bin-notice >> text="autumn.jpg" is back in the library.');
    await page.waitForSelector('button[aria-label="Restore autumn.jpg"]', { state: 'detached' });
    const asset = await admin<{ metadataDeletedEpoch?: number | null }>('GET', `/v1/asset/${ids['autumn.jpg']}`);
    assert.ok(!asset.metadataDeletedEpoch, 'restored');
  });

  it('purges the selection as an Action: cancelled while queued, resumed, then run by a worker; the asset is gone', async () => {
    const { page } = browser;
    await page.check('input[aria-label="Select beach.jpg"]');
    await page.check('input[aria-label="Select city.jpg"]');
    await page.click('#purge-selected');
    await page.waitForSelector('#purge-question >> text=Purge 2 assets for good');
    await page.click('#purge-yes');
    // No worker yet: the Action waits, and can be cancelled, then resumed.
    await page.waitForSelector('.watched .state >> text=queued');
    await page.click('.watched .cancel-action');
    await page.waitForSelector('.watched .state >> text=cancelled');
    await screenshot(page, 'admin-11-purge-cancelled', true);
    assert.deepEqual(await axe(page), []);
    await page.click('.watched .resume-action');
    await page.waitForSelector('.watched .state >> text=queued');
    // A bulk edit with an item that does not exist, to show a per-item error on the Actions page.
    await admin('PATCH', '/v1/asset', {
      metadataTemplateId,
      objectIds: [ids['autumn.jpg'], '0190a4b2-0000-7000-8000-000000000000'],
      metadataDocument: [],
    });
    workers = await startServer({ TESSERA_DATA_DIR: server.dataDir });
    await page.waitForSelector('.watched .state >> text=succeeded', { timeout: 60_000 });
    assert.match((await page.textContent('.watched .result')) ?? '', /purged: 2/);
    await page.waitForFunction(() => document.querySelectorAll('#recycle-bin tbody tr').length === 1, undefined, {
      timeout: 10_000,
    });
    assert.equal(await page.textContent('#recycle-bin tbody th'), 'dunes.jpg');
    await admin('GET', `/v1/asset/${ids['beach.jpg']}`, undefined, 404);
  });

  it('lists running and past Actions with progress, results and per-item errors; resumes none that succeeded', async () => {
    const { page } = browser;
    await page.click('text=See every Action');
    await page.waitForURL((u) => u.pathname === '/app/admin/actions');
    await page.waitForSelector('#actions .action-card >> text=Bulk edit');
    await page.waitForFunction(
      () => [...document.querySelectorAll('#actions .action-card .state')].every((s) => s.textContent === 'succeeded'),
      undefined,
      { timeout: 60_000 },
    );
    const cards = await page.$$eval('#actions .action-card h2', (h) => h.map((e) => e.textContent));
    assert.deepEqual(cards, ['Bulk edit', 'Purge from the recycle bin']);
    await page.click('#actions .action-card:first-child .item-errors summary');
    await page.waitForSelector('#actions .item-errors >> text=0190a4b2-0000-7000-8000-000000000000');
    assert.match((await page.textContent('#actions .item-errors')) ?? '', /Asset not found/);
    // A succeeded Action offers no Resume.
    await page.waitForSelector('#actions .resume-action', { state: 'detached' });
    await page.selectOption('#actions-status', 'failed');
    await page.waitForSelector('text=No Actions.');
    await page.selectOption('#actions-status', '');
    await page.waitForSelector('#actions .action-card');
    await screenshot(page, 'admin-12-actions', true);
    assert.deepEqual(await axe(page), []);
  });

  it('fits a phone and the dark theme', async () => {
    const { page } = browser;
    await admin('POST', `/v1/asset/${ids['autumn.jpg']}/delete`, { action: 'delete' });
    await page.click('button[aria-label^="Switch to dark"]');
    await page.setViewportSize({ width: 390, height: 800 });
    await page.click('nav[aria-label="Administration sections"] >> text=Recycle bin');
    await page.waitForSelector('#recycle-bin');
    await screenshot(page, 'admin-13-recycle-bin-phone-dark', true);
    assert.deepEqual(await axe(page), []);
    await page.click('nav[aria-label="Administration sections"] >> text=Actions');
    await page.waitForSelector('#actions .action-card');
    await screenshot(page, 'admin-14-actions-phone-dark', true);
    assert.deepEqual(await axe(page), []);
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.click('button[aria-label^="Switch to light"]');
    assert.deepEqual(browser.problems, []);
  });

  it('shows a caller without Delete or Purge what they may not do, before any click', async () => {
    const viewer = await openBrowser({ width: 1280, height: 800 });
    try {
      await signIn(viewer.page, server.url, VIEWER);
      await viewer.page.goto(`${server.url}/app/admin/recycle-bin`);
      await viewer.page.waitForSelector(
        'text=You may not purge assets from the recycle bin: it takes the Purge privilege',
      );
      await viewer.page.waitForSelector('#recycle-bin >> text=autumn.jpg');
      await viewer.page.waitForSelector('text=You may not restore any of these assets: it takes the Delete privilege');
      assert.equal(await viewer.page.$('#purge-selected'), null);
      assert.equal(await viewer.page.$('#purge-all'), null);
      assert.equal(await viewer.page.$('button.restore'), null);
      await viewer.page.waitForSelector('#recycle-bin >> text=Restoring takes the Delete permission on this asset');
      await screenshot(viewer.page, 'admin-15-recycle-bin-refused');
      assert.deepEqual(await axe(viewer.page), []);
      // The API agrees.
      const asViewer = await apiAs(server.url, VIEWER);
      await asViewer('POST', '/v1/asset/purge', { all: true }, 403);
      await asViewer('POST', `/v1/asset/${ids['autumn.jpg']}/delete`, { action: 'undelete' }, 403);
      // Actions: only their own (none); the admin's purge is not theirs to see, cancel or resume.
      await viewer.page.click('nav[aria-label="Administration sections"] >> text=Actions');
      await viewer.page.waitForSelector('text=No Actions.');
      await viewer.page.waitForSelector("text=You see your own Actions, and other people's when you hold");
      const purge = (await admin<{ actions: { id: string; type: string }[] }>('GET', '/v1/actions')).actions.find(
        (a) => a.type === 'assets.purge',
      )!;
      await asViewer('POST', `/v1/action/${purge.id}/resume`, {}, 404);
      await screenshot(viewer.page, 'admin-16-actions-refused');
      assert.deepEqual(await axe(viewer.page), []);
      assert.deepEqual(viewer.problems, []);
    } finally {
      await viewer.close();
    }
  });
});
