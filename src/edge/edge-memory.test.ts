import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, it } from 'node:test';
import { Client } from 'undici';
import { forEachEngine } from '../../test/helpers/context.ts';
import { createTestOrg, type TestOrg } from '../../test/helpers/factories.ts';
import { makeZone, startEdge, TestOrigin, unique } from '../../test/helpers/cdn.ts';

forEachEngine('CDN edge: bounded memory (large objects, rate buckets), keep-alive connections', (ctx) => {
  const origin = new TestOrigin();
  let edge: Awaited<ReturnType<typeof startEdge>>;
  let org: TestOrg;
  before(async () => {
    await origin.start();
    // Memory tier of 1 MiB: objects above 256 KiB live on disk only and are sent from there in chunks.
    edge = await startEdge(ctx(), { memoryMaxBytes: 1024 * 1024 });
    org = await createTestOrg(ctx());
  });
  after(async () => {
    await edge.close();
    await origin.close();
  });
  const get = (path: string, headers: Record<string, string> = {}, method = 'GET') =>
    fetch(`${edge.url}${path}`, { method, headers });
  const bytes = async (res: Response) => Buffer.from(await res.arrayBuffer());

  it('a big object is sent from disk: whole, byte ranges, suffix ranges, 416, If-Range, HEAD, 304; purge still wins', async () => {
    const zone = await makeZone(ctx(), org, origin);
    const data = randomBytes(1536 * 1024 + 7);
    origin.set('/big.bin', data, {
      'cache-control': 'max-age=600',
      etag: '"b1"',
      'content-type': 'application/octet-stream',
    });
    const p = `/${zone.name}/big.bin`;
    const miss = await get(p);
    assert.equal(miss.headers.get('cdn-cache'), 'MISS');
    assert.ok((await bytes(miss)).equals(data));

    const hit = await get(p);
    assert.equal(hit.headers.get('cdn-cache'), 'HIT');
    assert.equal(hit.headers.get('content-length'), String(data.length));
    assert.ok((await bytes(hit)).equals(data));

    const range = await get(p, { range: 'bytes=300000-999999' });
    assert.equal(range.status, 206);
    assert.equal(range.headers.get('content-range'), `bytes 300000-999999/${data.length}`);
    assert.ok((await bytes(range)).equals(data.subarray(300000, 1000000)));
    const suffix = await get(p, { range: 'bytes=-10' });
    assert.equal(suffix.status, 206);
    assert.ok((await bytes(suffix)).equals(data.subarray(data.length - 10)));
    const beyond = await get(p, { range: `bytes=${data.length}-` });
    assert.equal(beyond.status, 416);
    assert.equal(beyond.headers.get('content-range'), `bytes */${data.length}`);
    await beyond.arrayBuffer();
    const staleRange = await get(p, { range: 'bytes=0-9', 'if-range': '"old"' });
    assert.equal(staleRange.status, 200);
    assert.equal((await bytes(staleRange)).length, data.length);

    const head = await get(p, {}, 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-length'), String(data.length));
    assert.equal((await bytes(head)).length, 0);
    const conditional = await get(p, { 'if-none-match': '"b1"' });
    assert.equal(conditional.status, 304);
    await conditional.arrayBuffer();
    assert.equal(origin.count('/big.bin'), 1);

    // Never held in memory: the memory tier stays empty.
    const health = (await (await fetch(`${edge.edge.controlUrl}/health`)).json()) as {
      bytes: { memory: number; disk: number };
    };
    assert.equal(health.bytes.memory, 0);
    assert.ok(health.bytes.disk >= data.length);

    const purged = await ctx().inject({
      method: 'POST',
      url: `/v1/cdn/pullzones/${zone.id}/purge`,
      headers: org.admin.headers,
      payload: { everything: true },
    });
    assert.equal(purged.statusCode, 200, purged.body);
    const after = await get(p, { range: 'bytes=0-99' });
    assert.equal(after.headers.get('cdn-cache'), 'MISS');
    assert.ok((await bytes(after)).equals(data.subarray(0, 100)));
    assert.equal(origin.count('/big.bin'), 2);
  });

  it('request-rate buckets that refilled to their cap are dropped at the next sync (the map holds only recent IPs)', async () => {
    const zone = await makeZone(ctx(), org, origin, { requestLimit: 1000, burstSize: 0 });
    origin.set('/rb', 'x', { 'cache-control': 'max-age=600' });
    const health = async () =>
      ((await (await fetch(`${edge.edge.controlUrl}/health`)).json()) as { rateBuckets: number }).rateBuckets;
    for (const ip of ['198.51.100.20', '198.51.100.21', '198.51.100.22'])
      assert.equal((await get(`/${zone.name}/rb`, { 'x-forwarded-for': ip })).status, 200);
    assert.equal(await health(), 3);
    await new Promise((r) => setTimeout(r, 20)); // one request's token comes back after 1 ms at 1000/s
    await edge.edge.sync({});
    assert.equal(await health(), 0);
    // Limits still apply afterwards: a fresh bucket starts full.
    assert.equal((await get(`/${zone.name}/rb`, { 'x-forwarded-for': '198.51.100.20' })).status, 200);
    assert.equal(await health(), 1);
  });

  it('a keep-alive connection sees a hostname added to a zone (the route it remembered is dropped on reload)', async () => {
    const zone = await makeZone(ctx(), org, origin);
    origin.set('/k.txt', 'keep', { 'cache-control': 'max-age=600' });
    const host = `k${unique()}.example.test`;
    const client = new Client(edge.url); // one connection for every request below
    try {
      const before = await client.request({ path: '/k.txt', method: 'GET', headers: { host } });
      assert.equal(before.statusCode, 404);
      await before.body.text();
      const res = await ctx().inject({
        method: 'PATCH',
        url: `/v1/cdn/pullzones/${zone.id}`,
        headers: org.admin.headers,
        payload: { hostnames: [host] },
      });
      assert.equal(res.statusCode, 200, res.body);
      for (let i = 0; i < 2; i++) {
        const now = await client.request({ path: '/k.txt', method: 'GET', headers: { host } });
        assert.equal(now.statusCode, 200);
        assert.equal(await now.body.text(), 'keep');
      }
      const other = await client.request({
        path: `/${zone.name}/k.txt`,
        method: 'GET',
        headers: { host: 'unknown.example.test' },
      });
      assert.equal(other.statusCode, 200);
      assert.equal(await other.body.text(), 'keep');
    } finally {
      await client.close();
    }
  });
});
