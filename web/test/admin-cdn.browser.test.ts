import assert from 'node:assert/strict';
import sharp from 'sharp';
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  apiAs,
  axe,
  type Browser,
  type Call,
  createViewer,
  openBrowser,
  ROOT,
  type RunningServer,
  screenshot,
  signIn,
  skip,
  startServer,
  uploadAsset,
} from './harness.ts';

const VIEWER = { username: 'viewer-cdn', password: 'Viewer-cdn-pass-1' };
const ZONE = 'web-test-zone';

/** A tiny web origin: every path answers a short text with a cache tag, and counts what it served. */
async function origin(): Promise<{ server: Server; url: string; served: string[] }> {
  const served: string[] = [];
  const server = createServer((req, res) => {
    served.push(req.url ?? '');
    res
      .writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'public, max-age=600', 'cdn-tag': 'docs' })
      .end(`hello from ${req.url}\n`.repeat(40));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, served };
}

/** A real `tessera edge` process on the server's database, ready when it says so (bounded). */
async function startEdge(dataDir: string): Promise<{ url: string; child: ChildProcess }> {
  const port = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
  const child = spawn(process.execPath, [join(ROOT, 'src', 'main.ts'), 'edge'], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    env: {
      ...process.env,
      TESSERA_DATA_DIR: dataDir,
      DATABASE_URL: '',
      TESSERA_LOG_LEVEL: 'error',
      TESSERA_ALLOW_PRIVATE_TARGETS: 'true',
      EDGE_PORT: String(port),
      EDGE_HOST: '127.0.0.1',
      EDGE_CACHE_DIR: join(dataDir, 'edge-cache'),
      EDGE_HEARTBEAT_MS: '500',
    },
  });
  let stderr = '';
  child.stderr!.on('data', (d) => {
    stderr += d;
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the edge did not start: ${stderr}`));
    }, 60_000);
    child.on('message', (m: { type?: string }) => {
      if (m.type === 'edge-ready') {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the edge exited ${code}: ${stderr}`));
    });
  });
  return { url: `http://127.0.0.1:${port}`, child };
}

