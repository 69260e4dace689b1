import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createTestContext, ENGINES } from './helpers/context.ts';
import { startS3 } from './helpers/s3.ts';

describe('readiness with S3 storage', () => {
  it('is ready when the S3 bucket answers and 503 when it does not', async () => {
    const s3 = await startS3();
    const env = {
      TESSERA_STORAGE: `s3://${s3.bucket}?endpoint=${s3.endpoint}&region=us-east-1`,
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
    };
    const ctx = await createTestContext('sqlite', { env });
    try {
      assert.equal(ctx.deps.blobs.kind, 's3');
      const ready = await ctx.inject({ method: 'GET', url: '/readyz' });
      assert.equal(ready.statusCode, 200, ready.body);
      await s3.close();
      const down = await ctx.inject({ method: 'GET', url: '/readyz' });
      assert.equal(down.statusCode, 503);
      assert.equal(down.json().code, 'service_unavailable');
      assert.match(down.json().message, /storage/);
      assert.equal((await ctx.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
    } finally {
      await ctx.close();
    }
  });
});

describe('readiness is honest about the disk', () => {
  for (const engine of ENGINES) {
    it(`503 naming disk_writable when the blob directory cannot be written, disk_space below the threshold; /healthz stays 200 [${engine.name}]`, {
      skip: engine.skip,
    }, async () => {
      const ctx = await createTestContext(engine.name);
      const tight = await createTestContext(engine.name, {
        // More free space than any disk has: the real free space is below the threshold.
        env: { TESSERA_READY_MIN_FREE_BYTES: String(Number.MAX_SAFE_INTEGER) },
      });
      try {
        const ready = await ctx.inject({ method: 'GET', url: '/readyz' });
        assert.equal(ready.statusCode, 200, ready.body);
        assert.deepEqual(ready.json().checks, { database: 'ok', storage: 'ok', disk_writable: 'ok', disk_space: 'ok' });

        // Root passes permission checks, so the blob directory is replaced by a file: no write can land there.
        const blobs = join(ctx.dataDir, 'blobs');
        rmSync(blobs, { recursive: true, force: true });
        writeFileSync(blobs, 'not a directory');
        const unwritable = await ctx.inject({ method: 'GET', url: '/readyz' });
        assert.equal(unwritable.statusCode, 503, unwritable.body);
        assert.equal(unwritable.json().code, 'service_unavailable');
        const fields = unwritable.json().details.map((d: { field: string }) => d.field);
        assert.ok(fields.includes('checks.disk_writable'), unwritable.body);
        assert.doesNotMatch(unwritable.body, new RegExp(ctx.dataDir), 'no path is shown');
        assert.equal((await ctx.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
        rmSync(blobs, { force: true });
        mkdirSync(blobs);
        assert.equal((await ctx.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);

        const full = await tight.inject({ method: 'GET', url: '/readyz' });
        assert.equal(full.statusCode, 503, full.body);
        assert.deepEqual(
          full.json().details.map((d: { field: string }) => d.field),
          ['checks.disk_space', 'checks.disk_space'],
        );
        assert.match(full.json().message, /TESSERA_READY_MIN_FREE_BYTES/);
        assert.equal((await tight.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
      } finally {
        await ctx.close();
        await tight.close();
      }
    });
  }
});
