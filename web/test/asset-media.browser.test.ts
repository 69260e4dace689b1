import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import * as mupdf from 'mupdf';
import type { Page } from 'playwright-core';
import {
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

/** A real PDF of `pages` pages, each with its number large on it (MuPDF, as the server's tests make them). */
function makePdf(pages: number): Buffer {
  const doc = new mupdf.PDFDocument();
  const font = doc.addSimpleFont(new mupdf.Font('Helvetica'));
  const resources = doc.addObject({ Font: { F1: font } });
  for (let n = 1; n <= pages; n++) {
    const text = `BT /F1 64 Tf 72 700 Td (Page ${n}) Tj ET\nBT /F1 18 Tf 72 640 Td (Harbour report, page ${n} of ${pages}) Tj ET`;
    doc.insertPage(-1, doc.addPage([0, 0, 595, 842], 0, resources, text));
  }
  return Buffer.from(doc.saveToBuffer('').asUint8Array());
}

/** A 3-second 320×240 H.264/AAC MP4 with a tone, by the ffmpeg the server ships with. */
async function makeVideo(): Promise<Buffer> {
  const ffmpeg = (createRequire(import.meta.url)('@ffmpeg-installer/ffmpeg') as { path: string }).path;
  const dir = await mkdtemp(join(tmpdir(), 'tessera-web-clip-'));
  try {
    const out = join(dir, 'clip.mp4');
    await promisify(execFile)(ffmpeg, [
      '-nostdin',
      '-v',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      'testsrc=duration=3:size=320x240:rate=25',
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=440:duration=3',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-pix_fmt',
      'yuv420p',
      '-c:a',
      'aac',
      '-movflags',
      '+faststart',
      '-shortest',
      out,
    ]);
    return await readFile(out);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A real 3-second AAC (M4A) tone made by the ffmpeg binary the server itself uses. */
async function makeAudio(): Promise<Buffer> {
  const ffmpeg = (createRequire(import.meta.url)('@ffmpeg-installer/ffmpeg') as { path: string }).path;
  const dir = await mkdtemp(join(tmpdir(), 'tessera-web-audio-'));
  try {
    const out = join(dir, 'tone.m4a');
    await promisify(execFile)(ffmpeg, [
      '-nostdin',
      '-v',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=330:duration=3',
      '-c:a',
      'aac',
      '-movflags',
      '+faststart',
      out,
    ]);
    return await readFile(out);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Waits until the page image shows page `n` and has loaded (naturalWidth > 0). */
async function pageShown(page: Page, n: number, count: number): Promise<string> {
  const img = page.locator('.page-box img.page-image');
  await page.waitForFunction(
    ({ n, count }) => {
      const el = document.querySelector<HTMLImageElement>('.page-box img.page-image');
      return Boolean(el?.alt.startsWith(`Page ${n} of ${count}`) && el.complete && el.naturalWidth > 0);
    },
    { n, count },
    { timeout: 60_000 },
  );
  assert.equal(await page.inputValue('#page-number'), String(n));
  assert.equal(await page.locator('.pdf-viewer [aria-live="polite"]').textContent(), `Page ${n} of ${count}`);
  return (await img.getAttribute('src'))!;
}

/** The asset page's media: the PDF page viewer, and the player playing a real video. */
describe('web app: the asset page media (PDF pages, video)', { skip }, () => {
  let server: RunningServer;
  let browser: Browser;
  let call: Call;
  const ids: Record<string, string> = {};
  let commonBody: Record<string, unknown> = {};

  before(async () => {
    server = await startServer();
    call = await apiAs(server.url);
    const security = await call<{ templateId: string }[]>('GET', '/v1/security/template');
    const note = await call('POST', '/v1/metadata/attributes', { name: 'Note', type: 'text' });
    const group = await call('POST', '/v1/metadata/groups', { name: 'Basics', attributeIds: [note.id] });
    const template = await call('POST', '/v1/metadata/template', { name: 'Basics', groupIds: [group.id] });
    const common = { metadataTemplateId: template.templateId, securityTemplateIds: [security[0]!.templateId] };
    ids.report = (await uploadAsset(call, 'harbour-report.pdf', makePdf(3), common)).objectId;
    ids.clip = (await uploadAsset(call, 'testcard.mp4', await makeVideo(), common)).objectId;
    ids.tone = (await uploadAsset(call, 'tone.m4a', await makeAudio(), common)).objectId;
    commonBody = common;
    ids.broken = (
      await uploadAsset(
        call,
        'broken.pdf',
        Buffer.concat([makePdf(1).subarray(0, 40), Buffer.alloc(300, 0x41)]),
        common,
      )
    ).objectId;
    for (const id of Object.values(ids)) await renditionsSettled(call, id);
    browser = await openBrowser();
    await signIn(browser.page, server.url);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('pages through a 3-page PDF: next, previous, a typed page, the strip, the arrow keys, 100%', async () => {
    const { page } = browser;
    const pdf = await call('GET', `/v1/asset/${ids.report}`);
    assert.equal(pdf.renditionsState, 'ready');
    assert.equal(pdf.technicalMetadata.document_metadata.pageCount, 3);
    await page.goto(`${server.url}/app/asset/${ids.report}`);
    const first = await pageShown(page, 1, 3);
    assert.match(first, /\/v1\/content\/[^/]+\/page-1-large\?/, 'a signed page URL an <img> can load');
    assert.equal(await page.isDisabled('button:has-text("Previous page")'), true);
    assert.equal(await page.locator('.page-strip li').count(), 3);
    await page.waitForFunction(
      () =>
        [...document.querySelectorAll<HTMLImageElement>('.page-strip img')].filter((i) => i.naturalWidth > 0).length ===
        3,
      undefined,
      { timeout: 60_000 },
    );
    await screenshot(page, 'asset-media-01-pdf-page1');
    assert.deepEqual(await axe(page), []);

    await page.click('button:has-text("Next page")');
    const second = await pageShown(page, 2, 3);
    assert.notEqual(second, first);
    assert.match(second, /page-2-large/);
    await page.click('button:has-text("Previous page")');
    assert.equal(await pageShown(page, 1, 3), first);

    // A typed page number (Enter), labelled "Page … of 3".
    const input = page.getByLabel('Page', { exact: true });
    await input.fill('3');
    await input.press('Enter');
    const third = await pageShown(page, 3, 3);
    assert.match(third, /page-3-large/);
    assert.equal(await page.isDisabled('button:has-text("Next page")'), true);
    assert.equal(await page.getAttribute('.page-strip li:nth-child(3) button', 'aria-current'), 'page');
    await screenshot(page, 'asset-media-02-pdf-page3');

    // The thumbnail strip and the arrow keys on the page.
    await page.click('button[aria-label="Go to page 2"]');
    await pageShown(page, 2, 3);
    await page.focus('.page-box');
    await page.keyboard.press('ArrowLeft');
    await pageShown(page, 1, 3);
    await page.keyboard.press('ArrowRight');
    await pageShown(page, 2, 3);

    // 100%: the mezzanine size, larger than the box, scrolled inside it.
    await page.click('.pdf-viewer button:has-text("100%")');
    await page.waitForFunction(
      () => {
        const el = document.querySelector<HTMLImageElement>('.page-box img.page-image');
        return Boolean(el?.src.includes('page-2-mezzanine') && el.complete && el.naturalWidth > 1000);
      },
      undefined,
      { timeout: 60_000 },
    );
    assert.equal(await page.getAttribute('.pdf-viewer button:has-text("100%")', 'aria-pressed'), 'true');
    await page.click('.pdf-viewer button:has-text("Fit")');
    await pageShown(page, 2, 3);

    // The original opens (a signed link to the PDF itself).
    await page.click('.pdf-viewer button:has-text("Get a link to the original")');
    const href = await (await page.waitForSelector('.pdf-viewer a.button:has-text("Open the original")')).getAttribute(
      'href',
    );
    const original = await fetch(href!);
    assert.equal(original.status, 200);
    assert.equal((await original.arrayBuffer()).byteLength > 0, true);

    // Dark theme and a phone's width.
    await page.click('button[aria-label^="Switch to dark"]');
    await pageShown(page, 2, 3);
    await screenshot(page, 'asset-media-03-pdf-dark');
    assert.deepEqual(await axe(page), []);
    await page.setViewportSize({ width: 390, height: 800 });
    await screenshot(page, 'asset-media-04-pdf-phone', true);
    assert.deepEqual(await axe(page), []);
    await page.click('button[aria-label^="Switch to light"]');
    await page.setViewportSize({ width: 1280, height: 800 });
    assert.deepEqual(browser.problems, []);
  });

  it('says so when a PDF could not be read, instead of a broken image', async () => {
    const { page } = browser;
    await page.goto(`${server.url}/app/asset/${ids.broken}`);
    await page.waitForSelector('.pdf-viewer [role="alert"]:has-text("could not be read")');
    assert.equal(await page.locator('.pdf-viewer img').count(), 0);
    assert.equal(await page.locator('.pdf-viewer button:has-text("Get a link to the original")').count(), 1);
    await screenshot(page, 'asset-media-05-pdf-unreadable');
    assert.deepEqual(await axe(page), []);
  });

  it('plays a real video from its web version: currentTime advances, no media error', async () => {
    const { page } = browser;
    const clip = await call('GET', `/v1/asset/${ids.clip}`);
    assert.equal(clip.renditionsState, 'ready');
    assert.ok(clip.renditions.videoProxy, 'the web version was made');
    await page.goto(`${server.url}/app/asset/${ids.clip}`);
    const video = await page.waitForSelector('video.media[src]');
    assert.match((await video.getAttribute('src'))!, /\/v1\/content\/[^/]+\/videoProxy\?/);
    await page.waitForFunction(
      () => (document.querySelector('video.media') as HTMLVideoElement).readyState >= 1,
      undefined,
      { timeout: 60_000 },
    );
    // Muted (a headless browser has no sound card to wait on), then played as a user does: a click on the video.
    await page.evaluate(() => {
      (document.querySelector('video.media') as HTMLVideoElement).muted = true;
    });
    await page.click('video.media');
    await page.waitForFunction(
      () => {
        const v = document.querySelector('video.media') as HTMLVideoElement;
        return v.currentTime > 0.3 || v.error !== null;
      },
      undefined,
      { timeout: 60_000 },
    );
    const state = await page.evaluate(() => {
      const v = document.querySelector('video.media') as HTMLVideoElement;
      return { time: v.currentTime, error: v.error?.message ?? v.error?.code ?? null, width: v.videoWidth };
    });
    assert.equal(state.error, null);
    assert.ok(state.time > 0.3, `currentTime advanced (${state.time})`);
    assert.equal(state.width, 320);
    await page.evaluate(() => (document.querySelector('video.media') as HTMLVideoElement).pause());
    await screenshot(page, 'asset-media-06-video');
    assert.deepEqual(await axe(page), []);
    assert.deepEqual(browser.problems, []);
  });

  it('plays a real audio file from its web version: currentTime advances, no media error', async () => {
    const { page } = browser;
    const tone = await call('GET', `/v1/asset/${ids.tone}`);
    assert.equal(tone.renditionsState, 'ready');
    assert.ok(tone.renditions.audioProxy, 'the AAC web version was made');
    await page.goto(`${server.url}/app/asset/${ids.tone}`);
    const audio = await page.waitForSelector('audio.media[src]');
    assert.match((await audio.getAttribute('src'))!, /\/v1\/content\/[^/]+\/audioProxy\?/);
    await page.waitForFunction(
      () => (document.querySelector('audio.media') as HTMLAudioElement).readyState >= 1,
      undefined,
      { timeout: 60_000 },
    );
    const duration = await page.evaluate(() => (document.querySelector('audio.media') as HTMLAudioElement).duration);
    assert.ok(Math.abs(duration - 3) < 0.5, `the whole tone (${duration} s)`);
    await page.evaluate(() => {
      const a = document.querySelector('audio.media') as HTMLAudioElement;
      a.muted = true;
      void a.play();
    });
    await page.waitForFunction(
      () => {
        const a = document.querySelector('audio.media') as HTMLAudioElement;
        return a.currentTime > 0.3 || a.error !== null;
      },
      undefined,
      { timeout: 60_000 },
    );
    const state = await page.evaluate(() => {
      const a = document.querySelector('audio.media') as HTMLAudioElement;
      return { time: a.currentTime, error: a.error?.message ?? a.error?.code ?? null };
    });
    assert.equal(state.error, null);
    assert.ok(state.time > 0.3, `currentTime advanced (${state.time})`);
    await page.evaluate(() => (document.querySelector('audio.media') as HTMLAudioElement).pause());
    await screenshot(page, 'asset-media-07-audio');
    assert.deepEqual(await axe(page), []);
    assert.deepEqual(browser.problems, []);
  });

  it('an asset opened while it is analysed shows its pages as soon as they exist, without a reload', async () => {
    const { page } = browser;
    // The page is opened before the file's bytes arrive: nothing to show yet.
    const created = await call<{ data: { objectId: string; url: string } }>('POST', '/v1/assets/asset', {
      filename: 'arriving.pdf',
      ...commonBody,
    });
    const id = created.data.objectId;
    let navigations = 0;
    const count = (frame: { parentFrame(): unknown }) => {
      if (!frame.parentFrame()) navigations++;
    };
    await page.goto(`${server.url}/app/asset/${id}`);
    await page.waitForSelector('h1.asset-title');
    page.on('framenavigated', count);
    try {
      const put = await fetch(created.data.url, {
        method: 'PUT',
        body: new Blob([makePdf(2) as Uint8Array<ArrayBuffer>]),
      });
      assert.ok(put.ok, `PUT: ${put.status}`);
      // The page looks again by itself (1 s, then less often) and shows page 1 once rendered.
      await pageShown(page, 1, 2);
      assert.equal(navigations, 0, 'no reload');
    } finally {
      page.off('framenavigated', count);
    }
    await screenshot(page, 'asset-media-08-arrived-without-reload');
    assert.deepEqual(browser.problems, []);
  });
});
