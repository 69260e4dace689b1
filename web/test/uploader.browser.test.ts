import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import {
  apiAs,
  axe,
  openBrowser,
  screenshot,
  signIn,
  skip,
  startServer,
  type Browser,
  type Call,
  type RunningServer,
} from './harness.ts';

const EDITOR = { username: 'editor-web', password: 'Editor-web-pass-1' };

describe('web app: an uploader who may not list security templates', { skip }, () => {
  let server: RunningServer;
  let browser: Browser;
  let admin: Call;
  let dir: string;
  before(async () => {
    server = await startServer();
    admin = await apiAs(server.url);
    const roles = await admin<{ id: string; name: string }[]>('GET', '/v1/roles');
    const groups = await admin<{ groupId: string; groupName: string }[]>('GET', '/v1/security/groups');
    await admin('POST', '/v1/user', {
      firstName: 'Eddie',
      lastName: 'Editor',
      friendlyName: 'Eddie',
      email: 'eddie@example.test',
      username: EDITOR.username,
      password: EDITOR.password,
      accountType: 'local',
      userRoleId: roles.find((r) => r.name === 'Editor')!.id,
      groups: [groups.find((g) => g.groupName === 'Everyone')!.groupId],
    });
    dir = mkdtempSync(join(tmpdir(), 'tessera-web-editor-'));
    browser = await openBrowser({ width: 390, height: 844 });
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("uploads from a phone-width upload panel, and the files get the organization's Default security template", async () => {
    const { page } = browser;
    const asEditor = await apiAs(server.url, EDITOR);
    await asEditor('GET', '/v1/security/template', undefined, 403);
    const file = join(dir, 'harbour.jpg');
    await sharp({ create: { width: 320, height: 200, channels: 3, background: '#2a9d8f' } })
      .jpeg()
      .toFile(file);

    await signIn(page, server.url, EDITOR);
    await page.click('#upload-button');
    await page.waitForSelector('#upload-default-security');
    await screenshot(page, 'uploader-01-panel-phone');
    assert.deepEqual(await axe(page), []);
    await page.setInputFiles('#file-input', file);
    await page.waitForSelector('.queue-item[data-state="done"]', { timeout: 60_000 });
    await screenshot(page, 'uploader-02-done-phone');
    assert.equal(await page.locator('.queue-item[data-state="failed"]').count(), 0);

    // The stored asset carries the Default security template, and the uploader sees it in the library.
    const scan = await admin<{ result: { objectId: string }[] }>('POST', '/v1/asset/scan', { limit: 10 });
    assert.equal(scan.result.length, 1);
    const asset = await admin<{ securityTemplateIds: string[] }>('GET', `/v1/asset/${scan.result[0]!.objectId}`);
    const templates = await admin<{ templateId: string; templateName: string }[]>('GET', '/v1/security/template');
    assert.deepEqual(asset.securityTemplateIds, [templates.find((x) => x.templateName === 'Default')!.templateId]);
    await page.click('[aria-label="Close the upload panel"]');
    await page.waitForFunction(() => document.querySelector('.toolbar .count')?.textContent?.includes('1 asset'));
    assert.deepEqual(browser.problems, []);
  });
});
