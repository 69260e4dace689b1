import assert from 'node:assert/strict';
import { it } from 'node:test';
import sharp from 'sharp';
import { forEachEngine, json, type TestContext } from '../../../test/helpers/context.ts';
import { createTestOrg, createTestUser, type TestOrg } from '../../../test/helpers/factories.ts';
import { PERMISSIONS } from '../../core/authz/catalog.ts';
import { jpeg, uploadAsset } from '../../../test/helpers/assets.ts';
import { securitySuite } from '../../../test/helpers/security.ts';
import { signLaunch } from './launch-token.ts';

const MISSING = '0190a0a0-0000-7000-8000-00000000beef';

forEachEngine('adaptive templates: reference operations', (ctx) => {
  it('POST /v1/template accepts the reference body and answers a search result', async () => {
    const org = await createTestOrg(ctx());
    for (const payload of [
      {
        from: 0,
        limit: 50,
        searchTerm: ['*'],
        sortBy: [{ metadataDefinitionSearchField: 'template_title', order: 'asc' }],
        operation: 'AND',
      },
      { from: 0, limit: null, searchTerm: null, sortBy: null, operation: 'OR' },
      {},
    ]) {
      const res = await ctx().inject({
        method: 'POST',
        url: '/v1/template/',
        headers: { ...org.admin.headers, 'content-type': 'application/json' },
        payload,
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(json(res), { hitCount: 0, totalCount: 0, from: 0, limit: 50, result: [] });
    }
    const plain = await ctx().inject({
      method: 'POST',
      url: '/v1/template',
      headers: org.admin.headers,
      payload: { from: 0, limit: 10 },
    });
    assert.equal(plain.statusCode, 200, plain.body);
    for (const [payload, field] of [
      [{ limit: 101 }, 'limit'],
      [{ from: 10_001 }, 'from'],
      [{ operation: 'XOR' }, 'body.operation'],
      [{ sortBy: [{ metadataDefinitionSearchField: 'colour' }] }, 'body.sortBy.0.metadataDefinitionSearchField'],
      [{ sortBy: [{ metadataDefinitionSearchField: 'title', order: 'up' }] }, 'body.sortBy.0.order'],
    ] as const) {
      const res = await ctx().inject({ method: 'POST', url: '/v1/template', headers: org.admin.headers, payload });
      assert.equal(res.statusCode, 400, res.body);
      assert.ok(res.body.includes(field), res.body);
    }
  });

  it('POST /v1/template/launch: 404 for a template that does not exist or is not visible; 400 without templateId', async () => {
    const org = await createTestOrg(ctx());
    const res = await ctx().inject({
      method: 'POST',
      url: '/v1/template/launch',
      headers: org.admin.headers,
      payload: { templateId: MISSING },
    });
    assert.equal(res.statusCode, 404);
    const bad = await ctx().inject({
      method: 'POST',
      url: '/v1/template/launch',
      headers: org.admin.headers,
      payload: {},
    });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.body, /templateId/);
  });

  it('refuses to register an asset that does not exist, and launch pages of bad, forged or expired tokens are 404', async () => {
    const org = await createTestOrg(ctx());
    const res = await ctx().inject({
      method: 'POST',
      url: '/v1/adaptive-templates',
      headers: org.admin.headers,
      payload: { assetId: MISSING },
    });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(json(res).details, [{ field: 'body.assetId', message: 'asset not found' }]);
    const forged = signLaunch(
      { ...ctx().deps.keys, hash: () => 'x'.repeat(43) },
      { t: MISSING, u: org.admin.userId, o: org.orgId, e: Date.now() + 60_000 },
    );
    const expired = signLaunch(ctx().deps.keys, {
      t: MISSING,
      u: org.admin.userId,
      o: org.orgId,
      e: ctx().clock.now() - 1,
    });
    const unknownTemplate = signLaunch(ctx().deps.keys, {
      t: MISSING,
      u: org.admin.userId,
      o: org.orgId,
      e: ctx().clock.now() + 60_000,
    });
    for (const token of [forged, expired, unknownTemplate, 'x'.repeat(40)]) {
      for (const suffix of ['', '/render']) {
        const page = await ctx().inject({ method: 'GET', url: `/adaptive-templates/launch/${token}${suffix}` });
        assert.equal(page.statusCode, 404, `${suffix} ${page.body}`);
      }
      const save = await ctx().inject({
        method: 'POST',
        url: `/adaptive-templates/launch/${token}/save`,
        payload: { values: {} },
      });
      assert.equal(save.statusCode, 404);
    }
  });
});

forEachEngine('adaptive templates: security suite', (ctx) => {
  const routes: [string, Parameters<typeof securitySuite>[2]][] = [
    [
      '/v1/template',
      { method: 'POST', readScope: true, prepare: () => ({ url: '/v1/template', body: { from: 0, limit: 10 } }) },
    ],
    [
      '/v1/template/launch',
      { method: 'POST', prepare: () => ({ url: '/v1/template/launch', body: { templateId: MISSING } }) },
    ],
    [
      '/v1/adaptive-templates',
      {
        method: 'POST',
        privileges: ['upload'],
        prepare: () => ({ url: '/v1/adaptive-templates', body: { assetId: MISSING } }),
      },
    ],
    ['/v1/adaptive-templates/{id}', { method: 'GET', prepare: () => ({ url: `/v1/adaptive-templates/${MISSING}` }) }],
    [
      '/v1/adaptive-templates/{id}',
      { method: 'DELETE', privileges: ['upload'], prepare: () => ({ url: `/v1/adaptive-templates/${MISSING}` }) },
    ],
  ];
  for (const [name, route] of routes) securitySuite(ctx, name, route);
});

const BANNER = `<svg xmlns="http://www.w3.org/2000/svg" width="400" height="200" viewBox="0 0 400 200">
<rect width="400" height="200" fill="{{background|#0b5cad}}"/>
<text x="20" y="90" font-family="sans-serif" font-size="36" fill="#fff">{{headline|Spring sale}}</text>
<text x="20" y="150" font-family="sans-serif" font-size="20" fill="#fff">{{subline}}</text></svg>`;

async function svgAsset(
  ctx: TestContext,
  org: TestOrg,
  source = BANNER,
  filename = 'banner.svg',
  templateIds = [org.defaultTemplateId],
) {
  return (await uploadAsset(ctx, org, Buffer.from(source), filename, { securityTemplateIds: templateIds })).objectId;
}

async function register(ctx: TestContext, org: TestOrg, body: Record<string, unknown>) {
  const res = await ctx.inject({
    method: 'POST',
    url: '/v1/adaptive-templates',
    headers: org.admin.headers,
    payload: body,
  });
  assert.equal(res.statusCode, 201, res.body);
  return json(res);
}

forEachEngine('adaptive templates: launch, fill, render, save', (ctx) => {
  it('registers an SVG asset, finds it, launches it, renders it with values and saves a derivative asset', async () => {
    const org = await createTestOrg(ctx());
    const assetId = await svgAsset(ctx(), org);
    const template = await register(ctx(), org, {
      assetId,
      description: 'Social banner 400×200',
      fields: [{ name: 'headline', label: 'Headline text', maxLength: 40 }],
    });
    assert.equal(template.objectId, assetId);
    assert.equal(template.kind, 'svg');
    assert.equal(template.metadataDocument.template_title, 'banner');
    assert.deepEqual(
      template.fields.map((f: any) => [f.name, f.label, f.default, f.maxLength]),
      [
        ['background', 'Background', '#0b5cad', 200],
        ['headline', 'Headline text', 'Spring sale', 40],
        ['subline', 'Subline', '', 200],
      ],
    );
    const dup = await ctx().inject({
      method: 'POST',
      url: '/v1/adaptive-templates',
      headers: org.admin.headers,
      payload: { assetId },
    });
    assert.equal(dup.statusCode, 409);

    const found = json(
      await ctx().inject({
        method: 'POST',
        url: '/v1/template',
        headers: org.admin.headers,
        payload: {
          from: 0,
          limit: 10,
          searchTerm: ['SOCIAL', 'banner'],
          operation: 'AND',
          sortBy: [{ metadataDefinitionSearchField: 'createdEpoch', order: 'desc' }],
        },
      }),
    );
    assert.equal(found.totalCount, 1);
    assert.equal(found.result[0].templateId, template.templateId);
    assert.equal(
      json(
        await ctx().inject({
          method: 'POST',
          url: '/v1/template',
          headers: org.admin.headers,
          payload: { searchTerm: ['social', 'poster'] },
        }),
      ).totalCount,
      0,
    );
    assert.equal(
      json(
        await ctx().inject({
          method: 'POST',
          url: '/v1/template',
          headers: org.admin.headers,
          payload: { searchTerm: ['social', 'poster'], operation: 'OR' },
        }),
      ).totalCount,
      1,
    );

    const launch = await ctx().inject({
      method: 'POST',
      url: '/v1/template/launch',
      headers: org.admin.headers,
      payload: { templateId: template.templateId },
    });
    assert.equal(launch.statusCode, 200, launch.body);
    const { url, expiresAt } = json(launch);
    assert.equal(Date.parse(expiresAt), ctx().clock.now() + 3_600_000);
    const path = new URL(url).pathname;
    assert.match(path, /^\/adaptive-templates\/launch\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);

    const page = await ctx().inject({ method: 'GET', url: `${path}?f_headline=Hello%20%3Cworld%3E` });
    assert.equal(page.statusCode, 200, page.body);
    assert.match(page.headers['content-security-policy'] as string, /default-src 'none'/);
    assert.doesNotMatch(page.body, /<script/);
    assert.match(
      page.body,
      /<input type="text" id="f_headline" name="f_headline" maxlength="40" value="Hello &lt;world&gt;">/,
    );
    assert.ok(
      page.body.includes(`<img class="result" id="result" src="${path}/render?f_headline=Hello+%3Cworld%3E"`),
      page.body,
    );
    assert.ok(page.body.includes(`formaction="${path}/save"`));

    const png = await ctx().inject({ method: 'GET', url: `${path}/render?f_headline=Hello&f_background=%2300ff00` });
    assert.equal(png.statusCode, 200, png.body);
    assert.equal(png.headers['content-type'], 'image/png');
    const meta = await sharp(png.rawPayload).metadata();
    assert.deepEqual([meta.width, meta.height], [400, 200]);
    const { data } = await sharp(png.rawPayload)
      .extract({ left: 395, top: 5, width: 1, height: 1 })
      .raw()
      .toBuffer({ resolveWithObject: true });
    assert.deepEqual([...data.subarray(0, 3)], [0, 255, 0]);
    for (const q of ['f_nope=1', `f_headline=${'x'.repeat(41)}`]) {
      const bad = await ctx().inject({ method: 'GET', url: `${path}/render?${q}` });
      assert.equal(bad.statusCode, 400, bad.body);
    }
    assert.equal((await ctx().inject({ method: 'GET', url: `${path}?f_nope=1` })).statusCode, 400);

    const saved = await ctx().inject({
      method: 'POST',
      url: `${path}/save`,
      payload: { values: { headline: 'Hello', background: '#00ff00' }, filename: 'hello-banner' },
    });
    assert.equal(saved.statusCode, 201, saved.body);
    const result = json(saved);
    assert.equal(result.relationship, 'derivative');
    assert.equal(result.templateId, template.templateId);
    const derived = json(
      await ctx().inject({ method: 'GET', url: `/v1/asset/${result.assetId}`, headers: org.admin.headers }),
    );
    assert.equal(derived.filename, 'hello-banner.png');
    assert.equal(derived.createdBy, org.admin.userId);
    assert.deepEqual(derived.securityTemplateIds, [org.defaultTemplateId]);
    const content = await ctx()
      .deps.db.selectFrom('assets')
      .select(['content_type', 'size'])
      .where('id', '=', result.assetId)
      .executeTakeFirstOrThrow();
    assert.equal(content.content_type, 'image/png');
    const links = await ctx()
      .deps.db.selectFrom('asset_links')
      .selectAll()
      .where('secondary_id', '=', result.assetId)
      .execute();
    assert.deepEqual(
      links.map((l) => [l.primary_id, l.link_type]),
      [[assetId, 'derivative']],
    );

    // A form post (the page's Save button) answers the page with the new asset.
    const form = await ctx().inject({
      method: 'POST',
      url: `${path}/save`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'f_headline=From+the+form&filename=',
    });
    assert.equal(form.statusCode, 200, form.body);
    assert.match(form.body, /Saved as a new asset: <code>[0-9a-f-]{36}<\/code>/);
    const badSave = await ctx().inject({ method: 'POST', url: `${path}/save`, payload: { values: { nope: 'x' } } });
    assert.equal(badSave.statusCode, 400);
    assert.equal(json(badSave).details[0].field, 'body.values.nope');

    // The URL expires.
    ctx().clock.advance(3_600_000);
    assert.equal((await ctx().inject({ method: 'GET', url: path })).statusCode, 404);
  });

  it('follows the template asset: others see templates only of assets they may view; saving needs Upload', async () => {
    const org = await createTestOrg(ctx());
    const hidden = await ctx().inject({
      method: 'POST',
      url: '/v1/security/template',
      headers: org.admin.headers,
      payload: {
        templateName: `admins-${Math.random()}`,
        securityDenormalized: [{ groupId: org.groups.administrators, permissions: [PERMISSIONS.view.id] }],
      },
    });
    const secret = await register(ctx(), org, {
      assetId: await svgAsset(ctx(), org, BANNER, 'secret.svg', [json(hidden).templateId]),
    });
    const open = await register(ctx(), org, { assetId: await svgAsset(ctx(), org, BANNER, 'open.svg') });
    const viewer = await createTestUser(ctx(), org, { privileges: [] });
    const list = json(
      await ctx().inject({ method: 'POST', url: '/v1/template', headers: viewer.headers, payload: {} }),
    );
    assert.deepEqual(
      list.result.map((t: any) => t.templateId),
      [open.templateId],
    );
    assert.equal(
      (
        await ctx().inject({
          method: 'GET',
          url: `/v1/adaptive-templates/${secret.templateId}`,
          headers: viewer.headers,
        })
      ).statusCode,
      404,
    );
    assert.equal(
      (
        await ctx().inject({
          method: 'POST',
          url: '/v1/template/launch',
          headers: viewer.headers,
          payload: { templateId: secret.templateId },
        })
      ).statusCode,
      404,
    );
    const launch = json(
      await ctx().inject({
        method: 'POST',
        url: '/v1/template/launch',
        headers: viewer.headers,
        payload: { templateId: open.templateId },
      }),
    );
    const path = new URL(launch.url).pathname;
    const page = await ctx().inject({ method: 'GET', url: path });
    assert.equal(page.statusCode, 200);
    assert.doesNotMatch(page.body, /id="save"/, 'no save button without Upload');
    assert.equal((await ctx().inject({ method: 'GET', url: `${path}/render` })).statusCode, 200);
    assert.equal(
      (await ctx().inject({ method: 'POST', url: `${path}/save`, payload: { values: {} } })).statusCode,
      403,
    );
    // Disabled launcher: the URL stops working.
    await ctx().deps.db.updateTable('users').set({ status: 'disabled' }).where('id', '=', viewer.userId).execute();
    assert.equal((await ctx().inject({ method: 'GET', url: path })).statusCode, 404);
  });

  it('refuses assets that are not usable templates, and serves HTML templates sandboxed', async () => {
    const org = await createTestOrg(ctx());
    const photo = (await uploadAsset(ctx(), org, await jpeg(), 'photo.jpg')).objectId;
    const external = await svgAsset(
      ctx(),
      org,
      '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><image href="file:///etc/passwd"/>{{x}}</svg>',
      'evil.svg',
    );
    const noFields = await svgAsset(
      ctx(),
      org,
      '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>',
      'plain.svg',
    );
    for (const [assetId, message] of [
      [photo, /SVG or HTML/],
      [external, /external resource/],
      [noFields, /names no fields/],
    ] as const) {
      const res = await ctx().inject({
        method: 'POST',
        url: '/v1/adaptive-templates',
        headers: org.admin.headers,
        payload: { assetId },
      });
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(json(res).details[0].field, 'body.assetId');
      assert.match(json(res).message, message);
    }
    const badOverride = await ctx().inject({
      method: 'POST',
      url: '/v1/adaptive-templates',
      headers: org.admin.headers,
      payload: { assetId: await svgAsset(ctx(), org, BANNER, 'b2.svg'), fields: [{ name: 'colour' }] },
    });
    assert.equal(badOverride.statusCode, 400);
    assert.equal(json(badOverride).details[0].field, 'body.fields.0.name');

    const html = await svgAsset(
      ctx(),
      org,
      '<!doctype html><html><body><h1>{{title|Hello}}</h1><script>alert(1)</script></body></html>',
      'card.html',
    );
    const template = await register(ctx(), org, { assetId: html, name: 'Card' });
    assert.equal(template.kind, 'html');
    const path = new URL(
      json(
        await ctx().inject({
          method: 'POST',
          url: '/v1/template/launch',
          headers: org.admin.headers,
          payload: { templateId: template.templateId },
        }),
      ).url,
    ).pathname;
    const rendered = await ctx().inject({ method: 'GET', url: `${path}/render?f_title=%3Cb%3EHi%3C%2Fb%3E` });
    assert.equal(rendered.statusCode, 200);
    assert.match(rendered.headers['content-type'] as string, /^text\/html/);
    assert.match(rendered.headers['content-security-policy'] as string, /^sandbox;/);
    assert.match(rendered.body, /<h1>&lt;b&gt;Hi&lt;\/b&gt;<\/h1>/);
    const page = await ctx().inject({ method: 'GET', url: path });
    assert.ok(page.body.includes(`<iframe class="result" id="result" sandbox src="${path}/render`), page.body);
    assert.equal(
      (
        await ctx().inject({
          method: 'DELETE',
          url: `/v1/adaptive-templates/${template.templateId}`,
          headers: org.admin.headers,
        })
      ).statusCode,
      204,
    );
    assert.equal((await ctx().inject({ method: 'GET', url: path })).statusCode, 404);
  });
});
