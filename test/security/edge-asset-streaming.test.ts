import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, it } from 'node:test';
import { assetOriginFor } from '../../src/features/cdn/index.ts';
import { zoneConfigFromRow } from '../../src/features/cdn/edge-contract/contract.ts';
import { uploadAsset } from '../helpers/assets.ts';
import { makeZone, startEdge, TestOrigin, unique } from '../helpers/cdn.ts';
import { forEachEngine, json } from '../helpers/context.ts';
import { createTestOrg, type TestOrg } from '../helpers/factories.ts';

// Issue 23, defect 8: the edge read a published asset whole into memory (Buffer.concat) and
// ignored EDGE_MAX_OBJECT_BYTES. Assets beyond the memory tier now stream: to the edge's disk when
// within EDGE_MAX_OBJECT_BYTES, else straight through to the client, uncached.
forEachEngine('security: the edge streams published assets, never reading a big one whole', (ctx) => {
  let edge: Awaited<ReturnType<typeof startEdge>>;
  let org: TestOrg;
  before(async () => {
    // Memory tier 1 MiB (objects above 256 KiB stay out of it); objects above 2 MiB are never stored.
    edge = await startEdge(ctx(), { memoryMaxBytes: 1024 * 1024, maxObjectBytes: 2 * 1024 * 1024 });
    org = await createTestOrg(ctx());
  });
  after(async () => {
    await edge.close();
  });

  const health = async () =>
    (await (await fetch(`${edge.edge.controlUrl}/health`)).json()) as {
      bytes: { memory: number; disk: number };
      largestWholeRead: number;
    };
  /** The response body's SHA-256 and length, read chunk by chunk (the test holds no copy either). */
  const digest = async (res: Response) => {
    const hash = createHash('sha256');
    let length = 0;
    for await (const chunk of res.body!) {
      hash.update(chunk);
      length += chunk.length;
    }
    return { sha: hash.digest('hex'), length };
  };
  const publish = async (content: Buffer, filename: string) => {
    const name = `stream-${unique()}`;
    const zone = json(
      await ctx().inject({
        method: 'POST',
        url: '/v1/cdn/configure',
        headers: org.admin.headers,
        payload: { name, region: 'de', url: `https://${name}.cdn.example.com` },
      }),
    );
    const asset = await uploadAsset(ctx(), org, content, filename);
    const pub = await ctx().inject({
      method: 'POST',
      url: '/v1/cdn/publish',
      headers: org.admin.headers,
      payload: { assets: [asset.objectId], pullZoneId: zone.id },
    });
    assert.equal(pub.statusCode, 200, pub.body);
    return { zone, asset, url: `${edge.url}/${zone.name}/${asset.objectId}/${filename}` };
  };

  it('an asset beyond EDGE_MAX_OBJECT_BYTES is served byte-identical, passed through: never in the memory tier, never on disk', async () => {
    const data = randomBytes(6 * 1024 * 1024 + 13);
    const want = createHash('sha256').update(data).digest('hex');
    const { url } = await publish(data, 'big.bin');
    const before = await health();
    for (let i = 0; i < 2; i++) {
      const res = await fetch(url);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('cdn-cache'), 'BYPASS', 'too big to keep: passed through each time');
      assert.equal(res.headers.get('content-length'), String(data.length));
      assert.deepEqual(await digest(res), { sha: want, length: data.length });
      const now = await health();
      assert.equal(now.bytes.memory, before.bytes.memory, 'the memory tier does not hold it');
      assert.equal(now.bytes.disk, before.bytes.disk, 'nor the disk tier');
    }
    const head = await fetch(url, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-length'), String(data.length));
    // Concurrent requests each get the whole object (a pass-through stream serves one client).
    const all = await Promise.all([fetch(url), fetch(url), fetch(url)].map(async (p) => digest(await p)));
    for (const got of all) assert.deepEqual(got, { sha: want, length: data.length });
  });

  it('an asset beyond the memory tier but within the limit is streamed to disk, then served from there (whole and ranges)', async () => {
    const data = randomBytes(1536 * 1024 + 5);
    const { url } = await publish(data, 'mid.bin');
    const before = await health();
    const miss = await fetch(url);
    assert.equal(miss.headers.get('cdn-cache'), 'MISS');
    assert.ok(Buffer.from(await miss.arrayBuffer()).equals(data));
    const hit = await fetch(url);
    assert.equal(hit.headers.get('cdn-cache'), 'HIT');
    assert.ok(Buffer.from(await hit.arrayBuffer()).equals(data));
    const range = await fetch(url, { headers: { range: 'bytes=1000-1999' } });
    assert.equal(range.status, 206);
    assert.ok(Buffer.from(await range.arrayBuffer()).equals(data.subarray(1000, 2000)));
    const now = await health();
    assert.equal(now.bytes.memory, before.bytes.memory, 'the memory tier does not hold it');
    assert.equal(now.bytes.disk - before.bytes.disk, data.length, 'the disk tier does');
  });

  it('the asset origin hands an object beyond the inline bound over as a stream, not a buffer', async () => {
    const data = randomBytes(300 * 1024);
    const { zone, asset } = await publish(data, 'o.bin');
    const row = await ctx()
      .deps.db.selectFrom('cdn_zones')
      .selectAll()
      .where('id', '=', zone.id)
      .executeTakeFirstOrThrow();
    const origin = assetOriginFor({ db: ctx().deps.db, blobs: ctx().deps.blobs });
    const streamed = await origin.fetch(
      zoneConfigFromRow(row),
      `/${asset.objectId}`,
      {},
      { inlineMaxBytes: 64 * 1024 },
    );
    assert.equal(streamed.status, 200);
    assert.equal(streamed.body.length, 0, 'no body read into memory');
    assert.equal(streamed.size, data.length);
    const chunks: Buffer[] = [];
    for await (const chunk of streamed.stream!) chunks.push(chunk as Buffer);
    assert.ok(Buffer.concat(chunks).equals(data));
    const inline = await origin.fetch(
      zoneConfigFromRow(row),
      `/${asset.objectId}`,
      {},
      { inlineMaxBytes: 1024 * 1024 },
    );
    assert.equal(inline.stream, undefined);
    assert.ok(inline.body.equals(data));
  });

  it("the zone's request limit holds for passed-through objects too: 429 with Retry-After, and nothing fetched from the origin", async () => {
    const data = randomBytes(3 * 1024 * 1024 + 1);
    const { zone, url } = await publish(data, 'limited.bin');
    const set = await ctx().inject({
      method: 'PATCH',
      url: `/v1/cdn/pullzones/${zone.id}`,
      headers: org.admin.headers,
      payload: { requestLimit: 1, burstSize: 0 },
    });
    assert.equal(set.statusCode, 200, set.body);
    await edge.edge.sync({});
    const headers = { 'x-forwarded-for': '198.51.100.77' };
    const first = await fetch(url, { headers });
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('cdn-cache'), 'BYPASS', 'passed through, not kept');
    assert.equal((await digest(first)).length, data.length);
    const fetchesBefore = edge.edge.originFetches;
    const second = await fetch(url, { headers });
    assert.equal(second.status, 429);
    assert.ok(Number(second.headers.get('retry-after')) >= 1);
    await second.arrayBuffer();
    assert.equal(edge.edge.originFetches, fetchesBefore, 'a refused request reaches no origin');
    // Another client address has a bucket of its own.
    const other = await fetch(url, { headers: { 'x-forwarded-for': '198.51.100.78' } });
    assert.equal(other.status, 200);
    assert.equal((await digest(other)).length, data.length);
  });

  it('revalidating a stale object beyond the memory tier while a purge lands sends it from its file in chunks: never read whole', async () => {
    const origin = await new TestOrigin().start();
    try {
      const zone = await makeZone(ctx(), org, origin);
      const data = randomBytes(1536 * 1024 + 7);
      const want = createHash('sha256').update(data).digest('hex');
      let hold: Promise<void> | null = null;
      let release = () => {};
      let arrived = () => {};
      const revalidating = new Promise<void>((r) => {
        arrived = r;
      });
      let changed: Buffer | null = null;
      // no-cache: every request revalidates the stored copy (304 when the etag still matches).
      origin.routes.set('/stale.bin', async (req, res) => {
        if (changed) {
          res
            .writeHead(200, {
              'content-type': 'application/octet-stream',
              'content-length': changed.length,
              etag: '"s2"',
              'cache-control': 'no-cache',
            })
            .end(changed);
          return;
        }
        if (req.headers['if-none-match'] === '"s1"') {
          if (hold) {
            arrived();
            await hold;
          }
          res.writeHead(304, { etag: '"s1"', 'cache-control': 'no-cache' }).end();
          return;
        }
        res
          .writeHead(200, {
            'content-type': 'application/octet-stream',
            'content-length': data.length,
            etag: '"s1"',
            'cache-control': 'no-cache',
          })
          .end(data);
      });
      const url = `${edge.url}/${zone.name}/stale.bin`;
      const miss = await fetch(url);
      assert.equal(miss.headers.get('cdn-cache'), 'MISS');
      assert.deepEqual(await digest(miss), { sha: want, length: data.length });
      const revalidated = await fetch(url);
      assert.equal(revalidated.headers.get('cdn-cache'), 'REVALIDATED');
      assert.deepEqual(await digest(revalidated), { sha: want, length: data.length });

      // A purge of another path of the zone lands while the origin is answering the revalidation: the
      // stored copy is served to this client once, not renewed.
      hold = new Promise<void>((r) => {
        release = r;
      });
      const pending = fetch(url);
      await revalidating;
      const purged = await ctx().inject({
        method: 'POST',
        url: `/v1/cdn/pullzones/${zone.id}/purge`,
        headers: org.admin.headers,
        payload: { url: `/${zone.name}/other.bin` },
      });
      assert.equal(purged.statusCode, 200, purged.body);
      await edge.edge.sync({});
      release();
      const res = await pending;
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-length'), String(data.length));
      assert.deepEqual(await digest(res), { sha: want, length: data.length });
      // The object changed at the origin: the revalidation brings a new 200, streamed to disk, not read whole.
      changed = randomBytes(1800 * 1024 + 3);
      const renewed = await fetch(url);
      assert.equal(renewed.status, 200);
      assert.equal(renewed.headers.get('etag'), '"s2"');
      assert.deepEqual(await digest(renewed), {
        sha: createHash('sha256').update(changed).digest('hex'),
        length: changed.length,
      });
      const h = await health();
      assert.ok(
        h.largestWholeRead <= 256 * 1024,
        `nothing beyond the memory tier's per-object bound was held whole, from a cache file or the origin (largest: ${h.largestWholeRead})`,
      );
    } finally {
      await origin.close();
    }
  });
});
