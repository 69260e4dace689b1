import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { forEachEngine, json } from '../../test/helpers/context.ts';
import { createTestOrg, type TestOrg } from '../../test/helpers/factories.ts';
import { makeZone, startEdge, TestOrigin, unique } from '../../test/helpers/cdn.ts';
import { signToken } from '../features/cdn/edge-contract/contract.ts';

forEachEngine('CDN edge server', (ctx) => {
  const origin = new TestOrigin();
  let edge: Awaited<ReturnType<typeof startEdge>>;
  let org: TestOrg;
  before(async () => {
    await origin.start();
    edge = await startEdge(ctx());
    org = await createTestOrg(ctx());
  });
  after(async () => {
    await edge.close();
    await origin.close();
  });
  const get = (path: string, headers: Record<string, string> = {}, method = 'GET') =>
    fetch(`${edge.url}${path}`, { method, headers });

  it('serves by path prefix and by Host; miss → origin once → hit', async () => {
    const zone = await makeZone(ctx(), org, origin, { hostnames: [`h${unique()}.example.test`] });
    origin.set('/a.txt', 'hello', { 'cache-control': 'max-age=60', etag: '"v1"' });
    const first = await get(`/${zone.name}/a.txt`);
    assert.equal(first.status, 200);
    assert.equal(await first.text(), 'hello');
    assert.equal(first.headers.get('cdn-cache'), 'MISS');
    const second = await get(`/${zone.name}/a.txt`);
    assert.equal(second.headers.get('cdn-cache'), 'HIT');
    assert.equal(await second.text(), 'hello');
    const { request } = await import('undici');
    const byHost = await request(`${edge.url}/a.txt`, { headers: { host: `${zone.hostnames[0]}:8081` } });
    assert.equal(byHost.headers['cdn-cache'], 'HIT');
    assert.equal(await byHost.body.text(), 'hello');
    assert.equal(origin.count('/a.txt'), 1);
    assert.equal((await get('/no-such-zone/a.txt')).status, 404);
  });

  it('active content (HTML, SVG, XML) is an attachment under CSP sandbox, hit or miss, unless the zone opts in; nosniff always (issue 23, defect 11)', async () => {
    const zone = await makeZone(ctx(), org, origin);
    origin.set('/page.html', '<script>alert(1)</script>', {
      'cache-control': 'max-age=60',
      'content-type': 'text/html; charset=utf-8',
    });
    origin.set('/pic.svg', '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>', {
      'cache-control': 'max-age=60',
      'content-type': 'image/svg+xml',
      'content-disposition': 'inline; filename="pic.svg"',
    });
    origin.set('/doc.xml', '<a/>', { 'cache-control': 'max-age=60', 'content-type': 'application/atom+xml' });
    origin.set('/plain.txt', 'hi', { 'cache-control': 'max-age=60', 'content-type': 'text/plain' });
    for (const round of ['MISS', 'HIT']) {
      for (const path of ['/page.html', '/pic.svg', '/doc.xml']) {
        const res = await get(`/${zone.name}${path}`);
        await res.text();
        assert.equal(res.headers.get('cdn-cache'), round, path);
        assert.equal(res.headers.get('content-security-policy'), 'sandbox', `${path} ${round}`);
        assert.match(res.headers.get('content-disposition') ?? '', /^attachment\b/, `${path} ${round}`);
        assert.equal(res.headers.get('x-content-type-options'), 'nosniff', `${path} ${round}`);
      }
      const plain = await get(`/${zone.name}/plain.txt`);
      await plain.text();
      assert.equal(plain.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(plain.headers.get('content-security-policy'), null);
      assert.equal(plain.headers.get('content-disposition'), null);
    }
    const svg = await get(`/${zone.name}/pic.svg`);
    await svg.text();
    assert.equal(svg.headers.get('content-disposition'), 'attachment; filename="pic.svg"');
    // A zone that opts in serves them inline, as the origin sends them.
    const inline = await makeZone(ctx(), org, origin, { serveActiveContentInline: true });
    const page = await get(`/${inline.name}/page.html`);
    assert.equal(await page.text(), '<script>alert(1)</script>');
    assert.equal(page.headers.get('content-security-policy'), null);
    assert.equal(page.headers.get('content-disposition'), null);
    assert.equal(page.headers.get('x-content-type-options'), 'nosniff');
  });

  it('honours Cache-Control: no-store and private are never cached; max-age=0 with ETag revalidates (304 → REVALIDATED)', async () => {
    const zone = await makeZone(ctx(), org, origin, { useStaleWhileUpdating: false });
    origin.set('/ns', 'x', { 'cache-control': 'no-store' });
    origin.set('/pv', 'x', { 'cache-control': 'private, max-age=60' });
    for (const p of ['/ns', '/pv']) {
      await (await get(`/${zone.name}${p}`)).text();
      await (await get(`/${zone.name}${p}`)).text();
      assert.equal(origin.count(p), 2, p);
    }
    origin.routes.set('/rv', (req, res) => {
      if (req.headers['if-none-match'] === '"e1"')
        return void res.writeHead(304, { etag: '"e1"', 'cache-control': 'max-age=0' }).end();
      res.writeHead(200, { etag: '"e1"', 'cache-control': 'max-age=0', 'content-type': 'text/plain' }).end('body-rv');
    });
    assert.equal(await (await get(`/${zone.name}/rv`)).text(), 'body-rv');
    const again = await get(`/${zone.name}/rv`);
    assert.equal(again.headers.get('cdn-cache'), 'REVALIDATED');
    assert.equal(await again.text(), 'body-rv');
    assert.equal(origin.requests.filter((r) => r.url === '/rv').at(-1)!.headers['if-none-match'], '"e1"');
  });

  it('client conditionals (If-None-Match, If-Modified-Since) get 304; HEAD has no body; ranges give 206/416', async () => {
    const zone = await makeZone(ctx(), org, origin);
    const lm = new Date(Date.now() - 3_600_000).toUTCString();
    origin.set('/c.bin', '0123456789', { 'cache-control': 'max-age=60', etag: '"c1"', 'last-modified': lm });
    await (await get(`/${zone.name}/c.bin`)).text();
    assert.equal((await get(`/${zone.name}/c.bin`, { 'if-none-match': '"c1"' })).status, 304);
    assert.equal((await get(`/${zone.name}/c.bin`, { 'if-none-match': '"other"' })).status, 200);
    assert.equal((await get(`/${zone.name}/c.bin`, { 'if-modified-since': new Date().toUTCString() })).status, 304);
    const head = await get(`/${zone.name}/c.bin`, {}, 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-length'), '10');
    assert.equal(await head.text(), '');
    const part = await get(`/${zone.name}/c.bin`, { range: 'bytes=2-5' });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), 'bytes 2-5/10');
    assert.equal(await part.text(), '2345');
    const suffix = await get(`/${zone.name}/c.bin`, { range: 'bytes=-3' });
    assert.equal(await suffix.text(), '789');
    assert.equal((await get(`/${zone.name}/c.bin`, { range: 'bytes=20-' })).status, 416);
    assert.equal(origin.count('/c.bin'), 1);
  });

  it('Vary: stores one variant per value of the varied request header', async () => {
    const zone = await makeZone(ctx(), org, origin);
    origin.routes.set('/v', (req, res) =>
      res
        .writeHead(200, { vary: 'Accept-Language', 'cache-control': 'max-age=60' })
        .end(`lang=${req.headers['accept-language']}`),
    );
    assert.equal(await (await get(`/${zone.name}/v`, { 'accept-language': 'de' })).text(), 'lang=de');
    assert.equal(await (await get(`/${zone.name}/v`, { 'accept-language': 'fr' })).text(), 'lang=fr');
    const de = await get(`/${zone.name}/v`, { 'accept-language': 'de' });
    assert.equal(await de.text(), 'lang=de');
    assert.equal(de.headers.get('cdn-cache'), 'HIT');
    assert.equal(origin.count('/v'), 2);
  });

  it('stale-while-revalidate serves stale and refreshes in the background; stale-if-error serves stale when the origin fails', async () => {
    const zone = await makeZone(ctx(), org, origin, { useStaleWhileUpdating: false, useStaleWhileOffline: false });
    let n = 0;
    origin.routes.set('/swr', (_req, res) =>
      res.writeHead(200, { 'cache-control': 'max-age=1, stale-while-revalidate=60' }).end(`v${++n}`),
    );
    assert.equal(await (await get(`/${zone.name}/swr`)).text(), 'v1');
    await new Promise((r) => setTimeout(r, 1100));
    const stale = await get(`/${zone.name}/swr`);
    assert.equal(stale.headers.get('cdn-cache'), 'STALE');
    assert.equal(await stale.text(), 'v1');
    for (let i = 0; i < 50 && n < 2; i++) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(await (await get(`/${zone.name}/swr`)).text(), 'v2');
    let fail = false;
    origin.routes.set('/sie', (_req, res) =>
      fail
        ? res.writeHead(503).end('down')
        : res.writeHead(200, { 'cache-control': 'max-age=1, stale-if-error=60' }).end('good'),
    );
    assert.equal(await (await get(`/${zone.name}/sie`)).text(), 'good');
    fail = true;
    await new Promise((r) => setTimeout(r, 1100));
    const sie = await get(`/${zone.name}/sie`);
    assert.equal(sie.status, 200);
    assert.equal(await sie.text(), 'good');
    assert.equal(sie.headers.get('cdn-cache'), 'STALE');
    origin.routes.set('/nosie', (_req, res) =>
      fail ? res.writeHead(503).end('down') : res.writeHead(200, { 'cache-control': 'max-age=1' }).end('good'),
    );
    fail = false;
    await (await get(`/${zone.name}/nosie`)).text();
    fail = true;
    await new Promise((r) => setTimeout(r, 1100));
    assert.equal((await get(`/${zone.name}/nosie`)).status, 503);
  });

  it('edge TTL override caches what the origin does not say; browser TTL override rewrites Cache-Control', async () => {
    const zone = await makeZone(ctx(), org, origin, {
      cacheControlMaxAgeOverride: 300,
      cacheControlPublicMaxAgeOverride: 42,
    });
    origin.set('/plain', 'p');
    await (await get(`/${zone.name}/plain`)).text();
    const hit = await get(`/${zone.name}/plain`);
    assert.equal(hit.headers.get('cdn-cache'), 'HIT');
    assert.equal(hit.headers.get('cache-control'), 'public, max-age=42');
    assert.equal(origin.count('/plain'), 1);
  });

  it('query strings: ignored by default, part of the key (sorted) when ignoreQueryStrings is false', async () => {
    const ign = await makeZone(ctx(), org, origin);
    const keep = await makeZone(ctx(), org, origin, { ignoreQueryStrings: false });
    origin.routes.set('/q', (req, res) => res.writeHead(200, { 'cache-control': 'max-age=60' }).end(req.url));
    assert.equal(await (await get(`/${ign.name}/q?a=1`)).text(), '/q');
    assert.equal(await (await get(`/${ign.name}/q?a=2`)).text(), '/q');
    assert.equal(await (await get(`/${keep.name}/q?b=2&a=1`)).text(), '/q?a=1&b=2');
    assert.equal((await get(`/${keep.name}/q?a=1&b=2`)).headers.get('cdn-cache'), 'HIT');
    assert.equal(await (await get(`/${keep.name}/q?a=3`)).text(), '/q?a=3');
  });

  it('1,000 concurrent cold requests make exactly one origin request', async () => {
    const zone = await makeZone(ctx(), org, origin);
    origin.routes.set('/cold', (_req, res) =>
      setTimeout(() => res.writeHead(200, { 'cache-control': 'max-age=60' }).end('cold-body'), 100),
    );
    const { Agent, request } = await import('undici');
    const agent = new Agent({ connections: 1000 });
    const bodies = await Promise.all(
      Array.from({ length: 1000 }, async () =>
        (await request(`${edge.url}/${zone.name}/cold`, { dispatcher: agent })).body.text(),
      ),
    );
    await agent.close();
    assert.ok(bodies.every((b) => b === 'cold-body'));
    assert.equal(origin.count('/cold'), 1);
  });

  it('access rules: disabled zone, blocked IP and country, referrers, geo zone, token auth, CORS', async () => {
    const zone = await makeZone(ctx(), org, origin, {
      blockedIPs: ['203.0.113.0/24'],
      blockedCountries: ['GB'],
      allowedReferrers: ['*.good.test'],
      blockedReferrers: ['evil.good.test'],
    });
    origin.set('/r.js', 'x', { 'cache-control': 'max-age=60' });
    const p = `/${zone.name}/r.js`;
    assert.equal((await get(p)).status, 200);
    assert.equal((await get(p, { 'x-forwarded-for': '203.0.113.9' })).status, 403);
    assert.equal((await get(p, { 'x-forwarded-for': '81.2.69.160' })).status, 403); // GB in the bundled GeoIP database
    assert.equal((await get(p, { 'x-forwarded-for': '8.8.8.8' })).status, 200);
    assert.equal((await get(p, { referer: 'https://www.good.test/page' })).status, 200);
    assert.equal((await get(p, { referer: 'https://evil.good.test/' })).status, 403);
    assert.equal((await get(p, { referer: 'https://other.test/' })).status, 403);
    const patch = (payload: unknown) =>
      ctx().inject({ method: 'PATCH', url: `/v1/cdn/pullzones/${zone.id}`, headers: org.admin.headers, payload });
    assert.equal((await patch({ enableGeoZoneEU: false })).statusCode, 200);
    assert.equal((await get(p)).status, 403); // this edge is in region de (EU)
    await patch({ enableGeoZoneEU: true, enabled: false });
    assert.equal((await get(p)).status, 403);
    await patch({
      enabled: true,
      zoneSecurityEnabled: true,
      enableAccessControlOriginHeader: true,
      accessControlOriginHeaderExtensions: ['js'],
    });
    assert.equal((await get(p)).status, 403);
    const signed = json(
      await ctx().inject({
        method: 'POST',
        url: `/v1/cdn/pullzones/${zone.id}/sign`,
        headers: org.admin.headers,
        payload: { path: '/r.js', expiresInSeconds: 60 },
      }),
    );
    const ok = await get(`${p}?token=${signed.token}&expires=${signed.expires}`);
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get('access-control-allow-origin'), '*');
    assert.equal((await get(`${p}?token=${signed.token}&expires=${signed.expires + 1}`)).status, 403);
    const key = json(
      await ctx().inject({ method: 'GET', url: `/v1/cdn/pullzones/${zone.id}`, headers: org.admin.headers }),
    ).zoneSecurityKey;
    const past = Math.floor(Date.now() / 1000) - 5;
    assert.equal((await get(`${p}?token=${signToken(key, '/r.js', past)}&expires=${past}`)).status, 403);
    const pre = await get(p, { 'access-control-request-method': 'GET', origin: 'https://x.test' }, 'OPTIONS');
    assert.equal(pre.status, 204);
    assert.equal(pre.headers.get('access-control-allow-origin'), '*');
    await patch({ zoneSecurityIncludeHashRemoteIP: true });
    const bound = json(
      await ctx().inject({
        method: 'POST',
        url: `/v1/cdn/pullzones/${zone.id}/sign`,
        headers: org.admin.headers,
        payload: { path: '/r.js', ip: '8.8.4.4' },
      }),
    );
    assert.equal(
      (await get(`${p}?token=${bound.token}&expires=${bound.expires}`, { 'x-forwarded-for': '8.8.4.4' })).status,
      200,
    );
    assert.equal(
      (await get(`${p}?token=${bound.token}&expires=${bound.expires}`, { 'x-forwarded-for': '8.8.8.8' })).status,
      403,
    );
  });

  it('signed URLs: a token serves only its own path and expiry (moved digit, truncated, extended, old format → 403)', async () => {
    const zone = await makeZone(ctx(), org, origin, {});
    origin.set('/image01', 'one', { 'cache-control': 'max-age=60' });
    origin.set('/image0', 'zero', { 'cache-control': 'max-age=60' });
    origin.set('/image011', 'eleven', { 'cache-control': 'max-age=60' });
    await ctx().inject({
      method: 'PATCH',
      url: `/v1/cdn/pullzones/${zone.id}`,
      headers: org.admin.headers,
      payload: { zoneSecurityEnabled: true },
    });
    const signed = json(
      await ctx().inject({
        method: 'POST',
        url: `/v1/cdn/pullzones/${zone.id}/sign`,
        headers: org.admin.headers,
        payload: { path: '/image01', expiresInSeconds: 3600 },
      }),
    );
    const p = `/${zone.name}`;
    const ok = await get(`${p}/image01?token=${signed.token}&expires=${signed.expires}`);
    assert.equal(ok.status, 200);
    assert.equal(await ok.text(), 'one');
    // the last digit of the path moved in front of expires: the year-2343 exploit
    assert.equal((await get(`${p}/image0?token=${signed.token}&expires=1${signed.expires}`)).status, 403);
    assert.equal((await get(`${p}/image0?token=${signed.token}&expires=${signed.expires}`)).status, 403);
    assert.equal((await get(`${p}/image011?token=${signed.token}&expires=${signed.expires}`)).status, 403);
    assert.equal((await get(`${p}/image01?token=${signed.token}&expires=${signed.expires}0`)).status, 403);
    assert.equal((await get(`${p}/image01?token=${signed.token.slice(0, -1)}&expires=${signed.expires}`)).status, 403);
    assert.equal((await get(`${p}/image01?token=${signed.token}A&expires=${signed.expires}`)).status, 403);
    const key = json(
      await ctx().inject({ method: 'GET', url: `/v1/cdn/pullzones/${zone.id}`, headers: org.admin.headers }),
    ).zoneSecurityKey;
    const old = createHash('sha256').update(`${key}/image01${signed.expires}`).digest('base64url');
    assert.equal((await get(`${p}/image01?token=${old}&expires=${signed.expires}`)).status, 403);
    // signing cannot reach past the longest lifetime, and a query is not part of what is signed
    assert.equal(
      (
        await ctx().inject({
          method: 'POST',
          url: `/v1/cdn/pullzones/${zone.id}/sign`,
          headers: org.admin.headers,
          payload: { path: '/image01', expiresInSeconds: 10_000_000_000 },
        })
      ).statusCode,
      400,
    );
    assert.equal(
      (
        await ctx().inject({
          method: 'POST',
          url: `/v1/cdn/pullzones/${zone.id}/sign`,
          headers: org.admin.headers,
          payload: { path: '/image01?x=1' },
        })
      ).statusCode,
      400,
    );
  });

  it('purge by URL, prefix, tag and everything; a purged object is never served again (stale included)', async () => {
    const zone = await makeZone(ctx(), org, origin, { hostnames: [`p${unique()}.example.test`] });
    let version = 1;
    for (const path of ['/img/a.png', '/img/b.png', '/css/c.css', '/t1', '/t2']) {
      origin.routes.set(path, (_req, res) =>
        res
          .writeHead(200, {
            'cache-control': 'max-age=600, stale-while-revalidate=600, stale-if-error=600',
            'cdn-tag': path.startsWith('/t') ? 'group-t' : 'other',
          })
          .end(`${path}@${version}`),
      );
    }
    const read = async (path: string) => (await get(`/${zone.name}${path}`)).text();
    for (const path of ['/img/a.png', '/img/b.png', '/css/c.css', '/t1', '/t2'])
      assert.equal(await read(path), `${path}@1`);
    version = 2;
    const purge = async (payload: unknown) => {
      const res = await ctx().inject({
        method: 'POST',
        url: `/v1/cdn/pullzones/${zone.id}/purge`,
        headers: org.admin.headers,
        payload,
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.ok(json(res).edges >= 1);
    };
    await purge({ url: `https://${zone.hostnames[0]}/img/a.png` });
    assert.equal(await read('/img/a.png'), '/img/a.png@2');
    assert.equal(await read('/img/b.png'), '/img/b.png@1');
    await purge({ prefix: '/img/' });
    assert.equal(await read('/img/b.png'), '/img/b.png@2');
    assert.equal(await read('/t1'), '/t1@1');
    await purge({ tag: 'group-t' });
    assert.equal(await read('/t1'), '/t1@2');
    assert.equal(await read('/t2'), '/t2@2');
    assert.equal(await read('/css/c.css'), '/css/c.css@1');
    await purge({ everything: true });
    assert.equal(await read('/css/c.css'), '/css/c.css@2');
  });

  it('per-IP request rate and burst: 429 with Retry-After beyond requestLimit + burstSize', async () => {
    const zone = await makeZone(ctx(), org, origin, { requestLimit: 2, burstSize: 3 });
    origin.set('/rl', 'x', { 'cache-control': 'max-age=60' });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++)
      statuses.push((await get(`/${zone.name}/rl`, { 'x-forwarded-for': '198.51.100.7' })).status);
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429]);
    const other = await get(`/${zone.name}/rl`, { 'x-forwarded-for': '198.51.100.8' });
    assert.equal(other.status, 200);
    const limited = await get(`/${zone.name}/rl`, { 'x-forwarded-for': '198.51.100.7' });
    assert.equal(limited.status, 429);
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
  });

  it('monthly bandwidth cap: requests are refused once the zone served its monthly bytes', async () => {
    const zone = await makeZone(ctx(), org, origin, { monthlyBandwidthLimit: 10_000 });
    origin.set('/kb', Buffer.alloc(1000, 97), { 'cache-control': 'max-age=60' });
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await get(`/${zone.name}/kb`)).status);
    assert.deepEqual(statuses, [...Array(10).fill(200), 429, 429]);
    // Still refused after the counters reach the database (and on a fresh sync).
    await edge.edge.sync({ flushStats: true });
    assert.equal((await get(`/${zone.name}/kb`)).status, 429);
  });

  it('statistics reconcile exactly with the requests sent, with countries from the offline GeoIP database', async () => {
    const zone = await makeZone(ctx(), org, origin);
    origin.set('/s1', Buffer.alloc(100, 1), { 'cache-control': 'max-age=60' });
    origin.set('/s2', Buffer.alloc(300, 2), { 'cache-control': 'max-age=60' });
    const plan: [string, string][] = [
      ['/s1', '8.8.8.8'],
      ['/s1', '8.8.8.8'],
      ['/s1', '81.2.69.160'],
      ['/s2', '1.1.1.1'],
      ['/s2', '8.8.8.8'],
      ['/missing', '8.8.8.8'],
    ];
    for (const [path, ip] of plan) await (await get(`/${zone.name}${path}`, { 'x-forwarded-for': ip })).arrayBuffer();
    // The counters reach the database by the edge's own flush too: the statistics call's push misses
    // an edge that an earlier push timed out on under load (deregistered until its next heartbeat).
    await edge.edge.sync({ flushStats: true });
    const stats = json(
      await ctx().inject({ method: 'GET', url: `/v1/cdn/pullzone/stats/${zone.id}`, headers: org.admin.headers }),
    );
    const notFoundLen = 'not found'.length;
    assert.equal(stats.totalRequestsServed, 6);
    assert.equal(stats.totalBandwidthUsed, 100 * 3 + 300 * 2 + notFoundLen);
    assert.equal(stats.totalOriginTraffic, 100 + 300 + notFoundLen);
    assert.equal(stats.totalHits, 3);
    assert.equal(stats.totalMisses, 3);
    assert.equal(stats.cacheHitRate, 0.5);
    assert.equal(stats.originFetches, 3);
    assert.equal(stats.status2xx, 5);
    assert.equal(stats.status4xx, 1);
    assert.deepEqual(stats.geoRequestDistribution, { US: 4, GB: 1, AU: 1 });
    assert.deepEqual(stats.geoTrafficDistribution, { US: 100 * 2 + 300 + notFoundLen, GB: 100, AU: 300 });
    assert.equal(stats.hourly.length, 1);
    assert.equal(stats.hourly[0].requests, 6);
    assert.ok(stats.byteHitRate > 0 && stats.byteHitRate < 1);
    const page = await ctx().inject({
      method: 'GET',
      url: `/v1/cdn/pullzones/${zone.id}/dashboard`,
      headers: org.admin.headers,
    });
    assert.equal(page.statusCode, 200);
    assert.match(page.headers['content-type'] as string, /text\/html/);
    assert.match(page.body, /<svg/);
    assert.match(page.body, /GB/);
  });

  describe('optimizer', () => {
    it('negotiates AVIF > WebP > original by Accept with Vary: Accept; AVIF is made in the background', async () => {
      const zone = await makeZone(ctx(), org, origin, {
        optimizerEnabled: true,
        optimizerMaxWidth: 64,
        optimizerImageQuality: 60,
      });
      const png = await sharp({
        create: { width: 200, height: 100, channels: 3, background: { r: 200, g: 30, b: 30 } },
      })
        .png()
        .toBuffer();
      origin.set('/pic.png', png, { 'content-type': 'image/png', 'cache-control': 'max-age=600' });
      const plain = await get(`/${zone.name}/pic.png`, { accept: 'image/png' });
      assert.equal(plain.headers.get('content-type'), 'image/png');
      assert.match(plain.headers.get('vary') ?? '', /Accept/);
      assert.equal((await sharp(Buffer.from(await plain.arrayBuffer())).metadata()).width, 64);
      const webp = await get(`/${zone.name}/pic.png`, { accept: 'image/webp,*/*' });
      assert.equal(webp.headers.get('content-type'), 'image/webp');
      assert.equal((await sharp(Buffer.from(await webp.arrayBuffer())).metadata()).format, 'webp');
      const first = await get(`/${zone.name}/pic.png`, { accept: 'image/avif,image/webp,*/*' });
      assert.notEqual(first.headers.get('content-type'), 'image/avif'); // not ready yet: never waits for AVIF
      await first.arrayBuffer();
      let type = '';
      for (let i = 0; i < 100 && type !== 'image/avif'; i++) {
        await new Promise((r) => setTimeout(r, 50));
        const res = await get(`/${zone.name}/pic.png`, { accept: 'image/avif,image/webp,*/*' });
        type = res.headers.get('content-type') ?? '';
        if (type === 'image/avif')
          assert.equal((await sharp(Buffer.from(await res.arrayBuffer())).metadata()).format, 'heif');
        else await res.arrayBuffer();
      }
      assert.equal(type, 'image/avif');
      assert.equal(origin.count('/pic.png'), 1);
    });

    it('minifies CSS (lightningcss) and JS (esbuild) once; the output still parses', async () => {
      const zone = await makeZone(ctx(), org, origin, { optimizerEnabled: true });
      const css = '/* comment */\n.a {\n  color: #ff0000;\n  margin: 0px 0px 0px 0px;\n}\n';
      const js =
        '// comment\nfunction add(first, second) {\n  const total = first + second;\n  return total;\n}\nglobalThis.result = add(2, 3);\n';
      origin.set('/s.css', css, { 'content-type': 'text/css', 'cache-control': 'max-age=60' });
      origin.set('/s.js', js, { 'content-type': 'application/javascript', 'cache-control': 'max-age=60' });
      const minCss = await (await get(`/${zone.name}/s.css`)).text();
      const minJs = await (await get(`/${zone.name}/s.js`)).text();
      assert.ok(minCss.length < css.length && !minCss.includes('comment'), minCss);
      assert.ok(minJs.length < js.length && !minJs.includes('comment'), minJs);
      const { transform } = await import('lightningcss');
      assert.doesNotThrow(() => transform({ filename: 'x.css', code: Buffer.from(minCss) }));
      const sandbox: { result?: number } = {};
      new Function('globalThis', minJs)(sandbox);
      assert.equal(sandbox.result, 5);
      assert.equal((await get(`/${zone.name}/s.css`)).headers.get('cdn-cache'), 'HIT');
      assert.equal(origin.count('/s.css'), 1);
    });
  });
});
