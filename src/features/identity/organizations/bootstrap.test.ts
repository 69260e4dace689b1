import assert from 'node:assert/strict';
import { it } from 'node:test';
import { bootstrapFirstOrganization } from './bootstrap.ts';
import { seedOrganizationMetadata } from '../../metadata/index.ts';
import { verifyPassword } from '../passwords/password.ts';
import { createTestContext, forEachEngine } from '../../../../test/helpers/context.ts';
import { createDeps } from '../../../deps.ts';
import { createLog } from '../../../core/log.ts';

forEachEngine('first-start bootstrap', (ctx) => {
  it('creates the first organization and an administrator with every privilege, once', async () => {
    const deps = {
      ...ctx().deps,
      config: { ...ctx().config, adminUsername: 'root', adminPassword: 'a sturdy passphrase' },
    };
    const first = await bootstrapFirstOrganization(deps, seedOrganizationMetadata);
    assert.equal(first.created, true);
    assert.ok(first.created && first.generatedPassword === undefined);
    const user = await deps.db
      .selectFrom('users')
      .innerJoin('roles', 'roles.id', 'users.role_id')
      .select(['users.password_hash', 'users.org_id', 'roles.privileges'])
      .where('username_key', '=', 'root')
      .executeTakeFirstOrThrow();
    assert.ok(await verifyPassword(user.password_hash!, 'a sturdy passphrase'));
    assert.ok(JSON.parse(user.privileges).includes('impersonate'));
    const again = await bootstrapFirstOrganization(deps, seedOrganizationMetadata);
    assert.equal(again.created, false);
    const orgs = await deps.db.selectFrom('organizations').select('id').execute();
    assert.equal(orgs.length, 1);
  });
});

forEachEngine('first-start bootstrap without configured credentials', (ctx) => {
  it('generates a strong password, returned once, and never re-creates', async () => {
    const result = await bootstrapFirstOrganization(ctx().deps, seedOrganizationMetadata);
    assert.ok(result.created);
    if (!result.created) return;
    assert.equal(result.username, 'admin');
    assert.ok(result.generatedPassword && result.generatedPassword.length >= 20);
    const row = await ctx()
      .deps.db.selectFrom('users')
      .select('password_hash')
      .where('username_key', '=', 'admin')
      .executeTakeFirstOrThrow();
    assert.ok(await verifyPassword(row.password_hash!, result.generatedPassword));
    // A restart (a new process on the same database) does nothing.
    const restarted = createDeps(ctx().config, { log: createLog('silent') });
    try {
      assert.deepEqual(await bootstrapFirstOrganization(restarted, seedOrganizationMetadata), { created: false });
    } finally {
      await restarted.close();
    }
  });
});

forEachEngine('concurrent first starts', (ctx) => {
  it('several instances starting at once create exactly one organization', async () => {
    const instances = await Promise.all(Array.from({ length: 4 }, () => ctx().secondInstance()));
    const results = await Promise.all(
      [ctx().deps, ...instances.map((i) => i.deps)].map((deps) =>
        bootstrapFirstOrganization(deps, seedOrganizationMetadata),
      ),
    );
    assert.equal(results.filter((r) => r.created).length, 1);
    assert.equal((await ctx().deps.db.selectFrom('organizations').select('id').execute()).length, 1);
  });
});

it('createTestContext leaves an empty database (no organization) for bootstrap to fill', async () => {
  const ctx = await createTestContext('sqlite');
  try {
    assert.equal((await ctx.deps.db.selectFrom('organizations').select('id').execute()).length, 0);
  } finally {
    await ctx.close();
  }
});
