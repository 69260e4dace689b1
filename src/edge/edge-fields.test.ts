import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import sharp from 'sharp';
import { forEachEngine } from '../../test/helpers/context.ts';
import { createTestOrg, type TestOrg } from '../../test/helpers/factories.ts';
import { makeZone, startEdge, TestOrigin } from '../../test/helpers/cdn.ts';

forEachEngine('CDN zone fields at the edge', (ctx) => {
  const origin = new TestOrigin();
  const second = new TestOrigin();
  let edge: Awaited<ReturnType<typeof startEdge>>;
  let org: TestOrg;
  before(async () => {
    await origin.start();
    await second.start();
    edge = await startEdge(ctx());
    org = await createTestOrg(ctx());
  });
  after(async () => {
    await edge.close();
    await origin.close();
    await second.close();
  });
  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${edge.url}${path}`, { headers });
  const patch = (id: number, payload: unknown) =>
    ctx().inject({ method: 'PATCH', url: `/v1/cdn/pullzones/${id}`, headers: org.admin.headers, payload });

  it('originHostHeader is sent to the origin; changing the origin empties the zone on every edge', async () => {
    const zone = await makeZone(ctx(), org, origin, { originHostHeader: 'assets.example.com' });
    origin.routes.set('/h', (req, res) =>
      res.writeHead(200, { 'cache-control': 'max-age=600' }).end(`first:${req.headers.host}`),
    );
    second.routes.set('/h', (_req, res) => res.writeHead(200, { 'cache-control': 'max-age=600' }).end('second'));
    assert.equal(await (await get(`/${zone.name}/h`)).text(), 'first:assets.example.com');
    assert.equal((await patch(zone.id, { originUrl: second.url })).statusCode, 200);
    assert.equal(await (await get(`/${zone.name}/h`)).text(), 'second');
  });

  it('enableWebpVary / enableAvifVary keep one copy per Accept class for origins that negotiate', async () => {
    const zone = await makeZone(ctx(), org, origin, { enableWebpVary: true, enableAvifVary: true });
    origin.routes.set('/neg', (req, res) => {
      const a = req.headers.accept ?? '';
      res
        .writeHead(200, { 'cache-control': 'max-age=600' })
        .end(a.includes('image/avif') ? 'avif' : a.includes('image/webp') ? 'webp' : 'jpeg');
    });
    assert.equal(await (await get(`/${zone.name}/neg`, { accept: 'image/avif,image/webp' })).text(), 'avif');
    assert.equal(await (await get(`/${zone.name}/neg`, { accept: 'image/webp' })).text(), 'webp');
    const plain = await get(`/${zone.name}/neg`, { accept: 'image/jpeg' });
    assert.equal(await plain.text(), 'jpeg');
    assert.match(plain.headers.get('vary') ?? '', /Accept/);
    assert.equal(await (await get(`/${zone.name}/neg`, { accept: 'image/avif' })).text(), 'avif');
    assert.equal(origin.count('/neg'), 3);
  });

  it('useStaleWhileOffline (default on) serves a stale copy when the origin is down; off, the error passes', async () => {
    const on = await makeZone(ctx(), org, origin, { useStaleWhileUpdating: false });
    const off = await makeZone(ctx(), org, origin, { useStaleWhileUpdating: false, useStaleWhileOffline: false });
    let down = false;
    origin.routes.set('/off', (_req, res) =>
      down ? res.destroy() : res.writeHead(200, { 'cache-control': 'max-age=1' }).end('cached'),
    );
    await (await get(`/${on.name}/off`)).text();
    await (await get(`/${off.name}/off`)).text();
    down = true;
    await new Promise((r) => setTimeout(r, 1100));
    const stale = await get(`/${on.name}/off`);
    assert.equal(stale.status, 200);
    assert.equal(await stale.text(), 'cached');
    assert.equal((await get(`/${off.name}/off`)).status, 502);
  });

  it('optimizer switches: WebP off serves the original format; JS minification off leaves JS as is; quality changes size', async () => {
    const zone = await makeZone(ctx(), org, origin, {
      optimizerEnabled: true,
      optimizerEnableWebP: false,
      optimizerEnableAvif: false,
      optimizerMinifyJavaScript: false,
      optimizerImageQuality: 90,
    });
    const jpeg = await sharp({
      create: { width: 300, height: 200, channels: 3, background: { r: 10, g: 120, b: 200 } },
    })
      .composite([
        {
          input: Buffer.from('<svg width="300" height="200"><text x="10" y="100" font-size="40">Tessera</text></svg>'),
        },
      ])
      .jpeg({ quality: 100 })
      .toBuffer();
    origin.set('/p.jpg', jpeg, { 'content-type': 'image/jpeg', 'cache-control': 'max-age=600' });
    const js = '// keep\nconst a = 1;\n';
    origin.set('/k.js', js, { 'content-type': 'text/javascript', 'cache-control': 'max-age=600' });
    const hi = await get(`/${zone.name}/p.jpg`, { accept: 'image/avif,image/webp,*/*' });
    assert.equal(hi.headers.get('content-type'), 'image/jpeg');
    const hiSize = (await hi.arrayBuffer()).byteLength;
    assert.equal(await (await get(`/${zone.name}/k.js`)).text(), js);
    await patch(zone.id, { optimizerImageQuality: 20 });
    const lo = await get(`/${zone.name}/p.jpg`, { accept: 'image/webp' });
    const loSize = (await lo.arrayBuffer()).byteLength;
    assert.ok(loSize < hiSize, `quality 20 (${loSize} B) should be smaller than quality 90 (${hiSize} B)`);
  });

  it('the disabled optimizer passes images and CSS through unchanged', async () => {
    const zone = await makeZone(ctx(), org, origin);
    const css = '.a {  color: red;  }\n';
    origin.set('/u.css', css, { 'content-type': 'text/css', 'cache-control': 'max-age=600' });
    assert.equal(await (await get(`/${zone.name}/u.css`)).text(), css);
  });

  it('optimizerMinifyCSS off leaves CSS as it came while JavaScript is still minified', async () => {
    const zone = await makeZone(ctx(), org, origin, { optimizerEnabled: true, optimizerMinifyCSS: false });
    const css = '/* keep */\n.a {\n  color: #ff0000;\n}\n';
    const js = '// drop\nconst value = 1 + 2;\nglobalThis.v = value;\n';
    origin.set('/m.css', css, { 'content-type': 'text/css', 'cache-control': 'max-age=600' });
    origin.set('/m.js', js, { 'content-type': 'text/javascript', 'cache-control': 'max-age=600' });
    assert.equal(await (await get(`/${zone.name}/m.css`)).text(), css);
    const minJs = await (await get(`/${zone.name}/m.js`)).text();
    assert.ok(minJs.length < js.length && !minJs.includes('drop'), minJs);
  });

  it('geo zone switches follow the edge region: US for ny and la, Asia for sg, EU for de; SA and AF have no edge region', async () => {
    const edges = {
      ny: await startEdge(ctx(), { region: 'ny' }),
      la: await startEdge(ctx(), { region: 'la' }),
      sg: await startEdge(ctx(), { region: 'sg' }),
    };
    try {
      const zone = await makeZone(ctx(), org, origin);
      origin.set('/g.txt', 'geo', { 'cache-control': 'max-age=600' });
      const status = async (url: string) => (await fetch(`${url}/${zone.name}/g.txt`)).status;
      const all = async () => ({
        de: await status(edge.url),
        ny: await status(edges.ny.url),
        la: await status(edges.la.url),
        sg: await status(edges.sg.url),
      });
      assert.deepEqual(await all(), { de: 200, ny: 200, la: 200, sg: 200 });
      await patch(zone.id, { enableGeoZoneUS: false });
      assert.deepEqual(await all(), { de: 200, ny: 403, la: 403, sg: 200 });
      await patch(zone.id, { enableGeoZoneUS: true, enableGeoZoneAsia: false });
      assert.deepEqual(await all(), { de: 200, ny: 200, la: 200, sg: 403 });
      await patch(zone.id, { enableGeoZoneAsia: true, enableGeoZoneEU: false });
      assert.deepEqual(await all(), { de: 403, ny: 200, la: 200, sg: 200 });
      await patch(zone.id, { enableGeoZoneEU: true, enableGeoZoneSA: false, enableGeoZoneAF: false });
      assert.deepEqual(await all(), { de: 200, ny: 200, la: 200, sg: 200 });
    } finally {
      for (const e of Object.values(edges)) await e.close();
    }
  });

  it('hits answered from memory carry the full header block, rebuilt when the zone changes', async () => {
    const zone = await makeZone(ctx(), org, origin);
    origin.set('/hb.css', 'body{}', {
      'content-type': 'text/css',
      'cache-control': 'public, max-age=600',
      etag: '"hb1"',
      'last-modified': new Date(0).toUTCString(),
      'cdn-tag': 'secret-tag',
    });
    await (await get(`/${zone.name}/hb.css`)).text();
    const hit = await get(`/${zone.name}/hb.css`);
    assert.equal(await hit.text(), 'body{}');
    assert.deepEqual(
      [
        'cdn-cache',
        'etag',
        'cache-control',
        'content-type',
        'content-length',
        'accept-ranges',
        'last-modified',
        'cdn-tag',
        'access-control-allow-origin',
      ].map((h) => hit.headers.get(h)),
      ['HIT', '"hb1"', 'public, max-age=600', 'text/css', '6', 'bytes', new Date(0).toUTCString(), null, null],
    );
    assert.match(hit.headers.get('age') ?? '', /^\d+$/);
    assert.ok(hit.headers.get('date'));
    await patch(zone.id, { cacheControlPublicMaxAgeOverride: 30, enableAccessControlOriginHeader: true });
    const after = await get(`/${zone.name}/hb.css`);
    assert.equal(after.headers.get('cdn-cache'), 'HIT');
    assert.equal(after.headers.get('cache-control'), 'public, max-age=30');
    assert.equal(after.headers.get('access-control-allow-origin'), '*');
    assert.equal(origin.count('/hb.css'), 1);
  });

  it('origins that break the rules: 5xx is not cached, oversize objects and dead origins give 502', async () => {
    const zone = await makeZone(ctx(), org, origin);
    origin.routes.set('/e500', (_req, res) => res.writeHead(500, { 'cache-control': 'max-age=600' }).end('boom'));
    assert.equal((await get(`/${zone.name}/e500`)).status, 500);
    assert.equal((await get(`/${zone.name}/e500`)).status, 500);
    assert.equal(origin.count('/e500'), 2);
    const dead = await makeZone(ctx(), org, origin, { originUrl: 'http://127.0.0.1:9' });
    const res = await get(`/${dead.name}/x`);
    assert.equal(res.status, 502);
    assert.match(((await res.json()) as { message: string }).message, /Origin unavailable/);
    assert.equal((await fetch(`${edge.url}/${zone.name}/x`, { method: 'POST', body: 'a' })).status, 405);
    const { request } = await import('node:http');
    for (const path of [`/${zone.name}/%2e%2e/x`, `/${zone.name}/a/../../etc/passwd`, `/${zone.name}/a\\b`]) {
      // node:http sends the path as written (fetch and undici would resolve the dot segments first).
      const status = await new Promise<number>((resolve, reject) => {
        const { hostname, port } = new URL(edge.url);
        const r = request({ hostname, port, path }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        r.on('error', reject);
        r.end();
      });
      assert.equal(status, 400, path);
    }
  });
});
