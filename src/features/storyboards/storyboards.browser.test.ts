import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, it } from 'node:test';
import { chromium, type Page } from 'playwright-core';
import { forEachEngine, json } from '../../../test/helpers/context.ts';
import { createTestOrg } from '../../../test/helpers/factories.ts';
import { freePort } from '../../../test/helpers/net.ts';
import { uploadAsset } from '../../../test/helpers/assets.ts';
import { boardWithAssets } from '../../../test/helpers/storyboards.ts';

const CHROMIUM = '/usr/bin/chromium';
const skip = existsSync(CHROMIUM)
  ? false
  : `Chromium is not installed at ${CHROMIUM} (apt-get install chromium): the share page is not checked in a browser here`;
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const PORT = await freePort();
const ORIGIN = `http://127.0.0.1:${PORT}`;

/** Where the screenshots go (kept after the run so a person can look at them). */
export const SCREENSHOT_DIR = process.env.TESSERA_SCREENSHOT_DIR ?? join(tmpdir(), 'tessera-screenshots');

async function layoutFacts(page: Page) {
  return page.evaluate(() => {
    // Runs in the page; the project's TypeScript has no DOM types.
    const w = globalThis as any;
    const d = w.document;
    const images = [...d.querySelectorAll('img')].map((img: any) => ({
      src: img.currentSrc as string,
      loaded: img.complete && img.naturalWidth > 0,
      width: img.getBoundingClientRect().width as number,
    }));
    return {
      scrollWidth: d.documentElement.scrollWidth as number,
      innerWidth: w.innerWidth as number,
      title: d.title as string,
      headings: [...d.querySelectorAll('h1,h2,h3,h4')].map((h: any) => h.textContent as string),
      scripts: d.querySelectorAll('script').length as number,
      images,
    };
  });
}

