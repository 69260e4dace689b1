import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createTestContext } from './helpers/context.ts';
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
