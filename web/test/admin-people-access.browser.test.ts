import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  ADMIN,
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

// Issue 27, item 1: people and access — invitations with a one-time set-password link, a person's
// sessions (and your own), acting as someone else.

describe('administration: invitations, sessions and acting as someone, in a real browser', { skip }, () => {
  let server: RunningServer;
  let browser: Browser;
  let admin: Call;
  before(async () => {
    server = await startServer();
    admin = await apiAs(server.url);
    browser = await openBrowser();
    await signIn(browser.page, server.url);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('creates a user without a password, shows the invitation link once; the link sets the password and signs them in', async () => {
    const { page } = browser;
    await page.goto(`${server.url}/app/admin/people`);
    await page.waitForSelector('#users >> text=admin');
    await page.click('#user-new');
    await page.fill('#user-first', 'Nia');
    await page.fill('#user-last', 'New');
    await page.fill('#user-friendly', 'Nia');
    await page.fill('#user-email', 'nia@example.test');
    await page.fill('#user-username', 'nia');
    await page.selectOption('#user-role', { label: 'Editor' });
    await page.fill('#user-own-password', ADMIN.password);
    await page.click('#user-save');
    await page.waitForSelector('#users-notice >> text=User "nia" created.');
    const link = await page.inputValue('#invitation-link');
    assert.match(link, /\/app\/set-password\?token=[\w-]{43}$/);
    await screenshot(page, 'admin-23-people-invitation', true);
    assert.deepEqual(await axe(page), []);
    // Shown once: dismissed, it is gone.
    await page.click('#invitation button:has-text("stored")');
    assert.equal(await page.locator('#invitation-link').count(), 0);

    // A fresh browser (nobody signed in) opens the link.
    const guest = await openBrowser();
    try {
      const p = guest.page;
      await p.goto(link);
      await p.waitForSelector('#set-password-form');
      assert.equal(new URL(p.url()).search, '', 'the token leaves the address bar');
      assert.deepEqual(await axe(p), []);
      await p.fill('#new-password', 'password');
      await p.fill('#repeat-password', 'password');
      await p.click('#set-password-save');
      await p.waitForSelector('#new-password[aria-invalid="true"]');
      await screenshot(p, 'set-password-1-weak');
      assert.deepEqual(await axe(p), []);
      await p.fill('#new-password', 'Nia-chosen-pass-1');
      await p.fill('#repeat-password', 'Nia-chosen-pass-1');
      await p.click('#set-password-save');
      await p.waitForSelector('#set-password-done');
      await screenshot(p, 'set-password-2-done');
      assert.deepEqual(await axe(p), []);
      await p.click('#sign-in');
      await p.waitForSelector('#username');
      await p.fill('#username', 'nia');
      await p.fill('#password', 'Nia-chosen-pass-1');
      await Promise.all([p.waitForURL((u) => u.pathname === '/app/'), p.click('#allow')]);
      await p.waitForSelector('#user-menu >> text=Nia');
      assert.deepEqual(guest.problems, []);

      // The link works once (seen in the dark theme).
      await p.emulateMedia({ colorScheme: 'dark' });
      await p.goto(link);
      await p.fill('#new-password', 'Nia-other-pass-2');
      await p.fill('#repeat-password', 'Nia-other-pass-2');
      await p.click('#set-password-save');
      await p.waitForSelector('#set-password-token-error >> text=already been used');
      await screenshot(p, 'set-password-3-used-dark');
      assert.deepEqual(await axe(p), []);
    } finally {
      await guest.close();
    }
  });

  it('invites an existing user from their detail: a new link replaces the old one', async () => {
    const { page } = browser;
    const everyone = (await admin<{ groupId: string; groupName: string }[]>('GET', '/v1/security/groups')).find(
      (g) => g.groupName === 'Everyone',
    )!.groupId;
    const roles = await admin<{ id: string; name: string }[]>('GET', '/v1/roles');
    await admin('POST', '/v1/user', {
      firstName: 'Ola',
      lastName: 'Old',
      friendlyName: 'Ola',
      email: 'ola@example.test',
      username: 'ola',
      password: 'Ola-first-pass-1',
      accountType: 'local',
      userRoleId: roles.find((r) => r.name === 'Viewer')!.id,
      groups: [everyone],
    });
    await page.goto(`${server.url}/app/admin/people`);
    await page.click('button[aria-label="Manage ola"]');
    await page.fill('#user-own-password', ADMIN.password);
    await page.click('#user-invite');
    await page.waitForSelector('#users-notice >> text=Invitation for "ola" made.');
    const link = await page.inputValue('#invitation-link');
    const token = new URL(link).searchParams.get('token')!;
    const accept = await fetch(`${server.url}/v1/user/invitation/accept`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token, password: 'Ola-second-pass-2' }),
    });
    assert.equal(accept.status, 200);
  });

  /** The session id inside an access token (its `sid` claim). */
  const sid = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()).sid as string;
  const signInAs = async (username: string, password: string, agent: string) => {
    const r = await fetch(`${server.url}/v1/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': agent },
      body: JSON.stringify({ username, password }),
    });
    assert.equal(r.status, 200);
    return ((await r.json()) as { session: { accessToken: string } }).session.accessToken;
  };
  const status = async (token: string) =>
    (await fetch(`${server.url}/v1/user`, { headers: { authorization: `Bearer ${token}` } })).status;
  const makeUser = async (username: string, role: string, password?: string) => {
    const everyone = (await admin<{ groupId: string; groupName: string }[]>('GET', '/v1/security/groups')).find(
      (g) => g.groupName === 'Everyone',
    )!.groupId;
    const roles = await admin<{ id: string; name: string }[]>('GET', '/v1/roles');
    await admin('POST', '/v1/user', {
      firstName: username,
      lastName: 'Test',
      friendlyName: username,
      email: `${username}@example.test`,
      username,
      ...(password ? { password } : {}),
      accountType: 'local',
      userRoleId: roles.find((r) => r.name === role)!.id,
      groups: [everyone],
    });
  };

  it("lists a person's sessions and ends one, then all: the ended sessions' tokens are refused", async () => {
    const { page } = browser;
    await makeUser('sam', 'Viewer', 'Sam-session-pass-1');
    const laptop = await signInAs(
      'sam',
      'Sam-session-pass-1',
      'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36',
    );
    const script = await signInAs('sam', 'Sam-session-pass-1', 'sync-script/1.0');
    await page.goto(`${server.url}/app/admin/people`);
    await page.click('button[aria-label="Manage sam"]');
    await page.waitForSelector(`tr[data-session="${sid(laptop)}"]`);
    assert.equal(await page.locator('.sessions-table tbody tr').count(), 2);
    assert.match((await page.textContent(`tr[data-session="${sid(laptop)}"]`)) ?? '', /Chrome on Linux/);
    await screenshot(page, 'admin-24-people-sessions', true);
    assert.deepEqual(await axe(page), []);
    await page.click(`tr[data-session="${sid(laptop)}"] button:has-text("End session")`);
    await page.waitForSelector('#sessions-notice >> text=Session ended');
    await page.waitForSelector(`tr[data-session="${sid(laptop)}"]`, { state: 'detached' });
    assert.equal(await page.locator('.sessions-table tbody tr').count(), 1);
    assert.equal(await status(laptop), 401);
    assert.equal(await status(script), 200);
    await page.click('#sessions-end-all');
    await page.waitForSelector('#sessions-notice >> text=Every session of sam ended.');
    assert.equal(await status(script), 401);
  });

  it('shows the signed-in person their own sessions from the account menu', async () => {
    const { page } = browser;
    const other = await signInAs(ADMIN.username, ADMIN.password, 'curl/8.0');
    await page.goto(`${server.url}/app/`);
    await page.click('#user-menu');
    await page.click('#my-sessions');
    await page.waitForSelector('h1 >> text=My sessions');
    await page.waitForSelector(`tr[data-session="${sid(other)}"]`);
    assert.equal(await page.locator('.sessions-table .state:has-text("This session")').count(), 1);
    await screenshot(page, 'sessions-1-mine', true);
    assert.deepEqual(await axe(page), []);
    await page.click(`tr[data-session="${sid(other)}"] button:has-text("End session")`);
    await page.waitForSelector('#sessions-notice');
    assert.equal(await status(other), 401);
  });

  it('acts as another person with a banner, and Stop returns to the administrator', async () => {
    const { page } = browser;
    await makeUser('vic', 'Viewer', 'Vic-viewer-pass-1');
    await page.goto(`${server.url}/app/admin/people`);
    await page.click('button[aria-label="Act as vic"]');
    await page.fill('#impersonate-reason', 'Ticket 42: cannot see the people page');
    await page.fill('#impersonate-own-password', 'wrong password');
    await page.click('#impersonate-start');
    await page.waitForSelector('#impersonate-own-password[aria-invalid="true"]');
    await page.fill('#impersonate-own-password', ADMIN.password);
    await page.click('#impersonate-start');
    await page.waitForSelector('#acting-banner >> text=Acting as vic');
    await page.waitForSelector('#user-menu >> text=vic');
    // The app is vic's now: a Viewer may not manage people.
    await page.waitForSelector('.ceiling >> text=manage users');
    await screenshot(page, 'admin-25-people-acting-as');
    assert.deepEqual(await axe(page), []);
    // The banner in the dark theme.
    await page.click('button[aria-label^="Switch to dark"]');
    await screenshot(page, 'admin-25-people-acting-as-dark');
    assert.deepEqual(await axe(page), []);
    await page.click('button[aria-label^="Switch to light"]');
    assert.deepEqual(browser.problems, []);
    await page.click('#acting-stop');
    await page.waitForSelector('#acting-banner', { state: 'detached' });
    await page.waitForSelector('#user-menu >> text=admin');
    await page.waitForSelector('#users >> text=vic');
  });

  it('a caller without the Impersonate privilege sees Act as disabled, with the reason', async () => {
    const roles = await admin<{ id: string; name: string }[]>('GET', '/v1/roles');
    const role = await admin<{ id: string }>('POST', '/v1/roles', {
      name: 'People manager',
      privileges: ['user_management', 'role_management', 'security_template_management', 'download'],
    });
    const everyone = (await admin<{ groupId: string; groupName: string }[]>('GET', '/v1/security/groups')).find(
      (g) => g.groupName === 'Everyone',
    )!.groupId;
    await admin('POST', '/v1/user', {
      firstName: 'Pat',
      lastName: 'Manager',
      friendlyName: 'Pat',
      email: 'pat@example.test',
      username: 'pat',
      password: 'Pat-manager-pass-1',
      accountType: 'local',
      userRoleId: role.id,
      groups: [everyone],
    });
    assert.ok(roles.length > 0);
    const pat = await openBrowser();
    try {
      const p = pat.page;
      await signIn(p, server.url, { username: 'pat', password: 'Pat-manager-pass-1' });
      await p.goto(`${server.url}/app/admin/people`);
      await p.waitForSelector('#impersonate-ceiling >> text=act as other people');
      const button = p.locator('button[aria-label="Act as vic"]');
      assert.equal(await button.isDisabled(), true);
      assert.equal(await button.getAttribute('aria-describedby'), 'impersonate-ceiling');
      await screenshot(p, 'admin-26-people-impersonate-ceiling', true);
      assert.deepEqual(await axe(p), []);
    } finally {
      await pat.close();
    }
  });
});
