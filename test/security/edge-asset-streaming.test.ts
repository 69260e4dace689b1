import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, it } from 'node:test';
import { assetOriginFor } from '../../src/features/cdn/index.ts';
import { zoneConfigFromRow } from '../../src/features/cdn/contract.ts';
import { uploadAsset } from '../helpers/assets.ts';
import { startEdge, unique } from '../helpers/cdn.ts';
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
    (await (await fetch(`${edge.edge.controlUrl}/health`)).json()) as { bytes: { memory: number; disk: number } };
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
});
