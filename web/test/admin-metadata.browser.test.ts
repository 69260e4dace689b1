import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
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
} from './harness.ts';

const VIEWER = { username: 'viewer-meta', password: 'Viewer-meta-pass-1' };

interface Attr {
  id: string;
  name: string;
  type: string;
  length: number | null;
  isMultiLine: boolean;
  dateFormat: string;
  isMultipleSelect: boolean;
  controlledVocabularyId: string | null;
  cascadeFieldsDenormalized?: { name: string; controlledVocabularyId: string }[];
  tableFieldsDenormalized?: { name: string }[];
}
interface Vocab {
  metadataDefinitionId: string;
  metadataDefinitionName: string;
  metadata: { values: { valueId: string; valueName: string; parentValueId: string | null }[] };
}

describe('administration: the metadata model in a real browser', { skip }, () => {
  let server: RunningServer;
  let browser: Browser;
  let admin: Call;
  const vocab = async (name: string) =>
    (await admin<Vocab[]>('GET', '/v1/metadata/vocabulary')).find((v) => v.metadataDefinitionName === name);
  const attribute = async (name: string) =>
    (await admin<Attr[]>('GET', '/v1/metadata/attributes')).find((a) => a.name === name);
  const group = async (name: string) =>
    (
      await admin<{ results: { id: string; name: string; attributeIds: string[] }[] }>(
        'GET',
        '/v1/metadata/groups?searchTerm=' + encodeURIComponent(name),
      )
    ).results.find((g) => g.name === name);
  const notice = async (text: string) => {
    await browser.page.waitForSelector(`#meta-notice >> text=${text}`);
  };
  before(async () => {
    server = await startServer();
    admin = await apiAs(server.url);
    await createViewer(admin, VIEWER, 'Vic');
    browser = await openBrowser();
    await signIn(browser.page, server.url);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('opens the metadata model as its own chunk, listing the system attributes', async () => {
    const { page } = browser;
    const scripts: string[] = [];
    page.on('request', (r) => r.resourceType() === 'script' && scripts.push(r.url()));
    await page.click('nav[aria-label="Main"] >> text=Administration');
    await page.click('nav[aria-label="Administration sections"] >> text=Metadata model');
    await page.waitForSelector('#attributes >> text=Usage Rights');
    assert.ok(
      scripts.some((s) => /\/assets\/metadata-model-[\w-]+\.js$/.test(s)),
      `the section is a lazy chunk: ${scripts.join(', ')}`,
    );
    assert.equal(new URL(page.url()).pathname, '/app/admin/metadata');
    assert.deepEqual(await axe(page), []);
  });

  it('vocabularies: creates one, imports a cascade level from CSV with parents, renames and deletes values, exports CSV, deletes one', async () => {
    const { page } = browser;
    await page.click('#tab-vocabularies');
    await page.waitForSelector('#vocabularies');
    await page.click('#vocabulary-new');
    await page.fill('#vocabulary-name', 'Region');
    await page.fill('#vocabulary-add', 'Europe\nAsia\n');
    await page.click('#vocabulary-save');
    await notice('Vocabulary "Region" saved.');
    const region = (await vocab('Region'))!;
    assert.deepEqual(region.metadata.values.map((v) => v.valueName).sort(), ['Asia', 'Europe']);
    // The next level: values with their parents, from a CSV file.
    await page.click('#vocabulary-new');
    await page.fill('#vocabulary-name', 'Country');
    await page.selectOption('#vocabulary-parent', { label: 'Region' });
    await page.setInputFiles('#vocabulary-import', {
      name: 'countries.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from('value,parent\r\nFrance,Europe\r\n"Japan",Asia\r\nPortugal,Europe\r\nAtlantis,Ocean\r\n'),
    });
    await page.waitForSelector('#vocabulary-imported >> text=From the file: 4 new values, 0 changed.');
    assert.match((await page.textContent('#vocabulary-imported')) ?? '', /Parents not found .*: Ocean/);
    await screenshot(page, 'admin-meta-01-vocabulary-import', true);
    assert.deepEqual(await axe(page), []);
    await page.click('#vocabulary-save');
    await notice('Vocabulary "Country" saved.');
    let country = (await vocab('Country'))!;
    const parentOf = (name: string) =>
      region.metadata.values.find(
        (v) => v.valueId === country.metadata.values.find((c) => c.valueName === name)?.parentValueId,
      )?.valueName ?? null;
    assert.equal(parentOf('France'), 'Europe');
    assert.equal(parentOf('Japan'), 'Asia');
    assert.equal(parentOf('Atlantis'), null);
    // Edit: rename a value, move one under another parent, delete one.
    await page.click('button[aria-label="Edit Country"]');
    await page.waitForSelector('#vocabulary-values');
    const names = await page.$$eval('#vocabulary-values tbody input:not([type=checkbox])', (els) =>
      els.map((e) => (e as HTMLInputElement).value),
    );
    await page.fill(
      `#vocabulary-values tbody tr:nth-child(${names.indexOf('France') + 1}) input:not([type=checkbox])`,
      'France (FR)',
    );
    await page.selectOption('select[aria-label="Parent of Atlantis"]', { label: 'Europe' });
    await page.check('input[aria-label="Delete Portugal"]');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#vocabulary-export')]);
    const csv = await readFile((await download.path())!, 'utf8');
    assert.match(csv, /^value,parent\r\n/);
    assert.match(csv, /France \(FR\),Europe\r\n/);
    assert.match(csv, /Atlantis,Europe\r\n/);
    assert.doesNotMatch(csv, /Portugal/);
    await page.click('#vocabulary-save');
    await notice('Vocabulary "Country" saved.');
    country = (await vocab('Country'))!;
    assert.deepEqual(country.metadata.values.map((v) => v.valueName).sort(), ['Atlantis', 'France (FR)', 'Japan']);
    assert.equal(parentOf('Atlantis'), 'Europe');
    // Create and delete one.
    await page.click('#vocabulary-new');
    await page.fill('#vocabulary-name', 'Scratch');
    await page.click('#vocabulary-save');
    await notice('Vocabulary "Scratch" saved.');
    await page.click('button[aria-label="Edit Scratch"]');
    await page.click('#vocabulary-delete');
    await page.click('#vocabulary-delete-yes');
    await notice('Vocabulary "Scratch" deleted.');
    assert.equal(await vocab('Scratch'), undefined);
  });

  it('attributes: creates one of every type, edits one, shows a refusal on the form, deletes one', async () => {
    const { page } = browser;
    await page.click('#tab-attributes');
    await page.waitForSelector('#attributes');
    const create = async (name: string, fill: () => Promise<void>) => {
      await page.click('#attribute-new');
      await page.fill('#attribute-name', name);
      await fill();
      await page.click('#attribute-save');
      await notice(`Attribute "${name}" saved.`);
    };
    await create('Caption', async () => {
      await page.fill('#attribute-length', '80');
      await page.check('#attribute-multiline');
    });
    await create('Shot on', async () => {
      await page.selectOption('#attribute-type', 'date');
      await page.selectOption('#attribute-date-format', 'dd.MM.yyyy');
    });
    await create('Regions', async () => {
      await page.selectOption('#attribute-type', 'controlledVocabulary');
      await page.selectOption('#attribute-vocabulary', { label: 'Region' });
      await page.check('#attribute-multiple');
      await page.check('#attribute-flag-facetable');
    });
    await create('Place', async () => {
      await page.selectOption('#attribute-type', 'cascade');
      await page.fill('#level-0-name', 'Region');
      await page.selectOption('#level-0-vocabulary', { label: 'Region' });
      await page.fill('#level-1-name', 'Country');
      await page.selectOption('#level-1-vocabulary', { label: 'Country' });
    });
    await create('Credits', async () => {
      await page.selectOption('#attribute-type', 'table');
      await page.selectOption('#column-add', { label: 'Caption (Text)' });
      await page.selectOption('#column-add', { label: 'Shot on (Date)' });
      await page.click('button[aria-label="Move Shot on up"]');
      await page.waitForSelector('text=Shot on moved to place 1 of 2.');
    });
    const caption = (await attribute('Caption'))!;
    assert.equal(caption.type, 'text');
    assert.equal(caption.length, 80);
    assert.equal(caption.isMultiLine, true);
    assert.equal((await attribute('Shot on'))!.dateFormat, 'dd.MM.yyyy');
    const regions = (await attribute('Regions'))!;
    assert.equal(regions.isMultipleSelect, true);
    assert.equal(regions.controlledVocabularyId, (await vocab('Region'))!.metadataDefinitionId);
    assert.deepEqual(
      (await attribute('Place'))!.cascadeFieldsDenormalized!.map((l) => l.name),
      ['Region', 'Country'],
    );
    assert.deepEqual(
      (await attribute('Credits'))!.tableFieldsDenormalized!.map((c) => c.name),
      ['Shot on', 'Caption'],
    );
    await page.waitForSelector('#attributes tr[data-name="Place"] >> text=Region › Country');
    // Edit.
    await page.click('button[aria-label="Edit Caption"]');
    assert.equal(await page.inputValue('#attribute-length'), '80');
    assert.equal(await page.isDisabled('#attribute-type'), true);
    await page.fill('#attribute-length', '120');
    await page.click('#attribute-save');
    await notice('Attribute "Caption" saved.');
    assert.equal((await attribute('Caption'))!.length, 120);
    // Refusals come back on the form: a taken name (409), and deleting an attribute a table uses.
    await page.click('#attribute-new');
    await page.fill('#attribute-name', 'caption');
    await page.click('#attribute-save');
    await page.waitForSelector('#attribute-name-error, #attribute-form [role=alert]');
    assert.match((await page.textContent('#attribute-form')) ?? '', /already|exists|taken|in use/i);
    await page.click('#attribute-form >> text=Cancel');
    await page.click('button[aria-label="Edit Shot on"]');
    await page.click('#attribute-delete');
    await page.click('#attribute-delete-yes');
    await page.waitForSelector('#attribute-form [role=alert] >> text=Credits');
    assert.ok(await attribute('Shot on'));
    await page.click('#attribute-form >> text=Cancel');
    await create('Scratch field', async () => undefined);
    await page.click('button[aria-label="Edit Scratch field"]');
    await page.click('#attribute-delete');
    await page.click('#attribute-delete-yes');
    await notice('Attribute "Scratch field" deleted.');
    assert.equal(await attribute('Scratch field'), undefined);
    await screenshot(page, 'admin-meta-02-attributes', true);
    assert.deepEqual(await axe(page), []);
  });

  it('groups: creates one with ordered attributes (keyboard moves), edits and deletes', async () => {
    const { page } = browser;
    await page.click('#tab-groups');
    await page.waitForSelector('#groups');
    await page.click('#group-new');
    await page.fill('#group-name', 'Photo');
    for (const name of ['Caption (Text)', 'Regions (Vocabulary)', 'Place (Cascade)', 'Credits (Table)'])
      await page.selectOption('#group-attribute-add', { label: name });
    // Keyboard: focus Place's "move up" and press Enter; focus stays with the moved item.
    await page.focus('button[aria-label="Move Place up"]');
    await page.keyboard.press('Enter');
    await page.waitForSelector('text=Place moved to place 2 of 4.');
    await page.keyboard.press('Enter');
    await page.waitForSelector('text=Place moved to place 1 of 4.');
    await page.click('#group-save');
    await notice('Group "Photo" saved.');
    const ids = new Map((await admin<Attr[]>('GET', '/v1/metadata/attributes')).map((a) => [a.id, a.name]));
    assert.deepEqual(
      (await group('Photo'))!.attributeIds.map((id) => ids.get(id)),
      ['Place', 'Caption', 'Regions', 'Credits'],
    );
    await page.click('#group-new');
    await page.fill('#group-name', 'Scratch group');
    await page.click('#group-save');
    await notice('Group "Scratch group" saved.');
    await page.click('button[aria-label="Edit Scratch group"]');
    await page.fill('#group-name', 'Scratch group 2');
    await page.click('#group-save');
    await notice('Group "Scratch group 2" saved.');
    await page.click('button[aria-label="Edit Scratch group 2"]');
    await page.click('#group-delete');
    await page.click('#group-delete-yes');
    await notice('Group "Scratch group 2" deleted.');
    assert.equal(await group('Scratch group 2'), undefined);
    assert.deepEqual(await axe(page), []);
  });

  it('templates: drag-and-drop ordering with a live preview of the form, then apply the changes as an Action', async () => {
    const { page } = browser;
    await page.click('#tab-templates');
    await page.waitForSelector('#templates');
    await page.click('#template-new');
    await page.fill('#template-name', 'Photo template');
    await page.selectOption('#template-group-add', { label: 'Photo' });
    const photo = (await group('Photo'))!;
    const list = `#template-attributes-${photo.id}`;
    const preview = () =>
      page.$$eval('#template-preview fieldset[data-group="Photo"] > .field', (els) =>
        els.map((e) => e.getAttribute('data-field')),
      );
    await page.waitForSelector('#template-preview [data-field="Place"]');
    assert.deepEqual(await preview(), ['Place', 'Caption', 'Regions', 'Credits']);
    // Drag Credits onto the first place: the preview follows at once.
    await page.dragAndDrop(`${list} li:nth-child(4)`, `${list} li:nth-child(1)`);
    await page.waitForSelector('text=Credits moved to place 1 of 4.');
    assert.deepEqual(await preview(), ['Credits', 'Place', 'Caption', 'Regions']);
    // The preview is the asset form: the cascade's second level keeps to the first's values.
    await page.selectOption('#template-preview [data-field="Place"] select >> nth=0', { label: 'Asia' });
    const options = await page
      .locator('#template-preview [data-field="Place"] select')
      .nth(1)
      .locator('option')
      .allTextContents();
    assert.ok(options.includes('Japan'), options.join());
    assert.ok(!options.includes('France (FR)'), options.join());
    await screenshot(page, 'admin-meta-03-template-preview', true);
    assert.deepEqual(await axe(page), []);
    await page.click('#template-save');
    await notice('Template "Photo template" saved.');
    const ids = new Map((await admin<Attr[]>('GET', '/v1/metadata/attributes')).map((a) => [a.id, a.name]));
    assert.deepEqual(
      (await group('Photo'))!.attributeIds.map((id) => ids.get(id)),
      ['Credits', 'Place', 'Caption', 'Regions'],
    );
    const templates = (
      await admin<{ results: { templateId: string; name: string; groupIds: string[] }[] }>(
        'GET',
        '/v1/metadata/templates',
      )
    ).results;
    const made = templates.find((x) => x.name === 'Photo template')!;
    assert.equal(made.groupIds[0], photo.id);
    // Edit: rename.
    await page.click('button[aria-label="Edit Photo template"]');
    await page.fill('#template-name', 'Photos');
    await page.click('#template-save');
    await notice('Template "Photos" saved.');
    // Apply the pending definition changes (the renamed value, the changed group): an Action, watched.
    await page.waitForSelector('#pending-changes >> text=changes are waiting');
    await page.click('#apply-run');
    await page.waitForSelector('#apply .action-card >> text=Succeeded', { timeout: 60_000 });
    await page.waitForSelector('#pending-changes >> text=No changes are waiting.');
    await screenshot(page, 'admin-meta-04-applied', true);
    assert.deepEqual(await axe(page), []);
    // Delete.
    await page.click('button[aria-label="Edit Photos"]');
    await page.click('#template-delete');
    await page.click('#template-delete-yes');
    await notice('Template "Photos" deleted.');
    assert.equal(
      (await admin<{ results: { name: string }[] }>('GET', '/v1/metadata/templates')).results.some(
        (x) => x.name === 'Photos',
      ),
      false,
    );
  });

  it('fits a phone and the dark theme', async () => {
    const { page } = browser;
    await page.click('button[aria-label^="Switch to dark"]');
    await page.setViewportSize({ width: 390, height: 800 });
    await page.click('#template-new');
    await page.selectOption('#template-group-add', { label: 'Photo' });
    await page.waitForSelector('#template-preview [data-field="Place"]');
    await screenshot(page, 'admin-meta-05-phone-dark', true);
    assert.deepEqual(await axe(page), []);
    await page.click('#template-form >> text=Cancel');
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.click('button[aria-label^="Switch to light"]');
    assert.deepEqual(browser.problems, []);
  });

  it('shows a caller without Metadata Management what they may not do, before any click', async () => {
    const viewer = await openBrowser({ width: 390, height: 800 });
    try {
      await signIn(viewer.page, server.url, VIEWER);
      await viewer.page.goto(`${server.url}/app/admin/metadata`);
      await viewer.page.waitForSelector(
        'text=You may not change the metadata model: it takes the Metadata Management privilege',
      );
      assert.equal(await viewer.page.$('#attribute-new'), null);
      assert.equal(await viewer.page.$('#attributes'), null);
      await screenshot(viewer.page, 'admin-meta-06-refused');
      assert.deepEqual(await axe(viewer.page), []);
      const asViewer = await apiAs(server.url, VIEWER);
      await asViewer('POST', '/v1/metadata/attributes', { name: 'Nope', type: 'text' }, 403);
      assert.deepEqual(viewer.problems, []);
    } finally {
      await viewer.close();
    }
  });
});
