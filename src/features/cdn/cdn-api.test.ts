import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine, json } from '../../../test/helpers/context.ts';
import { createTestOrg, createTestUser } from '../../../test/helpers/factories.ts';
import { securitySuite } from '../../../test/helpers/security.ts';
import { TestOrigin } from '../../../test/helpers/cdn.ts';
import { uploadAsset } from '../../../test/helpers/assets.ts';

const unique = () => Math.random().toString(36).slice(2, 10);

forEachEngine('CDN pull-zone API', (ctx) => {
  const origin = new TestOrigin();
  before(async () => {
    await origin.start();
  });
  after(async () => {
    await origin.close();
  });

  it('POST /v1/cdn/configure creates a zone in the reference shape (asset origin, url → hostname)', async () => {
    const org = await createTestOrg(ctx());
    const name = `zone-${unique()}`;
    const res = await ctx().inject({
      method: 'POST',
      url: '/v1/cdn/configure',
      headers: { ...org.admin.headers, 'content-type': 'application/json' },
      payload: { name, region: 'sg', url: `https://${name}.cdn.example.com`, enableGeoReplication: true },
    });
    assert.equal(res.statusCode, 200, res.body);
    const zone = json(res);
    assert.ok(Number.isInteger(zone.id) && zone.id > 0);
    assert.equal(zone.name, name);
    assert.equal(zone.region, 'sg');
    assert.equal(zone.enabled, true);
    assert.equal(zone.deleted, false);
    assert.equal(zone.enableGeoReplication, true);
    assert.deepEqual(zone.replicationRegions, ['de', 'ny', 'la']);
    assert.equal(zone.originType, 'assets');
    assert.deepEqual(zone.hostnames, [`${name}.cdn.example.com`]);
    assert.equal(zone.monthlyBandwidthLimit, 0);
    assert.equal(typeof zone.zoneSecurityKey, 'string');
    for (const k of ['dateModified', 'storageUsed', 'filesStored', 'url']) assert.ok(k in zone, k);
  });

  it('validates name (5–100), region enum, url, and names the field', async () => {
    const org = await createTestOrg(ctx());
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ name: 'abc', region: 'de', url: 'https://x.example.com' }, /name/],
      [{ name: 'x'.repeat(101), region: 'de', url: 'https://x.example.com' }, /name/],
      [{ name: `ok-${unique()}`, region: 'fr', url: 'https://x.example.com' }, /region/],
      [{ name: `ok-${unique()}`, region: 'de' }, /url/],
      [{ name: `ok-${unique()}`, region: 'de', url: 'ftp://x' }, /url/],
      [{ name: 'has space!', region: 'de', url: 'https://x.example.com' }, /name/],
    ];
    for (const [payload, field] of cases) {
      const res = await ctx().inject({ method: 'POST', url: '/v1/cdn/configure', headers: org.admin.headers, payload });
      assert.equal(res.statusCode, 400, `${JSON.stringify(payload)} → ${res.body}`);
      assert.match(res.body, field);
    }
  });

  it('creates, lists, gets, updates and deletes a URL-origin zone with every field', async () => {
    const org = await createTestOrg(ctx());
    const name = `full-${unique()}`;
    const body = {
      name,
      originUrl: origin.url,
      hostnames: [`${name}.example.net`],
      cacheControlMaxAgeOverride: 120,
      cacheControlPublicMaxAgeOverride: 30,
      ignoreQueryStrings: false,
      enableWebpVary: true,
      enableAvifVary: true,
      allowedReferrers: ['*.example.com'],
      blockedReferrers: ['bad.example.com'],
      blockedIPs: ['10.0.0.0/8', '2001:db8::1'],
      blockedCountries: ['fr'],
      enableGeoZoneUS: false,
      zoneSecurityEnabled: true,
      zoneSecurityIncludeHashRemoteIP: true,
      enableAccessControlOriginHeader: true,
      accessControlOriginHeaderExtensions: ['.JS', 'css'],
      monthlyBandwidthLimit: 1_000_000,
      requestLimit: 10,
      burstSize: 5,
      limitRateAfter: 1000,
      limitRatePerSecond: 50_000,
      optimizerEnabled: true,
      optimizerEnableWebP: true,
      optimizerEnableAvif: false,
      optimizerImageQuality: 70,
      optimizerMaxWidth: 800,
      optimizerMinifyCSS: true,
      optimizerMinifyJavaScript: false,
    };
    const created = await ctx().inject({
      method: 'POST',
      url: '/v1/cdn/pullzones/',
      headers: { ...org.admin.headers, 'content-type': 'application/json' },
      payload: body,
    });
    assert.equal(created.statusCode, 201, created.body);
    const zone = json(created);
    assert.equal(zone.originType, 'url');
    assert.equal(zone.originUrl, origin.url);
    assert.deepEqual(zone.blockedCountries, ['FR']);
    assert.deepEqual(zone.accessControlOriginHeaderExtensions, ['js', 'css']);
    for (const key of Object.keys(body).filter(
      (k) => !['blockedCountries', 'accessControlOriginHeaderExtensions', 'originUrl'].includes(k),
    )) {
      assert.deepEqual(zone[key], (body as Record<string, unknown>)[key], key);
    }
    const list = json(await ctx().inject({ method: 'GET', url: '/v1/cdn/pullzones', headers: org.admin.headers }));
    assert.equal(list.total, 1);
    assert.equal(list.items[0].id, zone.id);
    const patched = await ctx().inject({
      method: 'PATCH',
      url: `/v1/cdn/pullzones/${zone.id}`,
      headers: org.admin.headers,
      payload: { enabled: false, requestLimit: 0, blockedIPs: [] },
    });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.equal(json(patched).enabled, false);
    assert.deepEqual(json(patched).blockedIPs, []);
    assert.equal(json(patched).optimizerImageQuality, 70);
    const got = json(
      await ctx().inject({ method: 'GET', url: `/v1/cdn/pullzones/${zone.id}`, headers: org.admin.headers }),
    );
    assert.equal(got.enabled, false);
    const del = await ctx().inject({
      method: 'DELETE',
      url: `/v1/cdn/pullzones/${zone.id}`,
      headers: org.admin.headers,
    });
    assert.equal(del.statusCode, 204);
    assert.equal(
      (await ctx().inject({ method: 'GET', url: `/v1/cdn/pullzones/${zone.id}`, headers: org.admin.headers }))
        .statusCode,
      404,
    );
  });

  it('refuses bad field values with 400 naming the field', async () => {
    const org = await createTestOrg(ctx());
    const cases: [Record<string, unknown>, string][] = [
      [{ originUrl: 'not a url' }, 'originUrl'],
      [{ originType: 'url' }, 'originUrl'],
      [{ hostnames: ['bad host'] }, 'hostnames'],
      [{ blockedIPs: ['300.1.1.1'] }, 'blockedIPs'],
      [{ blockedCountries: ['USA'] }, 'blockedCountries'],
      [{ allowedReferrers: ['http://x'] }, 'allowedReferrers'],
      [{ optimizerImageQuality: 0 }, 'optimizerImageQuality'],
      [{ optimizerMaxWidth: 6000 }, 'optimizerMaxWidth'],
      [{ monthlyBandwidthLimit: -1 }, 'monthlyBandwidthLimit'],
      [{ cacheControlMaxAgeOverride: -5 }, 'cacheControlMaxAgeOverride'],
    ];
    for (const [fields, field] of cases) {
      const res = await ctx().inject({
        method: 'POST',
        url: '/v1/cdn/pullzones',
        headers: org.admin.headers,
        payload: { name: `bad-${unique()}`, ...fields },
      });
      assert.equal(res.statusCode, 400, `${JSON.stringify(fields)} → ${res.body}`);
      assert.match(res.body, new RegExp(field));
    }
  });

  it('refuses private origins unless TESSERA_ALLOW_PRIVATE_TARGETS (this context allows them)', async () => {
    const org = await createTestOrg(ctx());
    const res = await ctx().inject({
      method: 'POST',
      url: '/v1/cdn/pullzones',
      headers: org.admin.headers,
      payload: { name: `priv-${unique()}`, originUrl: 'http://127.0.0.1:9' },
    });
    assert.equal(res.statusCode, 201, res.body);
  });

  it('names and hostnames are unique across organizations (409)', async () => {
    const a = await createTestOrg(ctx());
    const b = await createTestOrg(ctx());
    const name = `dup-${unique()}`;
    assert.equal(
      (
        await ctx().inject({
          method: 'POST',
          url: '/v1/cdn/pullzones',
          headers: a.admin.headers,
          payload: { name, hostnames: [`${name}.example.org`] },
        })
      ).statusCode,
      201,
    );
    const sameName = await ctx().inject({
      method: 'POST',
      url: '/v1/cdn/pullzones',
      headers: b.admin.headers,
      payload: { name: name.toUpperCase() },
    });
    assert.equal(sameName.statusCode, 409, sameName.body);
    const sameHost = await ctx().inject({
      method: 'POST',
      url: '/v1/cdn/pullzones',
      headers: b.admin.headers,
      payload: { name: `${name}-2`, hostnames: [`${name}.example.org`] },
    });
    assert.equal(sameHost.statusCode, 409, sameHost.body);
    assert.match(sameHost.body, /hostname/i);
  });

  it('PATCH /v1/cdn/configure updates the only zone (204), or the one named by id', async () => {
    const org = await createTestOrg(ctx());
    const name = `pat-${unique()}`;
    const zone = json(
      await ctx().inject({
        method: 'POST',
        url: '/v1/cdn/configure',
        headers: org.admin.headers,
        payload: { name, region: 'de', url: `${name}.example.com` },
      }),
    );
    const res = await ctx().inject({
      method: 'PATCH',
      url: '/v1/cdn/configure',
      headers: org.admin.headers,
      payload: { region: 'la', enabled: false, monthlyBandwidthLimit: 5000 },
    });
    assert.equal(res.statusCode, 204, res.body);
    const got = json(
      await ctx().inject({ method: 'GET', url: `/v1/cdn/pullzones/${zone.id}`, headers: org.admin.headers }),
    );
    assert.equal(got.region, 'la');
    assert.equal(got.enabled, false);
    assert.equal(got.monthlyBandwidthLimit, 5000);
    await ctx().inject({
      method: 'POST',
      url: '/v1/cdn/configure',
      headers: org.admin.headers,
      payload: { name: `${name}-b`, region: 'de', url: `${name}-b.example.com` },
    });
    const ambiguous = await ctx().inject({
      method: 'PATCH',
      url: '/v1/cdn/configure',
      headers: org.admin.headers,
      payload: { enabled: true },
    });
    assert.equal(ambiguous.statusCode, 400, ambiguous.body);
    assert.match(ambiguous.body, /id/);
    assert.equal(
      (
        await ctx().inject({
          method: 'PATCH',
          url: '/v1/cdn/configure',
          headers: org.admin.headers,
          payload: { id: zone.id, enabled: true },
        })
      ).statusCode,
      204,
    );
  });

  it('purge needs exactly one of url, prefix, tag, everything', async () => {
    const org = await createTestOrg(ctx());
    const zone = json(
      await ctx().inject({
        method: 'POST',
        url: '/v1/cdn/pullzones',
        headers: org.admin.headers,
        payload: { name: `pg-${unique()}`, originUrl: origin.url },
      }),
    );
    assert.equal(
      (
        await ctx().inject({
          method: 'POST',
          url: `/v1/cdn/pullzones/${zone.id}/purge`,
          headers: org.admin.headers,
          payload: {},
        })
      ).statusCode,
      400,
    );
    assert.equal(
      (
        await ctx().inject({
          method: 'POST',
          url: `/v1/cdn/pullzones/${zone.id}/purge`,
          headers: org.admin.headers,
          payload: { url: '/a', tag: 'b' },
        })
      ).statusCode,
      400,
    );
    const ok = await ctx().inject({
      method: 'POST',
      url: `/v1/cdn/pullzones/${zone.id}/purge`,
      headers: org.admin.headers,
      payload: { url: `/${zone.name}/a/b.css*` },
    });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(json(ok).kind, 'prefix');
    assert.equal(json(ok).value, '/a/b.css');
  });

  it('a user without CDN Management gets 403; stats of a missing zone 404', async () => {
    const org = await createTestOrg(ctx());
    const user = await createTestUser(ctx(), org, { privileges: ['upload'] });
    assert.equal(
      (await ctx().inject({ method: 'GET', url: '/v1/cdn/pullzones', headers: user.headers })).statusCode,
      403,
    );
    assert.equal(
      (await ctx().inject({ method: 'GET', url: '/v1/cdn/pullzone/stats/12345678901', headers: org.admin.headers }))
        .statusCode,
      404,
    );
  });

  const zoneFor = async (c: ReturnType<typeof ctx>, org: { admin: { headers: Record<string, string> } }) =>
    json(
      await c.inject({
        method: 'POST',
        url: '/v1/cdn/pullzones',
        headers: org.admin.headers,
        payload: { name: `sec-${unique()}`, originUrl: origin.url },
      }),
    );
  securitySuite(ctx, '/v1/cdn/configure', {
    method: 'POST',
    privileges: ['cdn_management'],
    prepare: () => ({
      url: '/v1/cdn/configure',
      body: { name: `sec-${unique()}`, region: 'de', url: `s${unique()}.example.com` },
    }),
  });
  securitySuite(ctx, '/v1/cdn/configure', {
    method: 'PATCH',
    privileges: ['cdn_management'],
    prepare: () => ({ url: '/v1/cdn/configure', body: { enabled: true } }),
  });
  securitySuite(ctx, '/v1/cdn/publish', {
    method: 'POST',
    privileges: ['cdn_management'],
    prepare: async (c, org) => {
      await c.inject({
        method: 'POST',
        url: '/v1/cdn/configure',
        headers: org.admin.headers,
        payload: { name: `sec-${unique()}`, region: 'de', url: `s${unique()}.example.com` },
      });
      return {
        url: '/v1/cdn/publish',
        body: { assets: [(await uploadAsset(c, org, Buffer.from('x'), 'x.txt')).objectId] },
      };
    },
  });
  securitySuite(ctx, '/v1/cdn/unpublish', {
    method: 'POST',
    privileges: ['cdn_management'],
    prepare: () => ({ url: '/v1/cdn/unpublish', body: { assets: [crypto.randomUUID()] } }),
  });
  securitySuite(ctx, '/v1/cdn/pullzone/stats/{id}', {
    method: 'GET',
    privileges: ['cdn_management'],
    resource: true,
    prepare: async (c, org) => ({ url: `/v1/cdn/pullzone/stats/${(await zoneFor(c, org)).id}` }),
  });
  securitySuite(ctx, '/v1/cdn/pullzones', {
    method: 'POST',
    privileges: ['cdn_management'],
    prepare: () => ({ url: '/v1/cdn/pullzones', body: { name: `sec-${unique()}`, originUrl: origin.url } }),
  });
  securitySuite(ctx, '/v1/cdn/pullzones', {
    method: 'GET',
    privileges: ['cdn_management'],
    prepare: () => ({ url: '/v1/cdn/pullzones' }),
  });
  securitySuite(ctx, '/v1/cdn/pullzones/{id}', {
    method: 'GET',
    privileges: ['cdn_management'],
    resource: true,
    prepare: async (c, org) => ({ url: `/v1/cdn/pullzones/${(await zoneFor(c, org)).id}` }),
  });
  securitySuite(ctx, '/v1/cdn/pullzones/{id}', {
    method: 'PATCH',
    privileges: ['cdn_management'],
    resource: true,
    prepare: async (c, org) => ({ url: `/v1/cdn/pullzones/${(await zoneFor(c, org)).id}`, body: { enabled: true } }),
  });
  securitySuite(ctx, '/v1/cdn/pullzones/{id}', {
    method: 'DELETE',
    privileges: ['cdn_management'],
    resource: true,
    prepare: async (c, org) => ({ url: `/v1/cdn/pullzones/${(await zoneFor(c, org)).id}` }),
  });
  securitySuite(ctx, '/v1/cdn/pullzones/{id}/purge', {
    method: 'POST',
    privileges: ['cdn_management'],
    resource: true,
    prepare: async (c, org) => ({
      url: `/v1/cdn/pullzones/${(await zoneFor(c, org)).id}/purge`,
      body: { everything: true },
    }),
  });
  securitySuite(ctx, '/v1/cdn/pullzones/{id}/stats', {
    method: 'GET',
    privileges: ['cdn_management'],
    resource: true,
    prepare: async (c, org) => ({ url: `/v1/cdn/pullzones/${(await zoneFor(c, org)).id}/stats` }),
  });
  securitySuite(ctx, '/v1/cdn/pullzones/{id}/dashboard', {
    method: 'GET',
    privileges: ['cdn_management'],
    resource: true,
    prepare: async (c, org) => ({ url: `/v1/cdn/pullzones/${(await zoneFor(c, org)).id}/dashboard` }),
  });
  securitySuite(ctx, '/v1/cdn/pullzones/{id}/sign', {
    method: 'POST',
    privileges: ['cdn_management'],
    resource: true,
    prepare: async (c, org) => ({
      url: `/v1/cdn/pullzones/${(await zoneFor(c, org)).id}/sign`,
      body: { path: '/a.txt' },
    }),
  });
  it("lists the edges serving the organization's zones without their internal control addresses (issue 23, defect 12)", async () => {
    const org = await createTestOrg(ctx());
    const now = ctx().clock.now();
    await ctx()
      .deps.db.insertInto('cdn_edges')
      .values({
        id: `edge-${unique()}`,
        control_url: 'http://10.77.1.2:9911',
        region: 'ny',
        started_at: now,
        last_seen_at: now,
      })
      .execute();
    const res = await ctx().inject({ method: 'GET', url: '/v1/cdn/edges', headers: org.admin.headers });
    assert.equal(res.statusCode, 200, res.body);
    assert.ok(json(res).some((e: { region: string }) => e.region === 'ny'));
    assert.doesNotMatch(res.body, /10\.77\.1\.2|9911|controlUrl/);
  });

  securitySuite(ctx, '/v1/cdn/edges', {
    method: 'GET',
    privileges: ['cdn_management'],
    prepare: () => ({ url: '/v1/cdn/edges' }),
  });
});
