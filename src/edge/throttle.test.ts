import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { createTestContext, json, type TestContext } from '../../test/helpers/context.ts';
import { createTestOrg } from '../../test/helpers/factories.ts';
import { startEdge, TestOrigin } from '../../test/helpers/cdn.ts';

// The throttle does not touch the database, so one engine is enough for this 10-second measurement.
describe('CDN per-connection speed limit', () => {
  let ctx: TestContext;
  const origin = new TestOrigin();
  let edge: Awaited<ReturnType<typeof startEdge>>;
  before(async () => {
    ctx = await createTestContext('sqlite');
    await origin.start();
    edge = await startEdge(ctx);
  });
  after(async () => {
    await edge.close();
    await origin.close();
    await ctx.close();
  });

  it('sends limitRateAfter bytes at once, then limitRatePerSecond (within ±5% over 10 s)', async () => {
    const org = await createTestOrg(ctx);
    const after = 50_000;
    const rate = 100_000;
    const size = after + 10 * rate;
    const zone = json(
      await ctx.inject({
        method: 'POST',
        url: '/v1/cdn/pullzones',
        headers: org.admin.headers,
        payload: { name: `thr-${Date.now()}`, originUrl: origin.url, limitRateAfter: after, limitRatePerSecond: rate },
      }),
    );
    origin.set('/big.bin', Buffer.alloc(size, 7), {
      'cache-control': 'max-age=600',
      'content-type': 'application/octet-stream',
    });
    // Warm the cache so only the edge → client leg is measured.
    const warm = await request(`${edge.url}/${zone.name}/big.bin`, { method: 'HEAD' });
    await warm.body.arrayBuffer();
    const res = await request(`${edge.url}/${zone.name}/big.bin`);
    let received = 0;
    let firstPartAt = 0;
    const started = performance.now();
    for await (const chunk of res.body) {
      received += (chunk as Buffer).length;
      if (firstPartAt === 0 && received >= after) firstPartAt = performance.now();
    }
    const total = (performance.now() - started) / 1000;
    assert.equal(received, size);
    assert.ok(firstPartAt - started < 500, `the first ${after} bytes took ${firstPartAt - started} ms`);
    const expected = (size - after) / rate;
    assert.ok(Math.abs(total - expected) / expected <= 0.05, `took ${total.toFixed(3)} s, expected ${expected} s ±5%`);
  });
});
