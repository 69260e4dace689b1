import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import {
  apiAs,
  openBrowser,
  renditionsSettled,
  signIn,
  skip,
  startServer,
  uploadAsset,
  type Browser,
  type Call,
  type RunningServer,
} from './harness.ts';

/**
 * Issue 26's quality bar, "keyboard reachable everywhere", as a test that can fail: on each page,
 * pressing Tab from the top reaches every visible control (links, buttons, fields, anything
 * focusable) before it comes round again. A control only a mouse can reach fails it, naming it.
 */
async function unreachable(page: Browser['page']): Promise<string[]> {
  await page.evaluate(() => {
    (document.activeElement as HTMLElement | null)?.blur();
    window.scrollTo(0, 0);
  });
  const describe = () =>
    page.evaluate(() => {
      const label = (el: Element) =>
        `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${el.className ? `.${String(el.className).split(' ')[0]}` : ''}${el.getAttribute('href') ? `(${el.getAttribute('href')!.slice(0, 30)})` : ''}[${(el.getAttribute('aria-label') ?? (el as HTMLElement).textContent ?? (el as HTMLInputElement).name ?? '').trim().slice(0, 40)}]`;
      const controls = [
        ...document.querySelectorAll<HTMLElement>(
          'a[href], button:not([disabled]), input:not([disabled]):not([type=hidden]), select:not([disabled]), textarea:not([disabled]), summary, [tabindex]:not([tabindex="-1"])',
        ),
      ].filter((el) => {
        if (el.closest('[inert], [aria-hidden="true"]')) return false;
        // Roving tabindex (tabs, the grid's tiles): reached with the arrow keys from the one in the tab order.
        if (el.getAttribute('tabindex') === '-1') return false;
        // Rendered and visible (checkVisibility also says no for the content of a closed <details>).
        const box = el.getBoundingClientRect();
        return (
          box.width > 0 && box.height > 0 && el.checkVisibility({ visibilityProperty: true, opacityProperty: false })
        );
      });
      // A radio group is one tab stop; a roving-tabindex widget (the grid) is reached through its container.
      const seen = new Set<string>();
      return controls
        .filter((el) => {
          if (el instanceof HTMLInputElement && el.type === 'radio') {
            if (seen.has(el.name)) return false;
            seen.add(el.name);
          }
          return true;
        })
        .map((el, i) => {
          el.dataset.kbIndex = String(i);
          return label(el);
        });
    });
  const all = await describe();
  const reached = new Set<string>();
  // Tab stops that are not controls of the list (scrollable regions, content that loads after the list
  // is taken) take presses too: go on until every listed control is reached, or well past its count.
  for (let i = 0; i < all.length * 3 + 50 && reached.size < all.length; i++) {
    await page.keyboard.press('Tab');
    const at = await page.evaluate(() => {
      const el = document.activeElement as HTMLElement | null;
      const radio = el instanceof HTMLInputElement && el.type === 'radio' ? el.name : null;
      if (radio) {
        const first = document.querySelector<HTMLElement>(`input[type=radio][name="${radio}"][data-kb-index]`);
        return first?.dataset.kbIndex ?? null;
      }
      return el?.dataset.kbIndex ?? null;
    });
    if (at !== null) reached.add(at);
  }
  return all.filter((_, i) => !reached.has(String(i)));
}

describe('web app: every control is reachable with the keyboard', { skip }, () => {
  let server: RunningServer;
  let browser: Browser;
  let call: Call;
  let assetId: string;
  before(async () => {
    server = await startServer();
    call = await apiAs(server.url);
    const security = await call<{ templateId: string }[]>('GET', '/v1/security/template');
    const templates = await call<{ template: { templateId: string } }[]>('GET', '/v1/metadata/template');
    const metadataTemplateId = templates[0]!.template.templateId;
    const picture = await sharp({ create: { width: 300, height: 200, channels: 3, background: '#2f6fde' } })
      .jpeg()
      .toBuffer();
    assetId = (
      await uploadAsset(call, 'keyboard.jpg', picture, {
        metadataTemplateId,
        securityTemplateIds: [security[0]!.templateId],
      })
    ).objectId;
    await renditionsSettled(call, assetId);
    await call('POST', '/v1/collection', { name: 'Keyboard collection' }).catch(() => undefined);
    browser = await openBrowser();
    await signIn(browser.page, server.url);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  for (const [name, path, ready] of [
    ['the library', '/app/', '.tile img'],
    ['an asset page', 'ASSET', 'h1.asset-title'],
    ['the collections', '/app/collections', 'h1'],
    ['the adaptive templates', '/app/templates', '#adaptive-register'],
    ['administration', '/app/admin', 'h1'],
  ] as const) {
    it(`${name}: Tab reaches every visible control`, async () => {
      const { page } = browser;
      await page.goto(`${server.url}${path === 'ASSET' ? `/app/asset/${assetId}` : path}`);
      await page.waitForSelector(ready, { timeout: 30_000 });
      await page.waitForTimeout(300);
      assert.deepEqual(await unreachable(page), [], `not reachable by Tab on ${name}`);
    });
  }
});