/** Polls `check` until it returns something, for at most 30 s. */
async function until<T>(check: () => Promise<T | null>): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const value = await check();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error('the condition was not met within 30 s');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function stopEdge(edge: { child: ChildProcess } | undefined): Promise<void> {
  if (!edge || edge.child.exitCode !== null || edge.child.signalCode !== null) return;
  const exited = new Promise((resolve) => edge.child.once('exit', resolve));
  edge.child.kill('SIGTERM');
  const kill = setTimeout(() => edge.child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(kill);
}

describe('administration: CDN (pull zones, purge, signed URLs, statistics) in a real browser', { skip }, () => {
  let server: RunningServer;
  let browser: Browser;
  let admin: Call;
  let web: Awaited<ReturnType<typeof origin>>;
  let edge: Awaited<ReturnType<typeof startEdge>> | undefined;
  let zoneId = 0;
  before(async () => {
    [server, web] = await Promise.all([startServer({ TESSERA_ALLOW_PRIVATE_TARGETS: 'true' }), origin()]);
    admin = await apiAs(server.url);
    await createViewer(admin, VIEWER, 'Vic');
    browser = await openBrowser();
    await signIn(browser.page, server.url);
  });
  after(async () => {
    await browser?.close();
    await stopEdge(edge);
    await server?.stop();
    web?.server.close();
  });

  it('opens the CDN section as its own chunk and creates a zone, refusing a bad name on its field', async () => {
    const { page } = browser;
    const scripts: string[] = [];
    page.on('request', (r) => r.resourceType() === 'script' && scripts.push(r.url()));
    await page.click('nav[aria-label="Main"] >> text=Administration');
    await page.click('nav[aria-label="Administration sections"] >> text=CDN');
    await page.waitForSelector('#zone-new');
    await page.waitForSelector('text=No pull zones yet.');
    assert.ok(
      scripts.some((s) => /\/assets\/cdn-[\w-]+\.js$/.test(s)),
      `the section is a lazy chunk: ${scripts.join(', ')}`,
    );
    assert.deepEqual(await axe(page), []);
    // A name the API refuses comes back on the name field.
    await page.fill('#zone-new-name', 'a b');
    await page.click('#zone-create');
    await page.waitForSelector('#zone-new-name[aria-invalid="true"]');
    assert.ok(((await page.textContent('#zone-new-name-error')) ?? '').length > 0);
    await page.fill('#zone-new-name', ZONE);
    await page.selectOption('#zone-new-originType', 'url');
    await page.fill('#zone-new-originUrl', web.url);
    await page.click('#zone-create');
    await page.waitForSelector(`h1 >> text=Pull zone ${ZONE}`);
    zoneId = Number(new URL(page.url()).pathname.split('/').pop());
    assert.ok(zoneId > 0);
    const zone = await admin('GET', `/v1/cdn/pullzones/${zoneId}`);
    assert.equal(zone.originType, 'url');
    assert.equal(zone.originUrl, web.url);
  });

  it('edits settings of every kind, showing the API’s refusal on the field it names', async () => {
    const { page } = browser;
    // A rate that is not a number and a referrer that is not a host are refused on their fields.
    await page.fill('#zone-requestLimit', 'lots');
    await page.click('#zone-save');
    await page.waitForSelector('#zone-requestLimit[aria-invalid="true"]');
    await page.fill('#zone-requestLimit', '50');
    await page.fill('#zone-allowedReferrers', 'example.com\nnot a host!');
    await page.click('#zone-save');
    await page.waitForSelector('#zone-allowedReferrers[aria-invalid="true"]');
    assert.match((await page.textContent('#zone-allowedReferrers-error')) ?? '', /not a host/);
    await page.fill('#zone-allowedReferrers', 'example.com\n*.example.org');
    await page.fill('#zone-cacheControlMaxAgeOverride', '600');
    await page.fill('#zone-hostnames', 'cdn.web-test.example');
    await page.check('#zone-enableWebpVary');
    await page.uncheck('#zone-useStaleWhileOffline');
    await page.fill('#zone-blockedCountries', 'KP');
    await page.selectOption('#zone-region', 'sg');
    await page.click('#zone-save');
    await page.waitForSelector(`#zone-notice >> text=Pull zone "${ZONE}" saved`);
    const zone = await admin('GET', `/v1/cdn/pullzones/${zoneId}`);
    assert.equal(zone.requestLimit, 50);
    assert.deepEqual(zone.allowedReferrers, ['example.com', '*.example.org']);
    assert.equal(zone.cacheControlMaxAgeOverride, 600);
    assert.deepEqual(zone.hostnames, ['cdn.web-test.example']);
    assert.equal(zone.enableWebpVary, true);
    assert.equal(zone.useStaleWhileOffline, false);
    assert.deepEqual(zone.blockedCountries, ['KP']);
    assert.equal(zone.region, 'sg');
    // Emptying the edge TTL sends null (follow the origin); a rate limit would get in the way below.
    await page.fill('#zone-cacheControlMaxAgeOverride', '');
    await page.fill('#zone-requestLimit', '0');
    await page.click('#zone-save');
    const again = await until(async () => {
      const z = await admin('GET', `/v1/cdn/pullzones/${zoneId}`);
      return z.requestLimit === 0 ? z : null;
    });
    assert.equal(again.cacheControlMaxAgeOverride, null);
    assert.deepEqual(await axe(page), []);
  });

  it('purges by URL and by tag on a live edge, and signs a URL with a copy button', async () => {
    const { page } = browser;
    edge = await startEdge(server.dataDir);
    // Cheap traffic through the edge: a miss, then hits.
    for (const path of ['/a.txt', '/a.txt', '/a.txt', '/b.txt']) {
      const res: Response = await fetch(`${edge.url}/${ZONE}${path}`);
      const text = await res.text();
      assert.equal(res.status, 200, `${path}: ${text}`);
    }
    assert.deepEqual(web.served.sort(), ['/a.txt', '/b.txt']);
    await page.fill('#purge-value', '/a.txt');
    await page.click('#purge-run');
    await page.waitForSelector('#purge-result >> text=Purged url');
    assert.match((await page.textContent('#purge-result')) ?? '', /applied on 1 edge\(s\); 0 did not answer/);
    await page.check('#purge-tag');
    await page.fill('#purge-value', 'docs');
    await page.click('#purge-run');
    await page.waitForSelector('#purge-result >> text=Purged tag docs');
    // Both objects went: the next requests go to the origin again.
    await (await fetch(`${edge.url}/${ZONE}/b.txt`)).arrayBuffer();
    assert.equal(web.served.filter((p) => p === '/b.txt').length, 2);
    // Signed URL.
    await page.fill('#sign-path', '/a.txt');
    await page.fill('#sign-expires', '600');
    await page.click('#sign-run');
    await page.waitForSelector('#signed-url');
    const signed = await page.inputValue('#signed-url');
    assert.match(signed, /\/a\.txt\?token=[\w-]+&expires=\d+$/);
    await page.click('#sign-form button:has-text("Copy")');
    await page.waitForSelector('#sign-form >> text=Copied.');
    await screenshot(page, 'admin-cdn-01-zone', true);
    assert.deepEqual(await axe(page), []);
  });

  it('shows the statistics of the requests the edge served as charts with tables', async () => {
    const { page } = browser;
    await page.waitForFunction(
      () => {
        const total = document.querySelector('#total-requests')?.textContent ?? '0';
        if (total === '0') document.querySelector<HTMLButtonElement>('#stats-refresh:not([disabled])')?.click();
        return total !== '0';
      },
      undefined,
      { timeout: 30_000, polling: 500 },
    );
    // Every request the edge served so far: 4 before the purges and 1 after.
    assert.equal(await page.textContent('#total-requests'), '5');
    const bars = await page.$$eval('#chart-requests rect.bar', (rects) =>
      rects.map((r) => Number(r.getAttribute('height'))),
    );
    // One bar per clock hour the last 24 hours touch (24, or 25 when they start inside an hour).
    assert.ok(bars.length === 24 || bars.length === 25, `${bars.length} bars`);
    assert.ok(
      bars.some((h) => h > 0),
      'the current hour has a bar',
    );
    assert.match((await page.getAttribute('#chart-requests svg', 'aria-label')) ?? '', /5 in all/);
    await page.click('#chart-requests summary');
    assert.match((await page.textContent('#chart-requests-table')) ?? '', /5/);
    await page.waitForSelector('#chart-countries >> text=ZZ');
    assert.match((await page.textContent('#chart-hitrate figcaption')) ?? '', /%/);
    await page.selectOption('#stats-period', '7d');
    await page.waitForFunction(() => document.querySelectorAll('#chart-requests rect.bar').length >= 7);
    await page.waitForSelector('#stats-range >> text=by day');
    await page.selectOption('#stats-period', '90d');
    await page.waitForFunction(() => document.querySelectorAll('#chart-requests rect.bar').length >= 90);
    assert.equal(await page.textContent('#total-requests'), '5');
    assert.deepEqual(await axe(page), []);
  });

  it('shows the statistics between two chosen days, refusing a start after the end on its field', async () => {
    const { page } = browser;
    const day = (daysAgo: number) => {
      const d = new Date(Date.now() - daysAgo * 86_400_000);
      return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
    };
    // Yesterday and today: two days, by hour, with every request so far.
    await page.fill('#stats-from', day(1));
    await page.fill('#stats-to', day(0));
    assert.equal(await page.inputValue('#stats-period'), 'custom');
    await page.click('#stats-refresh');
    await page.waitForSelector('#stats-range >> text=by hour');
    await page.waitForFunction(() => document.querySelectorAll('#chart-requests rect.bar').length >= 24);
    assert.equal(await page.textContent('#total-requests'), '5');
    // A start after the end: the API's refusal, on the From field.
    await page.fill('#stats-from', day(0));
    await page.fill('#stats-to', day(1));
    await page.click('#stats-refresh');
    await page.waitForSelector('#stats-from[aria-invalid="true"]');
    assert.match((await page.textContent('#stats-from-error')) ?? '', /after/);
    // The last 30 days up to today: by day, one bar a day.
    await page.fill('#stats-from', day(30));
    await page.fill('#stats-to', day(0));
    await page.click('#stats-refresh');
    await page.waitForSelector('#stats-range >> text=by day');
    await page.waitForSelector('#stats-from:not([aria-invalid])');
    const bars = await page.$$eval('#chart-requests rect.bar', (rects) => rects.length);
    assert.ok(bars === 31 || bars === 32, `${bars} bars`);
    assert.equal(await page.textContent('#total-requests'), '5');
    await screenshot(page, 'admin-cdn-02-statistics', true);
    assert.deepEqual(await axe(page), []);
  });

  it('publishes an asset from its page and a selection from the library, shows the CDN address, and unpublishes', async () => {
    const { page } = browser;
    const zoneName = `library-${Date.now().toString(36)}`;
    const libraryZone = await admin<{ id: number }>('POST', '/v1/cdn/configure', {
      name: zoneName,
      region: 'de',
      url: `https://${zoneName}.cdn.example.com`,
    });
    const security = await admin<{ templateId: string }[]>('GET', '/v1/security/template');
    const templates = await admin<{ template: { templateId: string } }[]>('GET', '/v1/metadata/template');
    const common = {
      metadataTemplateId: templates[0]!.template.templateId,
      securityTemplateIds: [security[0]!.templateId],
    };
    const bytes = await sharp({ create: { width: 120, height: 80, channels: 3, background: '#3bb273' } })
      .jpeg()
      .toBuffer();
    const one = await uploadAsset(admin, 'hero.jpg', bytes, common);
    const two = await uploadAsset(admin, 'second.jpg', bytes, common);

    // From the asset page.
    await page.goto(`${server.url}/app/asset/${one.objectId}`);
    await page.click('#cdn-publish');
    await page.selectOption('#cdn-publish-zone', { label: zoneName });
    await page.click('#cdn-publish-run');
    await page.waitForSelector('#cdn-publish-result');
    const address = await page.inputValue('#cdn-publish-url');
    assert.match(address, new RegExp(`${one.objectId}/hero\\.jpg$`));
    await screenshot(page, 'admin-cdn-04-publish-from-asset');
    assert.deepEqual(await axe(page), []);
    // Served by the live edge under the zone's path, byte for byte.
    const served = await until(async () => {
      const res = await fetch(`${edge!.url}/${zoneName}/${one.objectId}/hero.jpg`);
      return res.status === 200 ? Buffer.from(await res.arrayBuffer()) : null;
    });
    assert.ok(served.equals(bytes));
    await page.click('#cdn-publish-unpublish');
    await page.waitForSelector('#cdn-publish-result >> text=Unpublished');
    await until(async () =>
      (await fetch(`${edge!.url}/${zoneName}/${one.objectId}/hero.jpg`)).status === 404 ? true : null,
    );

    // A selection from the library.
    await page.goto(`${server.url}/app/`);
    await page.waitForSelector('.tile[data-asset-id]');
    await page.click(`.tile[data-asset-id="${one.objectId}"]`);
    await page.click(`.tile[data-asset-id="${two.objectId}"]`, { modifiers: ['Control'] });
    await page.waitForSelector('.selectionbar:has-text("2 selected")');
    await page.click('#cdn-publish-selection');
    await page.selectOption('#cdn-selection-zone', { label: zoneName });
    await page.click('#cdn-selection-run');
    await page.waitForSelector('#cdn-selection-result');
    const list = (await page.inputValue('#cdn-selection-url')).split('\n');
    assert.equal(list.length, 2);
    await screenshot(page, 'admin-cdn-05-publish-selection');
    assert.deepEqual(await axe(page), []);
    await until(async () => ((await fetch(`${edge!.url}/${zoneName}/${two.objectId}`)).status === 200 ? true : null));
    await page.click('#cdn-selection-close');
    await page.keyboard.press('Escape');
    await admin('DELETE', `/v1/cdn/pullzones/${libraryZone.id}`);
    // Back to the zone's page, where the next tests continue.
    await page.goto(`${server.url}/app/admin/cdn/${zoneId}`);
    await page.waitForSelector('#zone-form');
  });

  it('fits a phone and the dark theme', async () => {
    const { page } = browser;
    await page.click('button[aria-label^="Switch to dark"]');
    await page.setViewportSize({ width: 390, height: 800 });
    await page.waitForSelector('#zone-form');
    await screenshot(page, 'admin-cdn-03-phone-dark', true);
    assert.deepEqual(await axe(page), []);
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.click('button[aria-label^="Switch to light"]');
  });

  it('deletes the zone after asking once more', async () => {
    const { page } = browser;
    await page.click('#zone-delete');
    await page.click('#zone-delete-yes');
    await page.waitForURL((u) => u.pathname === '/app/admin/cdn');
    await page.waitForSelector(`text=Pull zone "${ZONE}" deleted`);
    await page.waitForSelector('text=No pull zones yet.');
    assert.deepEqual((await admin('GET', '/v1/cdn/pullzones')).items, []);
    assert.deepEqual(browser.problems, []);
  });

  it('shows a caller without CDN Management what they may not do, before any click', async () => {
    const viewer = await openBrowser({ width: 390, height: 800 });
    try {
      await signIn(viewer.page, server.url, VIEWER);
      await viewer.page.goto(`${server.url}/app/admin/cdn`);
      await viewer.page.waitForSelector('text=You may not manage the CDN');
      assert.match((await viewer.page.textContent('.ceiling')) ?? '', /CDN Management privilege/);
      assert.equal(await viewer.page.$('#zone-new'), null);
      await screenshot(viewer.page, 'admin-cdn-04-refused');
      assert.deepEqual(await axe(viewer.page), []);
      const asViewer = await apiAs(server.url, VIEWER);
      await asViewer('GET', '/v1/cdn/pullzones', undefined, 403);
      assert.deepEqual(viewer.problems, []);
    } finally {
      await viewer.close();
    }
  });
});
