import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
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

const jpeg = (colour: string) =>
  sharp({ create: { width: 480, height: 320, channels: 3, background: colour } })
    .jpeg()
    .toBuffer();

/** The asset page: every attribute type, versions, history, relationships, downloads, sharing, the recycle bin, media. */
describe('web app: the asset page', { skip }, () => {
  let server: RunningServer;
  let browser: Browser;
  let call: Call;
  const ids: Record<string, string> = {};
  let first: { objectId: string; fileId: string; originalFileId: string };

  before(async () => {
    server = await startServer();
    call = await apiAs(server.url);
    // A template with a cascade, a table (text, date and cascade columns) and a multi-value vocabulary, made as an administrator would.
    const colors = await call('POST', '/v1/metadata/vocabulary', { name: 'Colors', values: ['Red', 'Blue'] });
    const valueId = (vocab: { metadataDocument: { values: { valueName: string; valueId: string }[] } }, name: string) =>
      vocab.metadataDocument.values.find((v) => v.valueName === name)!.valueId;
    const shades = await call('POST', '/v1/metadata/vocabulary', {
      name: 'Shades',
      values: [
        { valueName: 'Crimson', parentValueId: valueId(colors, 'Red') },
        { valueName: 'Navy', parentValueId: valueId(colors, 'Blue') },
      ],
    });
    const channels = await call('POST', '/v1/metadata/vocabulary', {
      name: 'Channels',
      values: ['Web', 'Print', 'Social', 'E-Commerce', 'TV', 'Radio', 'Outdoor'],
    });
    const palette = await call('POST', '/v1/metadata/attributes', {
      name: 'Palette',
      type: 'cascade',
      levels: [
        { name: 'Color', controlledVocabularyId: colors.metadataDefinitionId },
        { name: 'Shade', controlledVocabularyId: shades.metadataDefinitionId },
      ],
    });
    const note = await call('POST', '/v1/metadata/attributes', { name: 'Placement', type: 'text' });
    const until = await call('POST', '/v1/metadata/attributes', { name: 'Until', type: 'date' });
    const usage = await call('POST', '/v1/metadata/attributes', {
      name: 'Usage',
      type: 'table',
      tableFieldIds: [note.id, until.id, palette.id],
    });
    const channel = await call('POST', '/v1/metadata/attributes', {
      name: 'Channels',
      type: 'controlledVocabulary',
      controlledVocabularyId: channels.metadataDefinitionId,
      isMultipleSelect: true,
    });
    const group = await call('POST', '/v1/metadata/groups', {
      name: 'Campaign',
      attributeIds: [palette.id, usage.id, channel.id],
    });
    const template = await call('POST', '/v1/metadata/template', { name: 'Campaign', groupIds: [group.id] });
    const security = await call<{ templateId: string }[]>('GET', '/v1/security/template');
    const common = { metadataTemplateId: template.templateId, securityTemplateIds: [security[0]!.templateId] };
    first = await uploadAsset(call, 'brochure.jpg', await jpeg('#2f6fde'), common);
    const second = await uploadAsset(call, 'brochure.jpg', await jpeg('#e4572e'), { originalFileId: first.fileId });
    ids.brochure = second.objectId;
    ids.logo = (await uploadAsset(call, 'logo-final.jpg', await jpeg('#3bb273'), common)).objectId;
    ids.clip = (await uploadAsset(call, 'clip.mp4', new Uint8Array(2048), common)).objectId;
    ids.manual = (
      await uploadAsset(call, 'manual.pdf', new TextEncoder().encode('%PDF-1.4\n%%EOF\n'), common)
    ).objectId;
    for (const id of Object.values(ids)) await renditionsSettled(call, id);
    await renditionsSettled(call, first.objectId);
    browser = await openBrowser();
    await signIn(browser.page, server.url);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("edits a cascade, a table and a multi-value vocabulary, with the API's error on the table cell", async () => {
    const { page } = browser;
    await page.goto(`${server.url}/app/asset/${ids.brochure}`);
    await page.waitForSelector('[data-field="Palette"] select');
    // Cascade: the second level lists only the values under the first level's choice.
    await page.selectOption('[data-field="Palette"] select >> nth=0', 'Blue');
    const shades = await page.$$eval('[data-field="Palette"] select >> nth=1', (els) =>
      [...(els[0] as HTMLSelectElement).options].map((o) => o.value),
    );
    assert.deepEqual(shades, ['', 'Navy']);
    await page.selectOption('[data-field="Palette"] select >> nth=1', 'Navy');
    // Table: a row with a text, a date and a cascade cell.
    await page.click('[data-field="Usage"] .add-row');
    await page.fill('[data-field="Usage"] td[data-cell="0/0"] input', 'Homepage banner');
    await page.fill('[data-field="Usage"] td[data-cell="0/1"] input', '2027-31-12');
    await page.selectOption('[data-field="Usage"] td[data-cell="0/2"] select >> nth=0', 'Red');
    await page.selectOption('[data-field="Usage"] td[data-cell="0/2"] select >> nth=1', 'Crimson');
    // A multi-value vocabulary with a search.
    await page.fill('[data-field="Channels"] input[type=search]', 'soc');
    assert.equal(await page.locator('[data-field="Channels"] li label').count(), 1);
    await page.check('[data-field="Channels"] label:has-text("Social") input');
    await page.fill('[data-field="Channels"] input[type=search]', '');
    await page.check('[data-field="Channels"] label:has-text("Web") input');
    await page.click('.metadata-form button[type=submit]');
    await page.waitForSelector('[data-field="Usage"] td[data-cell="0/1"] .field-error');
    assert.match((await page.textContent('[data-field="Usage"] td[data-cell="0/1"] .field-error')) ?? '', /not a date/);
    assert.equal(await page.getAttribute('[data-field="Usage"] td[data-cell="0/1"] input', 'aria-invalid'), 'true');
    assert.equal(
      await page.getAttribute('[data-field="Usage"] td[data-cell="0/0"] input', 'aria-invalid'),
      null,
      'only the bad cell is marked',
    );
    await screenshot(page, 'asset-01-table-error', true);
    assert.deepEqual(await axe(page), []);
    await page.fill('[data-field="Usage"] td[data-cell="0/1"] input', '2027-12-31');
    await page.click('.metadata-form button[type=submit]');
    await page.waitForSelector('.metadata-form .notice:has-text("Saved.")');
    // Stored as sent: read back through the API, and shown again after a reload.
    const stored = await call<{ data: { metadata: { name: string; value: unknown }[] } }>(
      'GET',
      `/v1/assets/asset/${ids.brochure}`,
    );
    const value = (name: string) => stored.data.metadata.find((m) => m.name === name)?.value;
    assert.deepEqual(value('Palette'), [
      { name: 'Color', value: 'Blue' },
      { name: 'Shade', value: 'Navy' },
    ]);
    assert.deepEqual(value('Channels'), ['Social', 'Web']);
    const usage = value('Usage') as { name: string; value: unknown }[][];
    assert.equal(usage.length, 1);
    assert.deepEqual(
      usage[0]!.map((c) => c.name),
      ['Placement', 'Until', 'Palette'],
    );
    await page.reload();
    await page.waitForSelector('[data-field="Usage"] td[data-cell="0/0"] input');
    assert.equal(await page.inputValue('[data-field="Usage"] td[data-cell="0/0"] input'), 'Homepage banner');
    assert.equal(await page.inputValue('[data-field="Palette"] select >> nth=1'), 'Navy');
  });

  it('restores an older version as the newest, and shows the history', async () => {
    const { page } = browser;
    await page.click('#tab-versions');
    await page.waitForFunction(() => document.querySelectorAll('.versions li').length === 2);
    await page.click('.versions li[data-version="1"] button');
    // The page follows the new version once it is stored.
    await page.waitForFunction(() => document.querySelectorAll('.versions li').length === 3, undefined, {
      timeout: 30_000,
    });
    await page.waitForSelector('.versions li[data-version="3"] .badge');
    const versions = await call<
      { objectId: string; versionNumber: number; currentVersion: string; fileSizeInBytes: number }[]
    >('GET', `/v1/asset/${first.objectId}/version`);
    const newest = versions.find((v) => v.currentVersion === 'Y')!;
    assert.equal(newest.versionNumber, 3);
    assert.equal(
      newest.fileSizeInBytes,
      versions.find((v) => v.versionNumber === 1)!.fileSizeInBytes,
      "version 1's bytes",
    );
    await page.waitForURL(`${server.url}/app/asset/${newest.objectId}`);
    await screenshot(page, 'asset-02-versions');
    await page.click('#tab-history');
    await page.waitForSelector('.history li');
    const history = await page.$$eval('.history li', (els) => els.map((e) => e.textContent ?? ''));
    assert.ok(
      history.some((h) => /Uploaded by admin/.test(h)),
      history.join('\n'),
    );
    assert.ok(
      history.some((h) => /Version 3 uploaded by admin/.test(h)),
      history.join('\n'),
    );
    await screenshot(page, 'asset-03-history');
    assert.deepEqual(await axe(page), []);
  });

  it('relates another asset found by name, and shows technical metadata and every rendition', async () => {
    const { page } = browser;
    await page.click('#tab-relations');
    await page.fill('#relate-search', 'logo');
    await page.click('button:has-text("Relate logo-final.jpg")');
    await page.waitForSelector('.links a:has-text("logo-final.jpg")');
    await screenshot(page, 'asset-04-relations');
    assert.deepEqual(await axe(page), []);
    await page.click('button[aria-label="Remove the relationship with logo-final.jpg"]');
    await page.waitForSelector('.relations p.muted:has-text("No related assets")');
    // The restored version's renditions and technical metadata are made in the background.
    await renditionsSettled(call, new URL(page.url()).pathname.split('/').pop()!);
    await page.reload();
    await page.click('#tab-technical');
    await page.waitForSelector('.technical dt');
    assert.ok((await page.$$('.technical dt')).length > 3);
    await page.click('.downloads summary');
    const links = await page.$$eval('.downloads a', (els) =>
      els.map((a) => [a.textContent, (a as HTMLAnchorElement).href]),
    );
    const labels = links.map(([label]) => label);
    // The four image renditions, labelled by size, and whatever else the asset holds (every rendition is offered).
    for (const label of [
      'Thumbnail (200 px)',
      'Preview (700 px)',
      'Large preview (1000 px)',
      'High resolution (3000 px)',
    ])
      assert.ok(labels.includes(label), labels.join(', '));
    for (const [, href] of links) assert.equal((await fetch(href!)).status, 200);
  });

  it('makes a public link, shares by e-mail with the error on its field, and moves to the recycle bin and back', async () => {
    const { page } = browser;
    await page.click('button:has-text("Public link")');
    await page.fill('#expose-days', '3');
    await page.click('#expose-form button[type=submit]');
    const url = await (await page.waitForSelector('#exposed-url')).inputValue();
    assert.equal((await fetch(url)).status, 200);
    await page.click('button:has-text("Share by e-mail")');
    await page.click('#share-form button[type=submit]');
    await page.waitForSelector('#share-error');
    assert.equal(await page.getAttribute('#share-emails', 'aria-invalid'), 'true');
    await page.fill('#share-emails', 'agency@example.com');
    await page.fill('#share-message', 'The new brochure');
    await page.click('#share-form button[type=submit]');
    await page.waitForSelector('#share-form', { state: 'detached' });
    await page.click('button:has-text("Move to recycle bin")');
    await page.waitForSelector('.error:has-text("in the recycle bin")');
    await screenshot(page, 'asset-05-recycle-bin');
    assert.deepEqual(await axe(page), []);
    await page.click('.asset-actions button:has-text("Restore")');
    await page.waitForSelector('.notice:has-text("Restored.")');
    await page.waitForSelector('.error:has-text("in the recycle bin")', { state: 'detached' });
  });

  it('plays a video from its original when no web version exists, and links a PDF', async () => {
    const { page } = browser;
    await page.goto(`${server.url}/app/asset/${ids.clip}`);
    await page.click('.player button:has-text("Play the original")');
    const src = await (await page.waitForSelector('video.media[src]')).getAttribute('src');
    assert.equal((await fetch(src!)).status, 200);
    await screenshot(page, 'asset-06-video');
    assert.deepEqual(await axe(page), []);
    await page.goto(`${server.url}/app/asset/${ids.manual}`);
    await page.click('button:has-text("Get a link to the original")');
    const href = await (await page.waitForSelector('a.button:has-text("Open the original")')).getAttribute('href');
    assert.equal((await fetch(href!)).status, 200);
  });

  it('fits a phone and the dark theme, and a missing asset says so', async () => {
    const { page } = browser;
    await page.goto(`${server.url}/app/asset/${ids.logo}`);
    await page.waitForSelector('.metadata-form');
    await page.click('button[aria-label^="Switch to dark"]');
    await screenshot(page, 'asset-07-dark');
    assert.deepEqual(await axe(page), []);
    await page.setViewportSize({ width: 390, height: 800 });
    await screenshot(page, 'asset-08-phone', true);
    assert.deepEqual(await axe(page), []);
    await page.click('button[aria-label^="Switch to light"]');
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(`${server.url}/app/asset/00000000-0000-7000-8000-000000000000`);
    await page.waitForSelector('.error:has-text("does not exist")');
    await screenshot(page, 'asset-09-not-found');
    assert.deepEqual(await axe(page), []);
    assert.deepEqual(browser.problems, []);
  });
});
