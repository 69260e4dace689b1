import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { createTestContext, json, type TestContext } from './helpers/context.ts';
import { createPgDatabase, postgresProblem } from './helpers/engines.ts';
import { createTestOrg } from './helpers/factories.ts';
import { assertSameInstallation, populate, runTessera, sha256, type Populated } from './helpers/installation.ts';
import { startS3 } from './helpers/s3.ts';

/**
 * `tessera migrate-to-postgres` (docs/operations.md › Moving to PostgreSQL and S3): a populated
 * embedded installation moved into a fresh PostgreSQL database and a real S3-protocol server, then
 * served from there. The source is SQLite by definition; the target is PostgreSQL.
 */
const skip = await postgresProblem();

describe('tessera migrate-to-postgres', { skip }, () => {
  const scratch = mkdtempSync(join(tmpdir(), 'tessera-move-'));
  let source: TestContext;
  let populated: Populated;
  let s3: Awaited<ReturnType<typeof startS3>>;
  let target: Awaited<ReturnType<typeof createPgDatabase>>;
  let moved: TestContext | undefined;
  let storage: string;
  const s3Env = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' };

  before(async () => {
    source = await createTestContext('sqlite');
    populated = await populate(source, await createTestOrg(source));
    s3 = await startS3();
    target = await createPgDatabase();
    storage = `s3://${s3.bucket}/moved?endpoint=${s3.endpoint}&region=us-east-1`;
  });
  after(async () => {
    await moved?.close();
    await source?.close();
    await target?.drop();
    await s3?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('moves every row and every blob, verifies them, and Tessera serves the same installation from PostgreSQL and S3', async () => {
    const res = await runTessera(['migrate-to-postgres', '--to', target.url, '--storage', storage], {
      TESSERA_DATA_DIR: source.dataDir,
      ...s3Env,
    });
    assert.equal(res.status, 0, `${res.stdout}\n${res.stderr}`);
    assert.match(res.stdout, /Every record and every blob verified/);
    assert.doesNotMatch(res.stdout, /MISMATCH|MISSING/);
    for (const table of ['assets', 'users', 'collections', 'storyboards', 'webhook_endpoints', 'audit_log'])
      assert.match(res.stdout, new RegExp(`ok +${table}: [1-9]\\d* row\\(s\\)`), table);

    // Every row of every copied table, compared value by value with the source.
    const client = new pg.Client({ connectionString: target.url });
    await client.connect();
    try {
      for (const table of ['assets', 'users', 'collection_members', 'storyboards', 'metadata_attributes']) {
        const want = await source.deps.db
          .selectFrom(table as 'assets')
          .selectAll()
          .execute();
        const got = (await client.query(`select * from ${table}`)).rows;
        assert.equal(got.length, want.length, table);
        const key = (r: Record<string, unknown>) =>
          JSON.stringify(Object.entries(r).sort(), (_k, v) => (v === null ? null : String(v)));
        assert.deepEqual(new Set(got.map(key)), new Set(want.map(key)), table);
      }
    } finally {
      await client.end();
    }

    // Every blob byte-identical in the bucket (read through the S3 protocol).
    const { createBlobStore } = await import('../src/core/storage/index.ts');
    const { parseStorageSetting } = await import('../src/config.ts');
    const bucket = createBlobStore(parseStorageSetting(storage, scratch, s3Env));
    const { listBlobKeys, digestFile } = await import('../src/core/backup/files.ts');
    const local = join(source.dataDir, 'blobs');
    const keys = await listBlobKeys(local);
    assert.ok(keys.length > populated.assets.length);
    for (const key of keys) {
      const body = await bucket.get(key);
      assert.ok(body, key);
      const chunks: Buffer[] = [];
      for await (const chunk of body) chunks.push(chunk as Buffer);
      assert.equal(sha256(Buffer.concat(chunks)), (await digestFile(join(local, key))).sha256, key);
    }

    moved = await createTestContext('sqlite', {
      env: { DATABASE_URL: target.url, TESSERA_STORAGE: storage, TESSERA_DATA_DIR: join(scratch, 'moved'), ...s3Env },
    });
    assert.equal(moved.deps.engine, 'postgres');
    await assertSameInstallation(source, moved, populated);
    // The search index was rebuilt on PostgreSQL: the same searches find the same assets.
    for (const searchTerm of [['*'], ['harbour'], ['look']]) {
      const found = async (ctx: TestContext) => {
        const res = await ctx.inject({
          method: 'POST',
          url: '/v1/search/keyword',
          headers: populated.org.admin.headers,
          payload: { searchTerm },
        });
        assert.equal(res.statusCode, 200, res.body);
        return [...new Set((json(res).result as { objectId: string }[]).map((h) => h.objectId))].sort();
      };
      const want = await found(source);
      assert.ok(want.length > 0, `source finds ${searchTerm}`);
      assert.deepEqual(await found(moved), want, `search ${searchTerm}`);
    }
  });

  it('refuses a target database that is not empty', async () => {
    const res = await runTessera(['migrate-to-postgres', '--to', target.url], { TESSERA_DATA_DIR: source.dataDir });
    assert.equal(res.status, 1);
    assert.match(res.stderr, /already has \d+ table\(s\).*new, empty database/);
  });

  it('moves the blobs into another folder with --storage file:…', async () => {
    const other = await createPgDatabase();
    try {
      const dir = mkdtempSync(join(scratch, 'folder-'));
      const res = await runTessera(['migrate-to-postgres', '--to', other.url, '--storage', `file:${dir}`], {
        TESSERA_DATA_DIR: source.dataDir,
      });
      assert.equal(res.status, 0, `${res.stdout}\n${res.stderr}`);
      assert.match(res.stdout, new RegExp(`read back from ${dir} with the same SHA-256`));
      const { listBlobKeys } = await import('../src/core/backup/files.ts');
      assert.deepEqual(await listBlobKeys(dir), await listBlobKeys(join(source.dataDir, 'blobs')));
    } finally {
      await other.drop();
    }
  });

  it('reports content it could not move and exits 1 (last: it removes a blob from the source)', async () => {
    const row = await source.deps.db
      .selectFrom('assets')
      .select(['id', 'blob_key'])
      .where('id', '=', populated.assets[0]!.objectId)
      .executeTakeFirstOrThrow();
    rmSync(join(source.dataDir, 'blobs', row.blob_key!));
    const other = await createPgDatabase();
    try {
      const res = await runTessera(
        ['migrate-to-postgres', '--to', other.url, '--storage', `file:${join(scratch, 'gap')}`],
        {
          TESSERA_DATA_DIR: source.dataDir,
        },
      );
      assert.equal(res.status, 1, res.stdout);
      assert.ok(res.stdout.includes(`MISSING  blob ${row.blob_key} of asset ${row.id}`), res.stdout);
      assert.match(res.stdout, /does NOT match/);
    } finally {
      await other.drop();
    }
  });

  it('explains usage mistakes with exit code 2', async () => {
    const none = await runTessera(['migrate-to-postgres'], { TESSERA_DATA_DIR: source.dataDir });
    assert.equal(none.status, 2);
    assert.match(none.stderr, /--to is required/);
    const bad = await runTessera(['migrate-to-postgres', '--to', 'mysql://x/y'], { TESSERA_DATA_DIR: source.dataDir });
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--to must be a postgres:\/\/ URL/);
    const badStorage = await runTessera(['migrate-to-postgres', '--to', target.url, '--storage', 'ftp://x'], {
      TESSERA_DATA_DIR: source.dataDir,
    });
    assert.equal(badStorage.status, 2);
    assert.match(badStorage.stderr, /--storage must be s3:\/\//);
  });
});
