// The CLI's commands in-process on both engines: the same validation as the API, unique organization names.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine } from './helpers/context.ts';
import { orgCreate, UsageError, userCreate, userResetPassword } from '../src/cli.ts';
import { login } from './helpers/auth.ts';

forEachEngine('CLI validation', (ctx) => {
  const refused = async (run: Promise<unknown>, field: RegExp) => {
    await assert.rejects(run, (e: unknown) => e instanceof UsageError && field.test(e.message), String(field));
  };

  it('validates user names, emails and names exactly as the API does', async () => {
    const deps = ctx().deps;
    await orgCreate(deps, [
      '--name',
      'Acme',
      '--admin-username',
      `acme-${ctx().engine}`,
      '--admin-email',
      'admin@acme.test',
      '--admin-password',
      'acme admin pass',
    ]);
    const base = [
      '--org',
      'acme',
      '--username',
      'valid-user',
      '--email',
      'valid@acme.test',
      '--password',
      'coyote genius 9',
    ];
    const set = (flag: string, value: string) => base.map((v, i) => (base[i - 1] === flag ? value : v));
    await refused(userCreate(deps, set('--username', 'has space')), /--username/);
    await refused(userCreate(deps, set('--username', 'x'.repeat(51))), /--username/);
    await refused(userCreate(deps, set('--email', 'not-an-email')), /--email/);
    await refused(userCreate(deps, [...base, '--first-name', 'F'.repeat(51)]), /--first-name/);
    await refused(userCreate(deps, [...base, '--last-name', '']), /--last-name/);
    await refused(userCreate(deps, set('--password', 'short')), /--password/);
    await refused(
      orgCreate(deps, [
        '--name',
        'Bad\u0001Org',
        '--admin-username',
        'bad-admin',
        '--admin-email',
        'x@bad.test',
        '--admin-password',
        'bad admin pass',
      ]),
      /--name/,
    );
    await refused(
      orgCreate(deps, [
        '--name',
        'x'.repeat(101),
        '--admin-username',
        'bad-admin',
        '--admin-email',
        'x@bad.test',
        '--admin-password',
        'bad admin pass',
      ]),
      /--name/,
    );
    await refused(
      orgCreate(deps, [
        '--name',
        'Fine',
        '--admin-username',
        'no spaces allowed',
        '--admin-email',
        'x@fine.test',
        '--admin-password',
        'fine admin pass',
      ]),
      /--admin-username/,
    );
    await refused(
      orgCreate(deps, [
        '--name',
        'Fine',
        '--admin-username',
        'fine-admin',
        '--admin-email',
        'nope',
        '--admin-password',
        'fine admin pass',
      ]),
      /--admin-email/,
    );
    assert.match(await userCreate(deps, base), /Created user/);
    // What the CLI refuses, the API refuses too (same schema).
    const res = await ctx().inject({
      method: 'POST',
      url: '/v1/auth/token',
      payload: { username: 'valid-user', password: 'coyote genius 9' },
    });
    assert.equal(res.statusCode, 200);
  });

  it('organization names are unique, ignoring case', async () => {
    const deps = ctx().deps;
    await orgCreate(deps, [
      '--name',
      'Globex',
      '--admin-username',
      'globex-admin',
      '--admin-email',
      'admin@globex.test',
      '--admin-password',
      'globex admin pass',
    ]);
    await refused(
      orgCreate(deps, [
        '--name',
        'GLOBEX',
        '--admin-username',
        'globex-admin-2',
        '--admin-email',
        'admin2@globex.test',
        '--admin-password',
        'globex admin pass',
      ]),
      /organization named "GLOBEX" already exists/,
    );
    // The database holds the rule too, for writers other than the CLI.
    const now = deps.clock.now();
    await assert.rejects(
      deps.db
        .insertInto('organizations')
        .values({ id: crypto.randomUUID(), name: 'globex', customer_id: '1999999999999', created_at: now })
        .execute(),
    );
    assert.match(
      await userCreate(deps, [
        '--org',
        'gLoBeX',
        '--username',
        'hank',
        '--email',
        'hank@globex.test',
        '--password',
        'hank scorpio 1',
      ]),
      /Created user/,
    );
  });

  it("reset-password ends the user's sessions", async () => {
    const deps = ctx().deps;
    await orgCreate(deps, [
      '--name',
      'Initech',
      '--admin-username',
      'initech-admin',
      '--admin-email',
      'admin@initech.test',
      '--admin-password',
      'initech admin pass',
    ]);
    const session = await login(ctx(), { username: 'initech-admin', password: 'initech admin pass' });
    assert.match(
      await userResetPassword(deps, ['--username', 'initech-admin', '--password', 'a new initech pass']),
      /1 session/,
    );
    assert.equal(
      (await ctx().inject({ method: 'GET', url: '/v1/user', headers: { accesstoken: session.session.accessToken } }))
        .statusCode,
      401,
    );
    assert.equal(
      (await ctx().inject({ method: 'POST', url: '/v1/auth/token', payload: session })).statusCode,
      401,
      'its refresh token too',
    );
    await refused(userResetPassword(deps, ['--username', 'initech-admin', '--password', 'short']), /--password/);
  });
});
