import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import sharp from 'sharp';
import {
  ADMIN,
  apiAs,
  axe,
  openBrowser,
  renditionsSettled,
  screenshot,
  signIn,
  skip,
  startServer,
  uploadAsset,
  type Browser,
  type Call,
  type RunningServer,
} from './harness.ts';

const VIEWER = { username: 'viewer-boards', password: 'Viewer-boards-pass-1' };

const jpeg = (colour: string) =>
  sharp({ create: { width: 160, height: 120, channels: 3, background: colour } })
    .jpeg()
    .toBuffer();

const order = (page: Page) =>
  page.$$eval('.block-list > li', (items) => items.map((li) => (li as HTMLElement).dataset.blockType));

/** Picks a block type and waits for its editor. */
async function startBlock(page: Page, type: string) {
  await page.selectOption('#block-type', type);
  await page.waitForSelector('.add-block .block-editor');
}

async function addBlock(page: Page, count: number) {
  await page.click('.add-block button:has-text("Add block")');
  await page.waitForFunction((n) => document.querySelectorAll('.block-list > li').length === n, count);
  await page.waitForSelector('.add-block .block-editor', { state: 'detached' });
}

/**
 * Story boards in the web app (issue 27 item 3): the list, the builder with every block type,
 * reordering by drag and by keyboard, the preview, read-only and refused viewers, and share links
 * opened in a browser that has never signed in.
 */
