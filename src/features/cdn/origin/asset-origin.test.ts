import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import sharp from 'sharp';
import { forEachEngine, json } from '../../../../test/helpers/context.ts';
import { createTestOrg, createTestUser, type TestOrg } from '../../../../test/helpers/factories.ts';
import { jpeg, uploadAsset } from '../../../../test/helpers/assets.ts';
import { startEdge } from '../../../../test/helpers/cdn.ts';

const unique = () => Math.random().toString(36).slice(2, 10);

forEachEngine('CDN with the asset store as origin', (ctx) => {
  let edge: Awaited<ReturnType<typeof startEdge>>;
  let org: TestOrg;
  before(async () => {
    edge = await startEdge(ctx());
    org = await createTestOrg(ctx());
  });
  after(async () => {
    await edge.close();
  });

  const configure = async (o: TestOrg, fields: Record<string, unknown> = {}) => {
    const name = `assets-${unique()}`;
    const res = await ctx().inject({
      method: 'POST',
      url: '/v1/cdn/configure',
      headers: o.admin.headers,
      payload: { name, region: 'de', url: `https://${name}.cdn.example.com`, ...fields },
    });
    assert.equal(res.statusCode, 200, res.body);
    return json(res);
  };

  it('serves only assets published to the zone; unpublish purges them from the edge', async () => {
    const zone = await configure(org);
    const image = await jpeg(120, 80);
    const published = await uploadAsset(ctx(), org, image, 'photo.jpg');
    const other = await uploadAsset(ctx(), org, await jpeg(30, 20), 'other.jpg');
    const pub = await ctx().inject({
      method: 'POST',
      url: '/v1/cdn/publish',
      headers: org.admin.headers,
      payload: { assets: [published.objectId] },
    });
    assert.equal(pub.statusCode, 200, pub.body);
    assert.deepEqual(json(pub), { success: true });
    const res = await fetch(`${edge.url}/${zone.name}/${published.objectId}/photo.jpg`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'image/jpeg');
    assert.deepEqual(Buffer.from(await res.arrayBuffer()), image);
    assert.equal((await fetch(`${edge.url}/${zone.name}/${published.objectId}`)).headers.get('cdn-cache'), 'MISS');
    assert.equal((await fetch(`${edge.url}/${zone.name}/${published.objectId}`)).headers.get('cdn-cache'), 'HIT');
    assert.equal((await fetch(`${edge.url}/${zone.name}/${other.objectId}/other.jpg`)).status, 404);
    assert.equal((await fetch(`${edge.url}/${zone.name}/not-an-id`)).status, 404);
    const un = await ctx().inject({
      method: 'POST',
      url: '/v1/cdn/unpublish',
      headers: org.admin.headers,
      payload: { assets: [published.objectId] },
    });
    assert.equal(un.statusCode, 200, un.body);
    assert.equal((await fetch(`${edge.url}/${zone.name}/${published.objectId}/photo.jpg`)).status, 404);
    assert.equal((await fetch(`${edge.url}/${zone.name}/${published.objectId}`)).status, 404);
  });

  it('delivery presets and parameters in CDN URLs: made once, cached per query, 400 naming the field, purged with the asset', async () => {
    const zone = await configure(org);
    const image = await jpeg(400, 300);
    const asset = await uploadAsset(ctx(), org, image, 'wide.jpg');
    const other = await uploadAsset(ctx(), org, await jpeg(40, 30), 'not-published.jpg');
    const pub = await ctx().inject({
      method: 'POST',
      url: '/v1/cdn/publish',
      headers: org.admin.headers,
      payload: { assets: [asset.objectId], pullZoneId: zone.id },
    });
    assert.equal(pub.statusCode, 200, pub.body);
    const presetName = `Square ${unique()}`;
    const made = await ctx().inject({
      method: 'POST',
      url: '/v1/delivery-presets',
      headers: org.admin.headers,
      payload: { name: presetName, width: 100, height: 100, fit: 'cover', format: 'webp', quality: 70 },
    });
    assert.equal(made.statusCode, 200, made.body);
    const at = (query: string) => `${edge.url}/${zone.name}/${asset.objectId}/wide.jpg${query}`;

    const first = await fetch(at(`?preset=${encodeURIComponent(presetName.toLowerCase())}`));
    assert.equal(first.status, 200, await first.clone().text());
    assert.equal(first.headers.get('content-type'), 'image/webp');
    assert.equal(first.headers.get('cdn-cache'), 'MISS');
    const square = await sharp(Buffer.from(await first.arrayBuffer())).metadata();
    assert.deepEqual([square.format, square.width, square.height], ['webp', 100, 100]);
    const again = await fetch(at(`?preset=${encodeURIComponent(presetName.toLowerCase())}`));
    assert.equal(again.headers.get('cdn-cache'), 'HIT', 'cached at the edge after the first request');
    await again.arrayBuffer();

    // Parameters, as GET /v1/asset/{id}/delivery takes them; the original is untouched beside them.
    const small = await fetch(at('?width=50&format=png'));
    assert.equal(small.status, 200);
    assert.equal(small.headers.get('content-type'), 'image/png');
    const meta = await sharp(Buffer.from(await small.arrayBuffer())).metadata();
    assert.deepEqual([meta.format, meta.width, meta.height], ['png', 50, 38]);
    const original = await fetch(at(''));
    assert.equal(original.headers.get('content-type'), 'image/jpeg');
    assert.deepEqual(Buffer.from(await original.arrayBuffer()), image);

    // Bad input: a 400 naming the field, never cached.
    for (const [query, field] of [
      ['?preset=no-such-preset', 'query.preset'],
      [`?preset=${encodeURIComponent(presetName)}&width=10`, 'query.width'],
      ['?width=abc', 'query.width'],
      ['?width=0', 'query.width'],
      ['?format=gif', 'query.format'],
      ['?fit=squash', 'query.fit'],
    ] as const) {
      for (let i = 0; i < 2; i++) {
        const bad = await fetch(at(query));
        assert.equal(bad.status, 400, `${query}: ${bad.status}`);
        assert.notEqual(bad.headers.get('cdn-cache'), 'HIT', `${query} is not cached`);
        const body = (await bad.json()) as { details?: { field: string }[] };
        assert.equal(body.details?.[0]?.field, field, `${query}: ${JSON.stringify(body)}`);
      }
    }
    // Another organization's preset names mean nothing here.
    const stranger = await createTestOrg(ctx());
    const foreign = `Foreign ${unique()}`;
    await ctx().inject({
      method: 'POST',
      url: '/v1/delivery-presets',
      headers: stranger.admin.headers,
      payload: { name: foreign, width: 10 },
    });
    assert.equal((await fetch(at(`?preset=${encodeURIComponent(foreign)}`))).status, 400);
    // Only published assets: a preset does not open an unpublished one.
    assert.equal(
      (await fetch(`${edge.url}/${zone.name}/${other.objectId}/x.jpg?preset=${encodeURIComponent(presetName)}`)).status,
      404,
    );
    // Unpublishing purges the asset's renditions on request too (same cache tag).
    const un = await ctx().inject({
      method: 'POST',
      url: '/v1/cdn/unpublish',
      headers: org.admin.headers,
      payload: { assets: [asset.objectId], pullZoneId: zone.id },
    });
    assert.equal(un.statusCode, 200, un.body);
    assert.equal((await fetch(at(`?preset=${encodeURIComponent(presetName.toLowerCase())}`))).status, 404);
    assert.equal((await fetch(at('?width=50&format=png'))).status, 404);
  });

  it('publishing needs the asset to be visible (404) with Download (403); another organization’s asset is 404', async () => {
    const zone = await configure(org);
    const mine = await uploadAsset(ctx(), org, await jpeg(), 'a.jpg');
    const stranger = await createTestOrg(ctx());
    const theirs = await uploadAsset(ctx(), stranger, await jpeg(), 'b.jpg');
    const missing = await ctx().inject({
      method: 'POST',
      url: '/v1/cdn/publish',
      headers: org.admin.headers,
      payload: { assets: [mine.objectId, theirs.objectId], pullZoneId: zone.id },
    });
    assert.equal(missing.statusCode, 404, missing.body);
    assert.match(missing.body, /assets\[1\]/);
    // A CDN manager outside the asset's groups cannot see it.
    const manager = await createTestUser(ctx(), org, { privileges: ['cdn_management'], groupIds: [] });
    const hidden = await ctx().inject({
      method: 'POST',
      url: '/v1/cdn/publish',
      headers: manager.headers,
      payload: { assets: [mine.objectId], pullZoneId: zone.id },
    });
    assert.equal(hidden.statusCode, 404, hidden.body);
    assert.equal(
      json(await ctx().inject({ method: 'GET', url: `/v1/cdn/pullzones/${zone.id}`, headers: org.admin.headers }))
        .filesStored,
      0,
    );
    await ctx().inject({
      method: 'PATCH',
      url: `/v1/cdn/pullzones/${zone.id}`,
      headers: org.admin.headers,
      payload: { enabled: false },
    });
    const disabled = await ctx().inject({
      method: 'POST',
      url: '/v1/cdn/publish',
      headers: org.admin.headers,
      payload: { assets: [mine.objectId], pullZoneId: zone.id },
    });
    assert.equal(disabled.statusCode, 409, disabled.body);
    assert.equal(
      (
        await ctx().inject({
          method: 'POST',
          url: '/v1/cdn/unpublish',
          headers: org.admin.headers,
          payload: { assets: [mine.objectId], pullZoneId: zone.id },
        })
      ).statusCode,
      200,
    );
    assert.equal(
      (
        await ctx().inject({
          method: 'POST',
          url: '/v1/cdn/publish',
          headers: org.admin.headers,
          payload: { assets: ['nope'], pullZoneId: zone.id },
        })
      ).statusCode,
      400,
    );
    assert.equal(
      (
        await ctx().inject({
          method: 'POST',
          url: '/v1/cdn/publish',
          headers: org.admin.headers,
          payload: { assets: [], pullZoneId: zone.id },
        })
      ).statusCode,
      400,
    );
  });

  it('an asset sent to the recycle bin stops being served once its edge copy expires (revalidation)', async () => {
    const zone = await configure(org, { cacheControlMaxAgeOverride: 1 });
    const asset = await uploadAsset(ctx(), org, await jpeg(), 'gone.jpg');
    await ctx().inject({
      method: 'POST',
      url: '/v1/cdn/publish',
      headers: org.admin.headers,
      payload: { assets: [asset.objectId], pullZoneId: zone.id },
    });
    assert.equal((await fetch(`${edge.url}/${zone.name}/${asset.objectId}`)).status, 200);
    await new Promise((r) => setTimeout(r, 1100));
    const again = await fetch(`${edge.url}/${zone.name}/${asset.objectId}`);
    assert.equal(again.status, 200);
    assert.equal(again.headers.get('cdn-cache'), 'REVALIDATED');
    const del = await ctx().inject({
      method: 'POST',
      url: `/v1/asset/${asset.objectId}/delete`,
      headers: org.admin.headers,
      payload: { action: 'delete' },
    });
    assert.equal(del.statusCode, 200, del.body);
    await new Promise((r) => setTimeout(r, 1100));
    assert.equal((await fetch(`${edge.url}/${zone.name}/${asset.objectId}`)).status, 404);
  });

  it('published images go through the optimizer (WebP by Accept)', async () => {
    const zone = await configure(org, { optimizerEnabled: true, optimizerEnableAvif: false });
    const asset = await uploadAsset(ctx(), org, await jpeg(200, 100), 'pic.jpg');
    await ctx().inject({
      method: 'POST',
      url: '/v1/cdn/publish',
      headers: org.admin.headers,
      payload: { assets: [asset.objectId], pullZoneId: zone.id },
    });
    const res = await fetch(`${edge.url}/${zone.name}/${asset.objectId}/pic.jpg`, {
      headers: { accept: 'image/webp,*/*' },
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'image/webp');
    assert.equal((await sharp(Buffer.from(await res.arrayBuffer())).metadata()).width, 200);
  });
});
