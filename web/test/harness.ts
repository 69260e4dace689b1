import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CHROMIUM = '/usr/bin/chromium';
export const SHOTS = join(ROOT, 'web', 'test-results');
/** Browser tests need Chromium; CI installs it (.ci/run) and always runs them. */
export const skip =
  existsSync(CHROMIUM) || process.env.CI === 'true'
    ? false
    : `Chromium not installed at ${CHROMIUM} (apt-get install chromium); CI always runs these tests`;

export const ADMIN = { username: 'admin', password: 'Web-app-test-pass-1' };

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The built app (npm ci builds it; a checkout without it is built once here). */
export function ensureBuilt(): void {
  if (existsSync(join(ROOT, 'web', 'dist', 'index.html'))) return;
  const result = spawnSync(
    process.execPath,
    [join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--config', join(ROOT, 'web', 'vite.config.ts')],
    { cwd: ROOT, stdio: 'inherit' },
  );
  if (result.status !== 0) throw new Error('vite build failed');
}

export interface RunningServer {
  url: string;
  dataDir: string;
  stop(): Promise<void>;
}

/** A real Tessera process (SQLite, workers on) on a free port, with a known first administrator. */
export async function startServer(extraEnv: Record<string, string> = {}): Promise<RunningServer> {
  ensureBuilt();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'tessera-web-'));
  const child: ChildProcess = spawn(process.execPath, [join(ROOT, 'src', 'main.ts'), 'serve'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      TESSERA_PUBLIC_URL: url,
      TESSERA_DATA_DIR: dataDir,
      DATABASE_URL: '',
      TESSERA_ADMIN_USERNAME: ADMIN.username,
      TESSERA_ADMIN_PASSWORD: ADMIN.password,
      TESSERA_LOG_LEVEL: process.env.TESSERA_TEST_LOG_LEVEL ?? 'warn',
      ...extraEnv,
    },
    stdio: ['ignore', 'inherit', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk) => {
    stderr += String(chunk);
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited (${child.exitCode}): ${stderr}`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`the server did not start: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    url,
    dataDir,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        // A server that does not stop within 15 s of SIGTERM is killed, so that a stuck shutdown cannot hold the test.
        const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await new Promise((resolve) => child.once('exit', resolve));
        clearTimeout(kill);
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface Browser {
  context: BrowserContext;
  page: Page;
  /** Content-Security-Policy violations and uncaught errors seen in the page. */
  problems: string[];
  close(): Promise<void>;
}

export async function openBrowser(viewport = { width: 1280, height: 800 }): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'tessera-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const problems: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  return {
    context,
    page,
    problems,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** A screenshot into web/test-results; `whole` grows the window to the scrolled page's height first (the app scrolls inside its page, not the document). */
export async function screenshot(page: Page, name: string, whole = false): Promise<string> {
  mkdirSync(SHOTS, { recursive: true });
  const path = join(SHOTS, `${name}.png`);
  const viewport = page.viewportSize();
  if (whole && viewport) {
    const height = await page.evaluate(() =>
      Math.max(
        ...[...document.querySelectorAll('.page, .scroller, body')].map(
          (e) => e.scrollHeight + e.getBoundingClientRect().top,
        ),
      ),
    );
    await page.setViewportSize({ width: viewport.width, height: Math.min(6000, Math.ceil(height)) });
  }
  await page.screenshot({ path });
  if (whole && viewport) await page.setViewportSize(viewport);
  return path;
}

const AXE = readFileSync(join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');

/** axe-core's WCAG 2.x A/AA rules on the page as it is; returns the violations, one line each. */
export async function axe(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern (an inline <script> would be refused).
  await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const result = await (
      globalThis as unknown as {
        axe: {
          run(
            ctx: unknown,
            opts: unknown,
          ): Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }>;
        };
      }
    ).axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'] } });
    return result.violations.map(
      (v) =>
        `${v.id} (${v.impact}): ${v.nodes
          .slice(0, 3)
          .map((n) => n.target.join(' '))
          .join(', ')}`,
    );
  });
  return violations;
}

/** Signs in through the app: the app's button, Tessera's sign-in page, back to the app. */
export async function signIn(page: Page, url: string, user = ADMIN): Promise<void> {
  await page.goto(`${url}/`);
  await page.waitForURL(`${url}/app/`);
  await page.click('#sign-in');
  await page.waitForSelector('#username');
  await page.fill('#username', user.username);
  await page.fill('#password', user.password);
  await Promise.all([page.waitForURL((u) => u.pathname === '/app/'), page.click('#allow')]);
  await page.waitForSelector('#user-menu');
}

// biome-ignore lint/suspicious/noExplicitAny: API answers in tests are read as the test expects them
export type Call = <T = any>(method: string, path: string, body?: unknown, expect?: number) => Promise<T>;

/** The public API as a signed-in user (a password sign-in), for preparing what a browser test needs. */
export async function apiAs(url: string, user = ADMIN): Promise<Call> {
  const login = await (
    await fetch(`${url}/v1/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(user),
    })
  ).json();
  const headers = { accesstoken: login.session.accessToken as string, 'content-type': 'application/json' };
  return async (method, path, body, expect) => {
    const response = await fetch(url + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (expect !== undefined ? response.status !== expect : !response.ok)
      throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
}

/**
 * A local user with the Viewer role in the Everyone group: the caller without privileges whose
 * refusals the administration tests show. `firstName` also makes the email (`vic@example.test`).
 */
export async function createViewer(
  admin: Call,
  user: { username: string; password: string },
  firstName = 'Vic',
): Promise<void> {
  const roles = await admin<{ id: string; name: string }[]>('GET', '/v1/roles');
  const groups = await admin<{ groupId: string; groupName: string }[]>('GET', '/v1/security/groups');
  await admin('POST', '/v1/user', {
    firstName,
    lastName: 'Viewer',
    friendlyName: firstName,
    email: `${firstName.toLowerCase()}@example.test`,
    username: user.username,
    password: user.password,
    accountType: 'local',
    userRoleId: roles.find((r) => r.name === 'Viewer')!.id,
    groups: [groups.find((g) => g.groupName === 'Everyone')!.groupId],
  });
}

/** Creates an asset (or a version of one) and uploads its bytes, as a client of the API would. */
export async function uploadAsset(
  call: Call,
  name: string,
  bytes: Uint8Array,
  extra: Record<string, unknown> = {},
): Promise<{ objectId: string; fileId: string; originalFileId: string }> {
  const created = await call<{ data: { objectId: string; fileId: string; originalFileId: string; url: string } }>(
    'POST',
    '/v1/assets/asset',
    { filename: name, ...extra },
  );
  const put = await fetch(created.data.url, { method: 'PUT', body: new Blob([bytes as Uint8Array<ArrayBuffer>]) });
  if (!put.ok) throw new Error(`PUT ${name}: ${put.status} ${await put.text()}`);
  return created.data;
}

/** Waits until the asset's renditions are made (or failed). */
export async function renditionsSettled(call: Call, objectId: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const asset = await call<{ renditionsState?: string | null }>('GET', `/v1/asset/${objectId}`);
    if (asset.renditionsState && asset.renditionsState !== 'pending') return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`renditions of ${objectId} not made`);
}
