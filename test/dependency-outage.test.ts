// Issue 28, item 0: a dependency outage is a 503 with Retry-After, never a 500 or a hang, and
// cached credentials fail closed when the database cannot confirm they are current. PostgreSQL is
// reached through a TCP proxy on loopback that the test hangs (no reset, no reply) or cuts; the
// S3-protocol server (s3rver) is stopped, or hung behind the same kind of proxy.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { revisionFeed } from '../src/core/db/revision.ts';
import { createTestContext, ENGINES, type TestContext } from './helpers/context.ts';
import { createPgDatabase } from './helpers/engines.ts';
import { createKey } from './helpers/api-keys.ts';
import { createTestOrg, type TestOrg } from './helpers/factories.ts';
import { createAsset, jpeg, pathOf } from './helpers/assets.ts';
import { startS3 } from './helpers/s3.ts';
import { startTcpProxy, type TcpProxy } from './helpers/tcp-proxy.ts';

const pgSkip = ENGINES.find((e) => e.name === 'postgres')?.skip;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function assertOutage(res: { statusCode: number; body: string; headers: Record<string, unknown> }, what: RegExp) {
  assert.equal(res.statusCode, 503, res.body);
  assert.equal(res.headers['retry-after'], '5');
  const body = JSON.parse(res.body);
  assert.equal(body.code, 'service_unavailable');
  assert.match(body.message, what);
}

describe('PostgreSQL outage behind a TCP proxy', { skip: pgSkip }, () => {
  let database: { url: string; drop(): Promise<void> };
  let proxy: TcpProxy;
  let ctx: TestContext;
  let org: TestOrg;

  before(async () => {
    database = await createPgDatabase();
    const direct = new URL(database.url);
    proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
    const viaProxy = new URL(database.url);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.port);
    ctx = await createTestContext('postgres', {
      env: {
        DATABASE_URL: viaProxy.toString(),
        TESSERA_DB_STATEMENT_TIMEOUT_MS: '1000',
        TESSERA_DB_CONNECT_TIMEOUT_MS: '1000',
      },
    });
    org = await createTestOrg(ctx);
  });
  after(async () => {
    await ctx?.close();
    await proxy?.close();
    await database?.drop();
  });

  it('a cached API key revoked elsewhere is refused with 503 once the database stops answering, then 401', async () => {
    const key = await createKey(ctx, org);
    const headers = { 'x-api-key': key.key };
    assert.equal((await ctx.inject({ method: 'GET', url: '/v1/user', headers })).statusCode, 200);
    assert.equal((await ctx.inject({ method: 'GET', url: '/v1/user', headers })).statusCode, 200);
    proxy.hang();
    // Another process revokes the key; this one cannot hear of it (its connections are hung).
    const other = new pg.Client({ connectionString: database.url });
    await other.connect();
    try {
      await other.query('update api_keys set revoked_at = $1 where id = $2', [Date.now(), key.id]);
    } finally {
      await other.end();
    }
    await sleep(1500);
    const refused = await ctx.inject({ method: 'GET', url: '/v1/user', headers });
    assertOutage(refused, /database/);
    proxy.resume();
    // Once the database answers again the revocation is seen.
    let status = 0;
    for (let i = 0; i < 200 && status !== 401; i++) {
      status = (await ctx.inject({ method: 'GET', url: '/v1/user', headers })).statusCode;
      if (status !== 401) await sleep(50);
    }
    assert.equal(status, 401);
  });

  it('a database that refuses connections is a 503 with Retry-After, and requests succeed again when it is back', async () => {
    const key = await createKey(ctx, org);
    const headers = { 'x-api-key': key.key };
    assert.equal((await ctx.inject({ method: 'GET', url: '/v1/user', headers })).statusCode, 200);
    proxy.cut();
    await revisionFeed(ctx.deps.db).check();
    assertOutage(await ctx.inject({ method: 'GET', url: '/v1/user', headers }), /database/);
    assertOutage(
      await ctx.inject({ method: 'GET', url: '/v1/metadata/templates', headers: org.admin.headers }),
      /database/,
    );
    proxy.restore();
    let status = 0;
    for (let i = 0; i < 200 && status !== 200; i++) {
      status = (await ctx.inject({ method: 'GET', url: '/v1/user', headers })).statusCode;
      if (status !== 200) await sleep(50);
    }
    assert.equal(status, 200);
  });
});

describe('S3 outage', () => {
  it('a stopped S3-protocol server is a 503 with Retry-After for downloads and upload completion', async () => {
    const s3 = await startS3();
    const ctx = await createTestContext('sqlite', {
      env: {
        TESSERA_STORAGE: `s3://${s3.bucket}?endpoint=${s3.endpoint}&region=us-east-1`,
        AWS_ACCESS_KEY_ID: 'S3RVER',
        AWS_SECRET_ACCESS_KEY: 'S3RVER',
      },
    });
    try {
      const org = await createTestOrg(ctx);
      const first = await createAsset(ctx, org, { filename: 'a.jpg' });
      assert.equal((await fetch(first.url!, { method: 'PUT', body: await jpeg(40, 30) })).status, 200);
      const completed = await ctx.inject({
        method: 'POST',
        url: '/v1/asset/complete',
        headers: org.admin.headers,
        payload: { action: 'complete', fileId: first.fileId },
      });
      assert.equal(completed.statusCode, 200, completed.body);
      const link = (
        await ctx.inject({ method: 'GET', url: `/v1/asset/${first.objectId}/content`, headers: org.admin.headers })
      ).json().presignedURL as string;
      assert.equal((await ctx.inject({ method: 'GET', url: pathOf(link) })).statusCode, 200);
      const second = await createAsset(ctx, org, { filename: 'b.jpg' });

      await s3.close();
      assertOutage(await ctx.inject({ method: 'GET', url: pathOf(link) }), /storage/);
      assertOutage(
        await ctx.inject({
          method: 'POST',
          url: '/v1/asset/complete',
          headers: org.admin.headers,
          payload: { action: 'complete', fileId: second.fileId },
        }),
        /storage/,
      );
    } finally {
      await ctx.close();
      await s3.close();
    }
  });

  it('a hung S3-protocol server fails the call after the request timeout (503), not after the outage', {
    timeout: 120_000,
  }, async () => {
    const s3 = await startS3();
    const endpoint = new URL(s3.endpoint);
    const proxy = await startTcpProxy({ host: endpoint.hostname, port: Number(endpoint.port) });
    const ctx = await createTestContext('sqlite', {
      env: {
        TESSERA_STORAGE: `s3://${s3.bucket}?endpoint=http://127.0.0.1:${proxy.port}&region=us-east-1`,
        AWS_ACCESS_KEY_ID: 'S3RVER',
        AWS_SECRET_ACCESS_KEY: 'S3RVER',
        TESSERA_S3_REQUEST_TIMEOUT_MS: '500',
        TESSERA_S3_CONNECT_TIMEOUT_MS: '500',
      },
    });
    try {
      const org = await createTestOrg(ctx);
      const created = await createAsset(ctx, org, { filename: 'hung.jpg' });
      assert.equal((await fetch(created.url!, { method: 'PUT', body: await jpeg(40, 30) })).status, 200);
      proxy.hang();
      assertOutage(
        await ctx.inject({
          method: 'POST',
          url: '/v1/asset/complete',
          headers: org.admin.headers,
          payload: { action: 'complete', fileId: created.fileId },
        }),
        /storage/,
      );
    } finally {
      proxy.resume();
      await ctx.close();
      await proxy.close();
      await s3.close();
    }
  });
});