describe('story boards in a real browser', { skip }, () => {
  let server: RunningServer;
  let browser: Browser;
  let admin: Call;
  let boardId = '';
  const ids: Record<string, string> = {};
  before(async () => {
    server = await startServer();
    admin = await apiAs(server.url);
    const roles = await admin<{ id: string; name: string }[]>('GET', '/v1/roles');
    const groups = await admin<{ groupId: string; groupName: string }[]>('GET', '/v1/security/groups');
    await admin('POST', '/v1/user', {
      firstName: 'Vera',
      lastName: 'Viewer',
      friendlyName: 'Vera',
      email: 'vera@example.test',
      username: VIEWER.username,
      password: VIEWER.password,
      accountType: 'local',
      userRoleId: roles.find((r) => r.name === 'Viewer')!.id,
      groups: [groups.find((g) => g.groupName === 'Everyone')!.groupId],
    });
    const security = await admin<{ templateId: string }[]>('GET', '/v1/security/template');
    const template = await admin<{ template: { templateId: string } }[]>('GET', '/v1/metadata/template');
    const common = {
      metadataTemplateId: template[0]!.template.templateId,
      securityTemplateIds: [security[0]!.templateId],
    };
    for (const [name, colour] of [
      ['autumn.jpg', '#c0541e'],
      ['beach.jpg', '#1e8cc0'],
      ['city.jpg', '#555555'],
    ] as const) {
      ids[name] = (await uploadAsset(admin, name, await jpeg(colour), common)).objectId;
      await renditionsSettled(admin, ids[name]);
    }
    await admin('POST', '/v1/collection', {
      name: 'Seasons',
      collectionType: 'private',
      collectionDocument: [ids['autumn.jpg'], ids['beach.jpg']],
    });
    await admin('POST', '/v1/saved-searches', { name: 'Everything', query: { searchTerm: ['*'] } });
    browser = await openBrowser();
    await signIn(browser.page, server.url);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('lists story boards from the navigation; creates, renames and deletes one (asked first)', async () => {
    const { page } = browser;
    await page.click('nav[aria-label="Main"] >> text=Story boards');
    await page.waitForURL((u) => u.pathname === '/app/boards');
    await page.waitForSelector('text=No story boards yet.');
    await page.fill('#board-title', 'Scratch');
    await page.click('#create-board');
    await page.waitForURL((u) => /^\/app\/boards\/[\w-]+$/.test(u.pathname));
    await page.click('a.back');
    await page.click('button[aria-label="Rename Scratch"]');
    await page.fill('input[id^="rename-"]', 'Scratch pad');
    await page.click('.board-item button:has-text("Save")');
    await page.waitForSelector('#board-list a:has-text("Scratch pad")');
    await page.click('button[aria-label="Delete Scratch pad"]');
    await page.waitForSelector('[role="alertdialog"] >> text=Delete "Scratch pad"?');
    await page.click('[role="alertdialog"] >> text=Cancel');
    assert.equal(await page.locator('#board-list a:has-text("Scratch pad")').count(), 1);
    await page.click('button[aria-label="Delete Scratch pad"]');
    await page.click('#confirm-delete');
    await page.waitForSelector('text="Scratch pad" is deleted.');
    await page.waitForSelector('text=No story boards yet.');
    const left = await admin<{ items: unknown[] }>('GET', '/v1/storyboards');
    assert.equal(left.items.length, 0);
  });

  it('builds a board with one block of every type', async () => {
    const { page } = browser;
    await page.fill('#board-title', 'Spring campaign');
    await page.click('#create-board');
    await page.waitForURL((u) => /^\/app\/boards\/[\w-]+$/.test(u.pathname));
    boardId = new URL(page.url()).pathname.split('/').pop()!;
    await page.waitForSelector('h1:has-text("Spring campaign")');

    await startBlock(page, 'heading');
    await page.fill('#text-new', 'Our spring story');
    await page.selectOption('#level-new', '1');
    await addBlock(page, 1);

    await startBlock(page, 'richText');
    await page.click('#html-new');
    await page.keyboard.type('Fresh colours for a new season.');
    await page.keyboard.press('Control+A');
    await page.click('.rich-toolbar button:has-text("Bold")');
    await addBlock(page, 2);

    await startBlock(page, 'asset');
    await page.click('.add-block button[aria-label="Choose autumn.jpg"]');
    await page.waitForSelector('.add-block >> text=Chosen: autumn.jpg');
    await page.fill('#caption-new', 'Leaves in October');
    await addBlock(page, 3);

    await startBlock(page, 'gallery');
    await page.click('.add-block button[aria-label="Choose beach.jpg"]');
    await page.click('.add-block button[aria-label="Choose city.jpg"]');
    await page.waitForSelector('.add-block >> text=Chosen: beach.jpg, city.jpg');
    await addBlock(page, 4);

    await startBlock(page, 'collection');
    await page.waitForSelector('#source-new option:has-text("Seasons")', { state: 'attached' });
    await page.fill('#title-new', 'The seasons');
    await addBlock(page, 5);

    await startBlock(page, 'savedSearch');
    await page.waitForSelector('#source-new option:has-text("Everything")', { state: 'attached' });
    await page.fill('#limit-new', '2');
    await addBlock(page, 6);

    await startBlock(page, 'link');
    await page.fill('#url-new', 'https://example.com/spring');
    await page.fill('#label-new', 'Campaign site');
    await addBlock(page, 7);

    await startBlock(page, 'divider');
    await addBlock(page, 8);

    assert.deepEqual(await order(page), [
      'heading',
      'richText',
      'asset',
      'gallery',
      'collection',
      'savedSearch',
      'link',
      'divider',
    ]);
    const saved = await admin<{ blocks: Record<string, unknown>[] }>('GET', `/v1/storyboards/${boardId}`);
    assert.match(String(saved.blocks[1]!.html), /<(b|strong)>Fresh colours for a new season\.<\/(b|strong)>/);
    assert.equal(saved.blocks[2]!.assetId, ids['autumn.jpg']);
    assert.deepEqual(saved.blocks[3]!.assetIds, [ids['beach.jpg'], ids['city.jpg']]);
    // What each block shows, as the builder renders it.
    await page.waitForSelector('.block-list h2:has-text("Our spring story")');
    await page.waitForSelector('.block-list [data-block-type="asset"] img[alt="autumn.jpg"]');
    await page.waitForSelector('.block-list [data-block-type="collection"] h3:has-text("The seasons")');
    await page.waitForSelector('.block-list [data-block-type="collection"] >> text=2 of 2 shown');
    await page.waitForSelector('.block-list [data-block-type="savedSearch"] >> text=2 of 3 shown');
    await page.waitForSelector('.block-list a[href="https://example.com/spring"]:has-text("Campaign site")');
    await page.waitForFunction(() =>
      [...document.querySelectorAll<HTMLImageElement>('.block-list img')].every(
        (i) => i.complete && i.naturalWidth > 0,
      ),
    );
  });

  it('edits a block in place', async () => {
    const { page } = browser;
    await page.click('button[aria-label="Edit Link: Campaign site"]');
    await page.fill(
      '.block-list #label-' + (await page.getAttribute('li[data-block-type="link"]', 'data-block-id')),
      'Visit the campaign',
    );
    await page.click('.block-list button:has-text("Save block")');
    await page.waitForSelector('.block-list a:has-text("Visit the campaign")');
  });

  it('reorders by drag and by keyboard, and the order survives a reload', async () => {
    const { page } = browser;
    // Drag the divider (last) onto the saved search two blocks above it.
    // A real mouse drag, with both blocks on screen (a drag that scrolls could start over another block).
    const source = page.locator('li[data-block-type="divider"] .handle');
    const target = page.locator('li[data-block-type="savedSearch"] .block-bar');
    await page.setViewportSize({ width: 1280, height: 1600 });
    await source.scrollIntoViewIfNeeded();
    const from = (await source.boundingBox())!;
    const to = (await target.boundingBox())!;
    assert.ok(to.y >= 0, JSON.stringify({ from, to }));
    await page.mouse.move(from.x + from.width / 2, from.y + from.height / 2);
    await page.mouse.down();
    await page.mouse.move(to.x + to.width / 2, to.y + to.height / 2, { steps: 8 });
    await page.mouse.up();
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.waitForFunction(() => /moved/.test(document.querySelector('#board-status')?.textContent ?? ''));
    assert.equal(await page.textContent('#board-status'), 'Divider moved to position 6 of 8.');
    assert.deepEqual((await order(page)).slice(4), ['collection', 'divider', 'savedSearch', 'link']);
    // Keyboard: the buttons keep the focus on the block as it moves.
    await page.focus('button[aria-label="Move Divider up"]');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#board-status >> text=Divider moved to position 5 of 8.');
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('aria-label')), 'Move Divider up');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#board-status >> text=Divider moved to position 4 of 8.');
    await page.focus('button[aria-label="Move Link: Visit the campaign up"]');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#board-status >> text=position 7 of 8.');
    const expected = ['heading', 'richText', 'asset', 'divider', 'gallery', 'collection', 'link', 'savedSearch'];
    assert.deepEqual(await order(page), expected);
    await page.reload();
    await page.waitForSelector('.block-list > li');
    assert.deepEqual(await order(page), expected);
    const saved = await admin<{ blocks: { type: string }[] }>('GET', `/v1/storyboards/${boardId}`);
    assert.deepEqual(
      saved.blocks.map((b) => b.type),
      expected,
    );
  });

  it('removes a block; the builder is accessible and looked at in light and dark', async () => {
    const { page } = browser;
    await page.click('button[aria-label="Remove Divider"]');
    await page.waitForSelector('#board-status >> text=Divider removed.');
    assert.equal(await page.locator('.block-list > li').count(), 7);
    await page.waitForFunction(() =>
      [...document.querySelectorAll<HTMLImageElement>('.board-page img')].every(
        (i) => i.complete && i.naturalWidth > 0,
      ),
    );
    await screenshot(page, 'boards-01-builder-light', true);
    assert.deepEqual(await axe(page), []);
    await page.click('button[aria-label="Switch to dark theme"]');
    await screenshot(page, 'boards-02-builder-dark', true);
    assert.deepEqual(await axe(page), []);
    await page.click('button[aria-label="Switch to light theme"]');
    await page.click('nav[aria-label="Main"] >> text=Story boards');
    await page.waitForSelector('#board-list a:has-text("Spring campaign")');
    await screenshot(page, 'boards-03-list');
    assert.deepEqual(await axe(page), []);
    assert.deepEqual(browser.problems, []);
  });

  it('previews the board as the editor, as a share link, and as another person', async () => {
    const { page } = browser;
    await page.goto(`${server.url}/app/boards/${boardId}`);
    await page.waitForSelector('#preview-frame h2:has-text("Spring campaign")');
    assert.equal(await page.locator('#preview-frame .board-block').count(), 7);
    await page.selectOption('#preview-as', 'link');
    await page.waitForSelector('#preview-note >> text=what the person who made it may see');
    // Vera is a Viewer: drafts are for story board managers only.
    await page.selectOption('#preview-as', 'person');
    await page.fill('#preview-username', VIEWER.username);
    await page.fill('#preview-password', ADMIN.password);
    await page.click('.board-preview button:has-text("Show")');
    await page.waitForSelector('.board-preview [role="alert"]');
    assert.equal(await page.textContent('.board-preview [role="alert"]'), 'viewer-boards cannot see this story board.');
    await admin('POST', `/v1/storyboards/${boardId}/publish`, {});
    await page.reload();
    await page.selectOption('#preview-as', 'person');
    await page.fill('#preview-username', VIEWER.username);
    await page.fill('#preview-password', ADMIN.password);
    await page.click('.board-preview button:has-text("Show")');
    // Published: Vera sees the board, without the collection (private to the admin) and the assets she may not view.
    await page.waitForSelector('#preview-frame h2:has-text("Spring campaign")');
    const types = await page.$$eval('#preview-frame .board-block', (b) =>
      b.map((e) => (e as HTMLElement).dataset.blockType),
    );
    assert.ok(!types.includes('collection'), types.join());
    assert.ok(types.includes('heading') && types.includes('richText'), types.join());
    assert.deepEqual(await axe(page), []);
  });

  it('a viewer without edit rights: refused on a draft, read-only on a published board', async () => {
    const other = await openBrowser();
    try {
      await signIn(other.page, server.url, VIEWER);
      await admin('POST', `/v1/storyboards/${boardId}/unpublish`, {});
      await other.page.goto(`${server.url}/app/boards/${boardId}`);
      await other.page.waitForSelector('#board-refused');
      await screenshot(other.page, 'boards-04-refused');
      assert.deepEqual(await axe(other.page), []);
      await admin('POST', `/v1/storyboards/${boardId}/publish`, {});
      await other.page.reload();
      await other.page.waitForSelector('#board-readonly');
      assert.equal(await other.page.locator('#block-type').count(), 0);
      assert.equal(await other.page.locator('button:has-text("Remove")').count(), 0);
      await other.page.waitForSelector('.board-render h2:has-text("Our spring story")');
      await screenshot(other.page, 'boards-05-read-only', true);
      assert.deepEqual(await axe(other.page), []);
    } finally {
      await other.close();
    }
  });

  it('shares with a password and an expiry; the link opens, themed, in a browser that never signed in', async () => {
    const { page, context } = browser;
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    await page.goto(`${server.url}/app/boards/${boardId}`);
    await page.waitForSelector('#sharing-heading');
    await page.fill('#share-password', 'open sesame');
    await page.fill('#share-expires', '2031-06-30T17:00');
    // A link takes the person's own sign-in: a wrong password of theirs is refused.
    await page.fill('#share-own-password', 'not my password');
    await page.click('#create-link');
    await page.waitForSelector('.board-sharing [role="alert"]');
    await page.fill('#share-own-password', ADMIN.password);
    await page.click('#create-link');
    await page.waitForSelector('#made-link-url');
    const url = await page.inputValue('#made-link-url');
    assert.match(url, /\/shared\/storyboards\/[\w-]+$/);
    await page.click('#copy-link');
    await page.waitForSelector('#copy-link:has-text("Copied")');
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), url);
    await page.waitForSelector('.link-table tbody tr');
    const row = await page.textContent('.link-table tbody tr');
    assert.match(row ?? '', /Yes/);
    assert.match(row ?? '', /2031/);
    assert.match(row ?? '', /Active/);
    const links = await admin<{ links: { expiresAt: string; passwordProtected: boolean }[] }>(
      'GET',
      `/v1/storyboards/${boardId}/shares`,
    );
    assert.equal(links.links[0]!.passwordProtected, true);
    assert.equal(new Date(links.links[0]!.expiresAt).getFullYear(), 2031);
    await screenshot(page, 'boards-06-sharing', true);
    assert.deepEqual(await axe(page), []);

    const outsider = await openBrowser();
    try {
      const p = outsider.page;
      const first = await p.goto(url);
      assert.equal(first?.status(), 401);
      await p.waitForSelector('#password');
      await screenshot(p, 'boards-07-share-password');
      assert.deepEqual(await axe(p), []);
      await p.fill('#password', 'wrong guess');
      await p.click('#unlock');
      await p.waitForSelector('[role="alert"] >> text=Wrong password');
      assert.equal(await p.locator('h2, h3').count(), 0, 'nothing of the board shown');
      await p.fill('#password', 'open sesame');
      await p.click('#unlock');
      await p.waitForSelector('header h1:has-text("Spring campaign")');
      const headings = await p.$$eval('main h2, main h3, main h4', (h) => h.map((e) => e.textContent));
      assert.ok(headings.includes('Our spring story'), headings.join());
      await p.waitForSelector('main a:has-text("Visit the campaign")');
      await p.waitForFunction(() =>
        [...document.querySelectorAll<HTMLImageElement>('main img')].every((i) => i.complete && i.naturalWidth > 0),
      );
      assert.ok((await p.locator('main img').count()) >= 3);
      await screenshot(p, 'boards-08-share-light', true);
      assert.deepEqual(await axe(p), []);
      await p.emulateMedia({ colorScheme: 'dark' });
      assert.equal(await p.evaluate(() => getComputedStyle(document.body).backgroundColor), 'rgb(17, 20, 24)');
      await screenshot(p, 'boards-09-share-dark', true);
      assert.deepEqual(await axe(p), []);

      // Revoked in the builder: the page says the link does not work.
      await page.click('.link-table button[aria-label^="Revoke the link"]');
      await page.waitForSelector('.link-table >> text=Revoked');
      const gone = await p.reload();
      assert.equal(gone?.status(), 404);
      await p.waitForSelector('h1:has-text("This link does not work")');
      await screenshot(p, 'boards-10-share-gone');
      assert.deepEqual(await axe(p), []);
      assert.deepEqual(outsider.problems, []);
    } finally {
      await outsider.close();
    }
  });
});