forEachEngine(
  'story boards: share page in a real browser',
  (ctx) => {
    before(async () => {
      await ctx().app.listen({ port: PORT, host: '127.0.0.1' });
    });

    it('renders the shared story board, readable and without horizontal scrolling on a phone and on a desktop', {
      skip,
    }, async () => {
      const org = await createTestOrg(ctx());
      const { board, assetCount } = await boardWithAssets(ctx(), org);
      const link = json(
        await ctx().inject({
          method: 'POST',
          url: `/v1/storyboards/${board.id}/links`,
          headers: org.admin.headers,
          payload: { password: 'let me in' },
        }),
      );
      const profile = mkdtempSync(join(tmpdir(), 'tessera-chromium-'));
      const browser = await chromium.launchPersistentContext(profile, {
        executablePath: CHROMIUM,
        headless: true,
        args: ARGS,
      });
      const violations: string[] = [];
      const failed: string[] = [];
      try {
        const page = await browser.newPage();
        page.on('console', (m) => {
          if (/Content Security Policy|Refused/i.test(m.text())) violations.push(m.text());
        });
        // Loads cut short by our own navigation (ERR_ABORTED) are not failures of the page.
        page.on('requestfailed', (r) => {
          if (!/ERR_ABORTED/.test(r.failure()?.errorText ?? '')) failed.push(`${r.failure()?.errorText} ${r.url()}`);
        });
        page.on('response', (r) => {
          if (r.status() >= 400 && !r.url().endsWith(link.token) && !r.url().endsWith('/unlock'))
            failed.push(`${r.status()} ${r.url()}`);
        });

        // Phone first: the password form, then the page.
        await page.setViewportSize({ width: 375, height: 812 });
        const first = await page.goto(link.url);
        assert.equal(first?.status(), 401);
        assert.equal(await page.title(), 'Password required');
        await page.fill('#password', 'wrong');
        await Promise.all([page.waitForLoadState('load'), page.click('#unlock')]);
        assert.match((await page.textContent('.error')) ?? '', /Wrong password/);
        await page.fill('#password', 'let me in');
        await Promise.all([page.waitForURL(link.url), page.click('#unlock')]);
        await page.waitForLoadState('networkidle');
        const phone = await layoutFacts(page);
        assert.equal(phone.title, board.title);
        assert.ok(
          phone.scrollWidth <= phone.innerWidth,
          `no horizontal scrolling on a phone (${phone.scrollWidth} > ${phone.innerWidth})`,
        );
        assert.equal(phone.scripts, 0);
        assert.ok(phone.headings.includes(board.title));
        assert.ok(phone.headings.includes('The collection'), JSON.stringify(phone.headings));
        assert.equal(phone.images.length, assetCount, JSON.stringify(phone.images));
        for (const img of phone.images) {
          assert.ok(img.loaded, `image loaded: ${img.src}`);
          assert.ok(img.width <= phone.innerWidth);
          assert.ok(img.src.startsWith(`${ORIGIN}/shared/storyboards/${link.token}/assets/`), img.src);
        }
        const shot = join(SCREENSHOT_DIR, `storyboard-share-${ctx().engine}-phone.png`);
        await page.screenshot({ path: shot, fullPage: true });
        assert.ok(existsSync(shot));

        await page.setViewportSize({ width: 1280, height: 900 });
        await page.reload();
        await page.waitForLoadState('networkidle');
        const desktop = await layoutFacts(page);
        assert.ok(desktop.scrollWidth <= desktop.innerWidth);
        await page.screenshot({
          path: join(SCREENSHOT_DIR, `storyboard-share-${ctx().engine}-desktop.png`),
          fullPage: true,
        });

        // The JSON form of the same view, in the same browser session (cookie from the unlock).
        const viewResponse = await page.goto(`${link.url}/view`);
        assert.equal(viewResponse?.status(), 200);
        const view = JSON.parse((await page.textContent('body')) ?? '{}');
        assert.equal(view.id, board.id);
        assert.equal(violations.length, 0, violations.join('\n'));
        assert.deepEqual(failed, []);
      } finally {
        await browser.close();
        rmSync(profile, { recursive: true, force: true });
      }
    });

    it('fills an adaptive template in the browser: preview renders, save makes a derivative asset', {
      skip,
    }, async () => {
      const org = await createTestOrg(ctx());
      const svg =
        '<svg xmlns="http://www.w3.org/2000/svg" width="600" height="300"><rect width="600" height="300" fill="{{background|#264653}}"/>' +
        '<text x="30" y="160" font-family="sans-serif" font-size="48" fill="#fff">{{headline|Spring sale}}</text></svg>';
      const { objectId } = await uploadAsset(ctx(), org, Buffer.from(svg), 'banner.svg');
      const registered = await ctx().inject({
        method: 'POST',
        url: '/v1/adaptive-templates',
        headers: org.admin.headers,
        payload: { assetId: objectId },
      });
      assert.equal(registered.statusCode, 201, registered.body);
      const launch = json(
        await ctx().inject({
          method: 'POST',
          url: '/v1/template/launch',
          headers: org.admin.headers,
          payload: { templateId: json(registered).templateId },
        }),
      );
      const profile = mkdtempSync(join(tmpdir(), 'tessera-chromium-'));
      const browser = await chromium.launchPersistentContext(profile, {
        executablePath: CHROMIUM,
        headless: true,
        args: ARGS,
      });
      const violations: string[] = [];
      try {
        const page = await browser.newPage();
        page.on('console', (m) => {
          if (/Content Security Policy|Refused/i.test(m.text())) violations.push(m.text());
        });
        await page.setViewportSize({ width: 390, height: 844 });
        assert.equal((await page.goto(launch.url))?.status(), 200);
        await page.fill('#f_headline', 'Hello from Chromium');
        await page.fill('#f_background', '#e76f51');
        await Promise.all([page.waitForURL(/f_headline=Hello/), page.click('#preview')]);
        await page.waitForLoadState('networkidle');
        const preview = await page.evaluate(() => {
          const img = (globalThis as any).document.querySelector('#result');
          return {
            loaded: img.complete && img.naturalWidth > 0,
            width: img.naturalWidth as number,
            src: img.currentSrc as string,
          };
        });
        assert.ok(preview.loaded, JSON.stringify(preview));
        assert.equal(preview.width, 600);
        await page.screenshot({
          path: join(SCREENSHOT_DIR, `adaptive-template-${ctx().engine}-phone.png`),
          fullPage: true,
        });
        await Promise.all([page.waitForLoadState('load'), page.click('#save')]);
        const saved = (await page.textContent('#saved')) ?? '';
        const assetId = /([0-9a-f-]{36})/.exec(saved)?.[1];
        assert.ok(assetId, saved);
        const asset = json(
          await ctx().inject({ method: 'GET', url: `/v1/asset/${assetId}`, headers: org.admin.headers }),
        );
        assert.match(asset.filename, /^banner-.*\.png$/);
        const links = await ctx()
          .deps.db.selectFrom('asset_links')
          .select(['primary_id', 'link_type'])
          .where('secondary_id', '=', assetId!)
          .execute();
        assert.deepEqual(links, [{ primary_id: objectId, link_type: 'derivative' }]);
        assert.equal(violations.length, 0, violations.join('\n'));
      } finally {
        await browser.close();
        rmSync(profile, { recursive: true, force: true });
      }
    });
  },
  { env: { TESSERA_PUBLIC_URL: ORIGIN } },
);
