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

const VIEWER = { username: 'viewer-people', password: 'Viewer-people-pass-1' };
const PEOPLE_ADMIN = { username: 'people-admin', password: 'People-admin-pass-1' };

interface Role {
  id: string;
  name: string;
  privileges: string[];
}

/** People and access: roles with their privileges, groups, security templates with the group × permission grid. */
describe('administration: people and access in a real browser', { skip }, () => {
  let server: RunningServer;
  let browser: Browser;
  let admin: Call;
  before(async () => {
    server = await startServer();
    admin = await apiAs(server.url);
    const roles = await admin<Role[]>('GET', '/v1/roles');
    const groups = await admin<{ groupId: string; groupName: string }[]>('GET', '/v1/security/groups');
    const everyone = groups.find((g) => g.groupName === 'Everyone')!.groupId;
    const peopleRole = await admin<Role>('POST', '/v1/roles', {
      name: 'People administrator',
      privileges: ['user_management', 'role_management', 'security_template_management', 'upload'],
    });
    for (const [user, roleId, first] of [
      [VIEWER, roles.find((r) => r.name === 'Viewer')!.id, 'Vin'],
      [PEOPLE_ADMIN, peopleRole.id, 'Pia'],
    ] as const)
      await admin('POST', '/v1/user', {
        firstName: first,
        lastName: 'Test',
        friendlyName: first,
        email: `${user.username}@example.test`,
        username: user.username,
        password: user.password,
        accountType: 'local',
        userRoleId: roleId,
        groups: [everyone],
      });
    browser = await openBrowser();
    await signIn(browser.page, server.url);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('creates a user (after a password check), changes their role and groups, disables, enables and sets their password', async () => {
    const { page } = browser;
    await page.goto(`${server.url}/app/admin/people`);
    await page.waitForSelector('#users >> text=people-admin');
    await page.click('#user-new');
    await page.fill('#user-first', 'Uma');
    await page.fill('#user-last', 'User');
    await page.fill('#user-friendly', 'Uma');
    await page.fill('#user-email', 'uma@example.test');
    await page.fill('#user-username', 'uma');
    await page.selectOption('#user-role', { label: 'Editor' });
    await page.fill('#user-new-password', 'Uma-first-pass-1');
    await page.fill('#user-own-password', 'not my password');
    await page.click('#user-save');
    await page.waitForSelector('#user-own-password[aria-invalid="true"]');
    assert.match((await page.textContent('#user-own-password-error')) ?? '', /not right/);
    await page.fill('#user-own-password', ADMIN.password);
    await page.click('#user-save');
    await page.waitForSelector('#users-notice >> text=User "uma" created.');
    const login = (password: string) =>
      fetch(`${server.url}/v1/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'uma', password }),
      }).then((r) => r.status);
    assert.equal(await login('Uma-first-pass-1'), 200);
    type U = { data: { userId: string; roleId: string; groups: string[]; status: string }[] };
    const uma = async () => (await admin<U>('GET', '/v1/user/search/uma')).data[0]!;
    const roles = await admin<Role[]>('GET', '/v1/roles');
    assert.equal((await uma()).roleId, roles.find((r) => r.name === 'Editor')!.id);
    // Role and groups.
    await page.click('button[aria-label="Manage uma"]');
    await page.selectOption('#user-role', { label: 'Viewer' });
    await page.check('#user-form label:has-text("Administrators") input');
    await page.fill('#user-own-password', ADMIN.password);
    await page.click('#user-save');
    await page.waitForSelector('#users-notice >> text=User "uma" saved.');
    assert.equal((await uma()).roleId, roles.find((r) => r.name === 'Viewer')!.id);
    assert.equal((await uma()).groups.length, 2);
    // Disable: they cannot sign in; enable again.
    await page.click('button[aria-label="Manage uma"]');
    await page.fill('#user-own-password', ADMIN.password);
    await page.click('#user-status');
    await page.waitForSelector('#users-notice >> text=User "uma" disabled');
    assert.equal((await uma()).status, 'disabled');
    assert.notEqual(await login('Uma-first-pass-1'), 200);
    await page.click('button[aria-label="Manage uma"]');
    await page.fill('#user-own-password', ADMIN.password);
    await page.click('#user-status');
    await page.waitForSelector('#users-notice >> text=User "uma" enabled.');
    // A new password for them: a weak one is refused on its field, then a good one works.
    await page.click('button[aria-label="Manage uma"]');
    await page.fill('#user-reset-password', 'password');
    await page.fill('#user-own-password', ADMIN.password);
    await page.click('#user-reset');
    await page.waitForSelector('#user-reset-password[aria-invalid="true"]');
    await page.fill('#user-reset-password', 'Uma-second-pass-2');
    await page.fill('#user-own-password', ADMIN.password);
    await page.click('#user-reset');
    await page.waitForSelector('#users-notice >> text=Password of "uma" set');
    assert.equal(await login('Uma-second-pass-2'), 200);
    assert.notEqual(await login('Uma-first-pass-1'), 200);
    await screenshot(page, 'admin-19-people-users', true);
    assert.deepEqual(await axe(page), []);
  });

  it('creates, edits and deletes a role; a duplicate name is refused on its field', async () => {
    const { page } = browser;
    await page.waitForSelector('#roles >> text=Administrator');
    await page.click('#role-new');
    await page.fill('#role-name', 'Reviewer');
    await page.check('#role-form label:has-text("Upload") input');
    await page.check('#role-form label:has-text("Download") input');
    await page.click('#role-save');
    await page.waitForSelector('#roles-notice >> text=Role "Reviewer" saved.');
    let reviewer = (await admin<Role[]>('GET', '/v1/roles')).find((r) => r.name === 'Reviewer')!;
    assert.deepEqual(reviewer.privileges.sort(), ['download', 'upload']);
    await page.click('button[aria-label="Edit role Reviewer"]');
    await page.fill('#role-name', 'Reviewers');
    await page.check('#role-form label:has-text("Collection") input');
    await page.click('#role-save');
    await page.waitForSelector('#roles-notice >> text=Role "Reviewers" saved.');
    reviewer = (await admin<Role[]>('GET', '/v1/roles')).find((r) => r.id === reviewer.id)!;
    assert.equal(reviewer.name, 'Reviewers');
    assert.deepEqual(reviewer.privileges.sort(), ['collection', 'download', 'upload']);
    // A second role of the same name: the API's answer lands on the name field.
    await page.click('#role-new');
    await page.fill('#role-name', 'Reviewers');
    await page.click('#role-save');
    await page.waitForSelector('#role-name[aria-invalid="true"]');
    assert.match((await page.textContent('#role-name-error')) ?? '', /already exists/);
    await page.click('#role-form >> text=Cancel');
    await page.click('button[aria-label="Edit role Reviewers"]');
    await page.click('#role-delete');
    await page.click('#role-delete-yes');
    await page.waitForSelector('#roles-notice >> text=Role "Reviewers" deleted.');
    assert.equal(
      (await admin<Role[]>('GET', '/v1/roles')).find((r) => r.id === reviewer.id),
      undefined,
    );
  });

  it('creates, renames and deletes a group, and grants it permissions in a security template grid', async () => {
    const { page } = browser;
    await page.fill('#group-name', 'Photographers');
    await page.click('#group-create');
    await page.waitForSelector('#groups >> text=Photographers');
    await page.click('button[aria-label="Rename Photographers"]');
    await page.fill('#group-rename', 'Photo desk');
    await page.click('#group-rename-save');
    await page.waitForSelector('#groups >> text=Photo desk');
    const group = (await admin<{ groupId: string; groupName: string }[]>('GET', '/v1/security/groups')).find(
      (g) => g.groupName === 'Photo desk',
    )!;
    // A template: Everyone may view, the photo desk may view and download.
    await page.click('#template-new');
    await page.fill('#template-name', 'Press kit');
    await page.check('input[aria-label="Everyone: View"]');
    await page.check('input[aria-label="Photo desk: View"]');
    await page.check('input[aria-label="Photo desk: Download"]');
    await screenshot(page, 'admin-20-people-template-grid', true);
    assert.deepEqual(await axe(page), []);
    await page.click('#template-save');
    await page.waitForSelector('#templates-notice >> text=Security template "Press kit" saved.');
    type Tpl = {
      templateId: string;
      templateName: string;
      securityDenormalized: { groupId: string; permissions: string[] }[];
    };
    let kit = (await admin<Tpl[]>('GET', '/v1/security/template')).find((x) => x.templateName === 'Press kit')!;
    assert.equal(kit.securityDenormalized.find((g) => g.groupId === group.groupId)?.permissions.length, 2);
    // Edit: the photo desk may edit metadata too; Everyone no longer views.
    await page.click('button[aria-label="Edit security template Press kit"]');
    await page.check('input[aria-label="Photo desk: Edit Metadata"]');
    await page.uncheck('input[aria-label="Everyone: View"]');
    await page.click('#template-save');
    await page.waitForSelector('#templates-notice >> text=Security template "Press kit" saved.');
    kit = (await admin<Tpl[]>('GET', '/v1/security/template')).find((x) => x.templateId === kit.templateId)!;
    assert.equal(kit.securityDenormalized.find((g) => g.groupId === group.groupId)?.permissions.length, 3);
    const everyone = (await admin<{ groupId: string; groupName: string }[]>('GET', '/v1/security/groups')).find(
      (g) => g.groupName === 'Everyone',
    )!;
    assert.equal(kit.securityDenormalized.find((g) => g.groupId === everyone.groupId)?.permissions.length ?? 0, 0);
    await page.click('button[aria-label="Edit security template Press kit"]');
    await page.click('#template-delete');
    await page.click('#template-delete-yes');
    await page.waitForSelector('#templates-notice >> text=Security template "Press kit" deleted.');
    await page.click('button[aria-label="Delete Photo desk"]');
    await page.click('#group-delete-yes');
    await page.waitForSelector('#groups-notice >> text=Group "Photo desk" deleted.');
    assert.equal(
      (await admin<{ groupName: string }[]>('GET', '/v1/security/groups')).some((g) => g.groupName === 'Photo desk'),
      false,
    );
    await screenshot(page, 'admin-21-people', true);
    assert.deepEqual(await axe(page), []);
  });

  it('fits a phone and the dark theme', async () => {
    const { page } = browser;
    await page.click('button[aria-label^="Switch to dark"]');
    await page.setViewportSize({ width: 390, height: 800 });
    await page.click('#template-new');
    await page.waitForSelector('#template-grid');
    await screenshot(page, 'admin-22-people-phone-dark', true);
    assert.deepEqual(await axe(page), []);
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.click('button[aria-label^="Switch to light"]');
    assert.deepEqual(browser.problems, []);
  });

  it('shows the privilege ceiling: a people administrator cannot grant or change what they do not hold', async () => {
    const other = await openBrowser();
    try {
      await signIn(other.page, server.url, PEOPLE_ADMIN);
      await other.page.goto(`${server.url}/app/admin/people`);
      await other.page.waitForSelector('#roles >> li:has-text("Administrator") >> text=holds privileges you lack');
      // The administrator is above them: no Manage; a role above them cannot be given.
      await other.page.waitForSelector('#users tr:has-text("(admin)") >> text=Holds privileges you lack');
      await other.page.waitForSelector('#users tr:has-text("(viewer-people)") >> text=Holds privileges you lack');
      await other.page.click('#user-new');
      const option = (label: string) =>
        other.page.$eval(
          '#user-role',
          (select, wanted) =>
            [...(select as HTMLSelectElement).options].find((o) => o.text.startsWith(wanted))?.disabled,
          label,
        );
      assert.equal(await option('Administrator'), true);
      assert.equal(await option('People administrator'), false);
      await other.page.click('#user-form >> text=Cancel');
      assert.equal(await other.page.$('button[aria-label="Edit role Administrator"]'), null);
      await other.page.click('#role-new');
      const purge = other.page.locator('#role-form label:has-text("Purge") input');
      assert.equal(await purge.isDisabled(), true);
      assert.match((await other.page.textContent('#role-form label:has-text("Purge")')) ?? '', /you do not hold it/);
      assert.equal(await other.page.locator('#role-form label:has-text("Upload") input').isDisabled(), false);
      await screenshot(other.page, 'admin-23-people-ceiling', true);
      assert.deepEqual(await axe(other.page), []);
      // The API agrees.
      const asPeople = await apiAs(server.url, PEOPLE_ADMIN);
      await asPeople('POST', '/v1/roles', { name: 'Sneaky', privileges: ['purge'] }, 403);
      assert.deepEqual(other.problems, []);
    } finally {
      await other.close();
    }
  });

  it('shows a caller without the privileges what they may not do, before any click', async () => {
    const viewer = await openBrowser({ width: 390, height: 800 });
    try {
      await signIn(viewer.page, server.url, VIEWER);
      await viewer.page.goto(`${server.url}/app/admin/people`);
      await viewer.page.waitForSelector('text=You may not manage users: it takes the User Management privilege');
      await viewer.page.waitForSelector('text=You may not manage roles: it takes the Role Management');
      await viewer.page.waitForSelector('text=You may not manage groups: it takes the User Management privilege');
      await viewer.page.waitForSelector(
        'text=You may not manage security templates: it takes the Security Template Management privilege',
      );
      for (const form of ['#role-new', '#group-form', '#template-new'])
        assert.equal(await viewer.page.$(form), null, form);
      await screenshot(viewer.page, 'admin-24-people-refused', true);
      assert.deepEqual(await axe(viewer.page), []);
      const asViewer = await apiAs(server.url, VIEWER);
      await asViewer('POST', '/v1/security/groups', { groupName: 'Nope' }, 403);
      assert.deepEqual(viewer.problems, []);
    } finally {
      await viewer.close();
    }
  });
});
