import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { connectDb } from '../src/core/db/connect.ts';
import { verifyPassword } from '../src/features/identity/index.ts';

describe('CLI (tessera …)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'tessera-cli-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));
  const run = (...args: string[]) => {
    const env: Record<string, string | undefined> = {
      ...process.env,
      TESSERA_DATA_DIR: dataDir,
      TESSERA_LOG_LEVEL: 'silent',
    };
    delete env.DATABASE_URL;
    return spawnSync(process.execPath, ['bin/tessera.mjs', ...args], { env, encoding: 'utf8', timeout: 60_000 });
  };

  it('migrate brings an empty database up to date', () => {
    const res = run('migrate');
    assert.equal(res.status, 0, res.stderr);
    assert.match(res.stdout, /up to date/);
  });

  it('org create and user create make working accounts', async () => {
    const org = run(
      'org',
      'create',
      '--name',
      'Acme',
      '--admin-username',
      'acme-admin',
      '--admin-email',
      'admin@acme.test',
      '--admin-password',
      'acme admin pass',
    );
    assert.equal(org.status, 0, org.stderr);
    assert.match(org.stdout, /Created organization/);
    const user = run(
      'user',
      'create',
      '--org',
      'Acme',
      '--username',
      'wile',
      '--email',
      'wile@acme.test',
      '--password',
      'coyote genius 1',
      '--role',
      'Editor',
    );
    assert.equal(user.status, 0, user.stderr);
    const handle = connectDb({ kind: 'sqlite', file: join(dataDir, 'tessera.sqlite') });
    try {
      const row = await handle.db
        .selectFrom('users')
        .innerJoin('roles', 'roles.id', 'users.role_id')
        .select(['users.password_hash', 'roles.name'])
        .where('username_key', '=', 'wile')
        .executeTakeFirstOrThrow();
      assert.equal(row.name, 'Editor');
      assert.ok(await verifyPassword(row.password_hash!, 'coyote genius 1'));
    } finally {
      await handle.close();
    }
  });

  it('explains mistakes with exit code 2', () => {
    for (const args of [
      ['user', 'create', '--org', 'Nope', '--username', 'x', '--email', 'x@x.test', '--password', 'long enough 1'],
      ['org', 'create', '--name', 'X'],
      ['frobnicate'],
      ['user', 'create', '--bogus'],
    ]) {
      const res = run(...args);
      assert.equal(res.status, 2, `${args.join(' ')}: ${res.stdout}${res.stderr}`);
      assert.match(res.stderr, /Usage: tessera/);
    }
    const dup = run(
      'user',
      'create',
      '--org',
      'Acme',
      '--username',
      'WILE',
      '--email',
      'w@acme.test',
      '--password',
      'coyote genius 2',
    );
    assert.equal(dup.status, 2);
    assert.match(dup.stderr, /already taken/);
  });

  it('help prints the usage', () => {
    const res = run('help');
    assert.equal(res.status, 0);
    assert.match(res.stdout, /serve/);
  });

  it('with no arguments prints the help (serving is `tessera serve`)', () => {
    const res = run();
    assert.equal(res.status, 0, res.stderr);
    assert.match(res.stdout, /Usage: tessera/);
    assert.match(res.stdout, /serve .*migrate, then serve/);
    assert.match(res.stdout, /reset-password/);
  });
});
