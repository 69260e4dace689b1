import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createTestOrg } from './helpers/factories.ts';
import { createAsset, jpeg, uploadAsset } from './helpers/assets.ts';
import {
  assertSameInstallation,
  manifestOf,
  populate,
  runTessera,
  sha256,
  type Populated,
} from './helpers/installation.ts';

/**
 * `tessera backup` and `tessera restore` (docs/operations.md › Backup and restore), run as an
 * operator runs them: in their own processes, beside an installation that keeps serving writes.
 */
describe('tessera backup / restore', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'tessera-backup-'));
  const backupDir = join(scratch, 'backup');
  const restoredDir = join(scratch, 'restored');
  let ctx: TestContext;
  let populated: Populated;
  let restored: TestContext | undefined;
  const liveIds: string[] = [];

  before(async () => {
    ctx = await createTestContext('sqlite');
    populated = await populate(ctx, await createTestOrg(ctx));
  });
  after(async () => {
    await restored?.close();
    await ctx?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('backs up while the installation serves writes, with every blob and its SHA-256 in the manifest', async () => {
    const org = populated.org;
    const backup = runTessera(['backup', '--out', backupDir], { TESSERA_DATA_DIR: ctx.dataDir });
    let done = false;
    void backup.finally(() => (done = true));
    // Writes go on while the backup runs: new assets with content, edits.
    let writes = 0;
    const photo = await jpeg(40, 30);
    while (!done || writes < 3) {
      const created = await uploadAsset(ctx, org, photo, `during-${writes}.jpg`);
      liveIds.push(created.objectId);
      await createAsset(ctx, org, { filename: `metadata-only-${writes}.txt` });
      writes += 1;
    }
    const res = await backup;
    assert.equal(res.status, 0, res.stderr);
    assert.match(res.stdout, /Backup written to/);
    const manifest = await manifestOf(backupDir);
    assert.equal(manifest.format, 'tessera-backup');
    assert.equal(manifest.secretKey, 'environment');
    assert.deepEqual(manifest.missing, []);
    assert.ok(manifest.migrations.length > 10);
    assert.ok(manifest.tables.assets >= populated.assets.length);
    // Every blob in the manifest is the live store's file, byte for byte.
    assert.ok(manifest.blobs.length > populated.assets.length, 'originals and renditions');
    for (const blob of manifest.blobs) {
      const copy = readFileSync(join(backupDir, 'blobs', blob.key));
      assert.equal(sha256(copy), blob.sha256, blob.key);
      // (An upload's staging object may have moved to its asset's key since: that one is gone.)
      const live = join(ctx.dataDir, 'blobs', blob.key);
      if (existsSync(live)) assert.equal(sha256(readFileSync(live)), blob.sha256, `live ${blob.key}`);
    }
    // Every piece of content the snapshot refers to is in the backup.
    const keys = new Set(manifest.blobs.map((b: { key: string }) => b.key));
    const { openSqlite } = await import('../src/core/backup/sqlite-file.ts');
    const snapshot = openSqlite(join(backupDir, 'tessera.sqlite'));
    try {
      const referenced = snapshot
        .prepare(`select blob_key from assets where blob_key is not null and content_state = 'available'`)
        .all() as { blob_key: string }[];
      assert.ok(referenced.length >= populated.assets.length);
      for (const r of referenced) assert.ok(keys.has(r.blob_key), r.blob_key);
    } finally {
      snapshot.close();
    }
  });

  it('restores into an empty folder, and Tessera started on it serves every record and byte', async () => {
    const res = await runTessera(['restore', '--from', backupDir], { TESSERA_DATA_DIR: restoredDir });
    assert.equal(res.status, 0, res.stderr);
    assert.match(res.stdout, /every SHA-256 verified/);
    const manifest = await manifestOf(backupDir);
    restored = await createTestContext('sqlite', { env: { TESSERA_DATA_DIR: restoredDir } });
    // Every row of every table (the manifest's counts come from the snapshot).
    for (const [table, count] of Object.entries(manifest.tables as Record<string, number>)) {
      const { openSqlite } = await import('../src/core/backup/sqlite-file.ts');
      const db = openSqlite(join(restoredDir, 'tessera.sqlite'));
      try {
        const n = (db.prepare(`select count(*) as n from "${table}"`).get() as { n: number }).n;
        assert.equal(n, count, table);
      } finally {
        db.close();
      }
    }
    // Every blob byte-identical.
    for (const blob of manifest.blobs)
      assert.equal(sha256(readFileSync(join(restoredDir, 'blobs', blob.key))), blob.sha256, blob.key);
    await assertSameInstallation(ctx, restored, populated);
    // Assets written during the backup that the snapshot holds are whole.
    const inSnapshot = await restored.deps.db
      .selectFrom('assets')
      .select(['id', 'sha256', 'blob_key'])
      .where('id', 'in', liveIds)
      .where('content_state', '=', 'available')
      .execute();
    for (const row of inSnapshot)
      assert.equal(sha256(readFileSync(join(restoredDir, 'blobs', row.blob_key!))), row.sha256, row.id);
  });

  it('refuses a folder that already holds an installation unless --force', async () => {
    const res = await runTessera(['restore', '--from', backupDir], { TESSERA_DATA_DIR: restoredDir });
    assert.equal(res.status, 1);
    assert.match(res.stderr, /not empty.*--force/s);
    const target = join(scratch, 'occupied');
    cpSync(restoredDir, target, { recursive: true });
    writeFileSync(join(target, 'blobs', 'stray.bin'), 'left over');
    const forced = await runTessera(['restore', '--from', backupDir, '--force'], { TESSERA_DATA_DIR: target });
    assert.equal(forced.status, 0, forced.stderr);
    assert.equal(existsSync(join(target, 'blobs', 'stray.bin')), false);
  });

  it('refuses a backup with a damaged blob, naming it, and writes nothing', async () => {
    const damaged = join(scratch, 'damaged');
    cpSync(backupDir, damaged, { recursive: true });
    const manifest = await manifestOf(damaged);
    const victim = manifest.blobs.find((b: { key: string }) => b.key.startsWith('renditions/')) ?? manifest.blobs[0];
    const path = join(damaged, 'blobs', victim.key);
    const bytes = readFileSync(path);
    bytes[bytes.length >> 1] ^= 0xff;
    writeFileSync(path, bytes);
    const target = join(scratch, 'from-damaged');
    const res = await runTessera(['restore', '--from', damaged], { TESSERA_DATA_DIR: target });
    assert.equal(res.status, 1);
    assert.ok(res.stderr.includes(`blob ${victim.key} is damaged`), res.stderr);
    assert.equal(existsSync(target) ? readdirSync(target).length : 0, 0);
  });

  it('carries a generated secret key (secret.key) across, so the restored database opens with it', async () => {
    const home = join(scratch, 'keyed');
    const env = { TESSERA_DATA_DIR: home, TESSERA_SECRET_KEY: undefined };
    const org = await runTessera(
      [
        'org',
        'create',
        '--name',
        'Keyed',
        '--admin-username',
        'keyed-admin',
        '--admin-email',
        'k@example.test',
        '--admin-password',
        'keyed admin pass 1',
      ],
      env,
    );
    assert.equal(org.status, 0, org.stderr);
    assert.ok(existsSync(join(home, 'secret.key')));
    const out = join(scratch, 'keyed-backup');
    const backup = await runTessera(['backup', '--out', out], env);
    assert.equal(backup.status, 0, backup.stderr);
    assert.equal((await manifestOf(out)).secretKey, 'file');
    const again = join(scratch, 'keyed-restored');
    const restore = await runTessera(['restore', '--from', out], { ...env, TESSERA_DATA_DIR: again });
    assert.equal(restore.status, 0, restore.stderr);
    assert.equal(readFileSync(join(again, 'secret.key'), 'utf8'), readFileSync(join(home, 'secret.key'), 'utf8'));
    // A process refuses a database initialised with another key: this one opens it.
    const reset = await runTessera(['user', 'reset-password', '--username', 'keyed-admin'], {
      ...env,
      TESSERA_DATA_DIR: again,
    });
    assert.equal(reset.status, 0, reset.stderr);
  });

  it('explains what it cannot do: PostgreSQL, a missing --out, a non-empty --out, --out inside the blobs', async () => {
    const pg = await runTessera(['backup', '--out', join(scratch, 'pg')], {
      TESSERA_DATA_DIR: ctx.dataDir,
      DATABASE_URL: 'postgres://tessera@127.0.0.1:1/tessera',
    });
    assert.equal(pg.status, 1);
    assert.match(pg.stderr, /pg_dump.*docs\/operations\.md/);
    const missing = await runTessera(['backup'], { TESSERA_DATA_DIR: ctx.dataDir });
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /--out is required/);
    const full = await runTessera(['backup', '--out', backupDir], { TESSERA_DATA_DIR: ctx.dataDir });
    assert.equal(full.status, 1);
    assert.match(full.stderr, /is not empty/);
    const inside = await runTessera(['backup', '--out', join(ctx.dataDir, 'blobs', 'backup')], {
      TESSERA_DATA_DIR: ctx.dataDir,
    });
    assert.equal(inside.status, 1);
    assert.match(inside.stderr, /inside the blob folder/);
  });
});
