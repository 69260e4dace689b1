import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  apiAs,
  openBrowser,
  screenshot,
  signIn,
  skip,
  startServer,
  type Browser,
  type RunningServer,
} from './harness.ts';

const PART = 5 * 1024 * 1024;

describe('web app: a multipart upload survives a reload and a lost connection', { skip }, () => {
  let server: RunningServer;
  let browser: Browser;
  let dir: string;
  before(async () => {
    // The smallest part size the server takes, so a 23 MB file is five parts.
    server = await startServer({ TESSERA_UPLOAD_PART_SIZE: String(PART) });
    browser = await openBrowser();
    dir = mkdtempSync(join(tmpdir(), 'tessera-web-resume-'));
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('keeps the queue in IndexedDB: after a reload mid-way the stored parts are not sent again and the file arrives byte for byte', async () => {
    const { page } = browser;
    const bytes = randomBytes(4 * PART + 1234567);
    const file = join(dir, 'master-cut.bin');
    writeFileSync(file, bytes);
    await signIn(page, server.url);

    // The connection drops at part 3: parts 1 and 2 are stored, part 3 keeps failing.
    const sent: string[] = [];
    page.on('request', (request) => {
      const part = /\/parts\/(\d+)\?/.exec(request.url());
      if (part && request.method() === 'PUT') sent.push(part[1]!);
    });
    const dropPart3 = (route: { abort(): Promise<void> }) => route.abort();
    await page.route(/\/parts\/3\?/, dropPart3);
    await page.click('#upload-button');
    await page.setInputFiles('#file-input', file);
    await page.waitForSelector('.queue-item[data-state="waiting"]', { timeout: 60_000 });
    const stored = await page.evaluate(
      () =>
        new Promise<{ parts: number; objectId: string }>((resolve) => {
          const open = indexedDB.open('tessera-uploads');
          open.onsuccess = () => {
            const all = open.result.transaction('queue').objectStore('queue').getAll();
            all.onsuccess = () =>
              resolve({ parts: (all.result[0]?.multipart?.etags ?? []).length, objectId: all.result[0]?.objectId });
          };
        }),
    );
    assert.equal(stored.parts, 2, 'the ETags of parts 1 and 2 are kept in IndexedDB');
    await screenshot(page, 'resume-01-waiting');

    // A reload: the page forgets everything but IndexedDB (and the refresh token).
    sent.length = 0;
    await page.reload();
    await page.waitForSelector('.queue-item', { timeout: 30_000 });
    assert.equal(await page.locator('.queue-item .qname').textContent(), 'master-cut.bin');
    // The connection is back.
    await page.unroute(/\/parts\/3\?/, dropPart3);
    await page.waitForSelector('.queue-item[data-state="done"]', { timeout: 120_000 });
    await screenshot(page, 'resume-02-done');
    assert.deepEqual([...new Set(sent)].sort(), ['3', '4', '5'], 'parts 1 and 2 were not sent again');
    const left = await page.evaluate(
      () =>
        new Promise<number>((resolve) => {
          const open = indexedDB.open('tessera-uploads');
          open.onsuccess = () => {
            const all = open.result.transaction('queue').objectStore('queue').count();
            all.onsuccess = () => resolve(all.result);
          };
        }),
    );
    assert.equal(left, 0, 'a finished upload leaves IndexedDB');

    // The stored original is the file, byte for byte.
    const call = await apiAs(server.url);
    const link = await call<{ presignedURL: string }>('GET', `/v1/asset/${stored.objectId}/content`);
    const download = Buffer.from(await (await fetch(new URL(link.presignedURL, server.url))).arrayBuffer());
    assert.equal(download.length, bytes.length);
    assert.ok(download.equals(bytes), 'byte-identical content');
    assert.deepEqual(browser.problems, []);
  });

  it('waits while the browser is offline and resumes when it is back, without sending stored parts again', async () => {
    const { page, context } = browser;
    const bytes = randomBytes(3 * PART + 4321);
    const file = join(dir, 'offline-cut.bin');
    writeFileSync(file, bytes);
    await page.goto(`${server.url}/app/`);
    await page.waitForSelector('#user-menu');
    const sent: string[] = [];
    const onRequest = (request: { url(): string; method(): string }) => {
      const part = /\/parts\/(\d+)\?/.exec(request.url());
      if (part && request.method() === 'PUT') sent.push(part[1]!);
    };
    page.on('request', onRequest);
    // The network goes away as soon as part 2 starts: part 1 is stored, part 2 fails.
    let cut = false;
    let stored = '';
    const cutAtPart2 = async (route: { continue(): Promise<void>; abort(): Promise<void> }) => {
      if (!cut) {
        cut = true;
        await context.setOffline(true);
      }
      await route.abort();
    };
    await page.route(/\/parts\/2\?/, cutAtPart2);
    try {
      await page.click('#upload-button');
      await page.setInputFiles('#file-input', file);
      await page.waitForSelector('.queue-item[data-state="waiting"]', { timeout: 60_000 });
      assert.equal(await page.evaluate(() => navigator.onLine), false);
      stored = await page.evaluate(
        () =>
          new Promise<string>((resolve) => {
            const open = indexedDB.open('tessera-uploads');
            open.onsuccess = () => {
              const all = open.result.transaction('queue').objectStore('queue').getAll();
              all.onsuccess = () => resolve(all.result[0]?.objectId);
            };
          }),
      );
      await screenshot(page, 'resume-03-offline-waiting');
      // Offline for a while: nothing is sent, the item keeps waiting (no failure, no lost progress).
      const before = sent.length;
      await page.waitForTimeout(1500);
      assert.equal(sent.length, before, 'nothing is sent while offline');
      assert.equal(await page.locator('.queue-item[data-state="failed"]').count(), 0);
      await page.unroute(/\/parts\/2\?/, cutAtPart2);
      sent.length = 0;
      // Back online: the 'online' event resumes the queue at once.
      await context.setOffline(false);
      await page.waitForSelector('.queue-item[data-state="done"]', { timeout: 120_000 });
    } finally {
      page.off('request', onRequest);
      await context.setOffline(false);
    }
    assert.deepEqual([...new Set(sent)].sort(), ['2', '3', '4'], 'part 1 was not sent again');
    await screenshot(page, 'resume-04-back-online-done');
    const call = await apiAs(server.url);
    const id = stored;
    assert.ok(id, 'the asset exists');
    const link = await call<{ presignedURL: string }>('GET', `/v1/asset/${id}/content`);
    const download = Buffer.from(await (await fetch(new URL(link.presignedURL, server.url))).arrayBuffer());
    assert.ok(download.equals(bytes), 'byte-identical content');
    assert.deepEqual(browser.problems, []);
  });
});
