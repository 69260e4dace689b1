import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, it } from 'node:test';
import { forEachEngine, json, type TestContext } from '../../../test/helpers/context.ts';
import { createTestOrg, createTestUser, type TestOrg } from '../../../test/helpers/factories.ts';
import { loginForm } from '../../../test/helpers/oauth.ts';
import { securitySuite } from '../../../test/helpers/security.ts';
import type { Worker } from '../../core/jobs/worker.ts';
import { assetWorker, jpeg, pathOf, uploadAsset } from '../../../test/helpers/assets.ts';
import { seedWebAppClients, WEB_APP_CLIENT_ID } from '../auth/index.ts';
import { organizationIds } from '../identity/index.ts';

const PUBLIC_URL = 'http://127.0.0.1:43999';
const CALLBACK = `${PUBLIC_URL}/app/callback`;

/** The web app's sign-in, as its code does it: PKCE, the sign-in page, the code exchange as the public client `tessera-web`. */
async function webAppSignIn(ctx: TestContext, user: { username: string; password: string }, redirectUri = CALLBACK) {
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: WEB_APP_CLIENT_ID,
    redirect_uri: redirectUri,
    scope: 'openid offline_access tessera.api',
    state: 'st',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  const page = await ctx.inject({ method: 'GET', url: `/v1/oauth2/authorize?${query}` });
  if (page.statusCode !== 200) return { page };
  const { fields, cookie } = loginForm(page);
  const submitted = await ctx.inject({
    method: 'POST',
    url: '/v1/oauth2/authorize',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    payload: new URLSearchParams({
      ...fields,
      username: user.username,
      password: user.password,
      decision: 'allow',
    }).toString(),
  });
  if (submitted.statusCode !== 303) return { page, submitted };
  const location = new URL(String(submitted.headers.location));
  const token = await ctx.inject({
    method: 'POST',
    url: '/v1/oauth2/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      grant_type: 'authorization_code',
      client_id: WEB_APP_CLIENT_ID,
      code: location.searchParams.get('code')!,
      redirect_uri: redirectUri,
      code_verifier: verifier,
    }).toString(),
  });
  return { page, submitted, location, token };
}

const form = (body: Record<string, string>) => ({
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  payload: new URLSearchParams(body).toString(),
});

forEachEngine(
  'web app: served at /app, and its first-party OAuth client',
  (ctx) => {
    it('redirects / to /app/ and serves the app (or a page saying to build it) under a strict CSP', async () => {
      const root = await ctx().inject({ method: 'GET', url: '/' });
      assert.equal(root.statusCode, 302);
      assert.equal(root.headers.location, '/app/');
      for (const url of ['/app', '/app/', '/app/asset/123', '/app/collections']) {
        const res = await ctx().inject({ method: 'GET', url });
        assert.ok([200, 503].includes(res.statusCode), `${url}: ${res.statusCode}`);
        assert.match(String(res.headers['content-type']), /^text\/html/);
        const csp = String(res.headers['content-security-policy']);
        assert.match(csp, /default-src 'none'/);
        assert.match(csp, /script-src 'self';/);
        assert.match(csp, /style-src 'self';/);
        assert.match(csp, /frame-ancestors 'none'/);
        assert.doesNotMatch(csp, /unsafe/);
      }
      const missing = await ctx().inject({ method: 'GET', url: '/app/assets/not-there-123.js' });
      assert.equal(missing.statusCode, 404);
      assert.equal(missing.json().code, 'not_found');
    });

    it('signs a user of any organization in as tessera-web (code + PKCE), refreshes with rotation, and revokes', async () => {
      const org = await createTestOrg(ctx());
      const user = await createTestUser(ctx(), org);
      const { page, location, token } = await webAppSignIn(ctx(), user);
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /Sign in to Tessera/);
      assert.doesNotMatch(page.body, /asks to access your account/, 'a first-party sign-in, no consent list');
      assert.equal(location!.origin + location!.pathname, CALLBACK);
      assert.equal(token!.statusCode, 200, token!.body);
      const tokens = json(token!);
      assert.ok(tokens.refresh_token.startsWith('rt_'));
      const me = await ctx().inject({
        method: 'GET',
        url: '/v1/user',
        headers: { authorization: `Bearer ${tokens.access_token}` },
      });
      assert.equal(json(me).userId, user.userId);

      const refreshed = await ctx().inject({
        method: 'POST',
        url: '/v1/oauth2/token',
        ...form({ grant_type: 'refresh_token', client_id: WEB_APP_CLIENT_ID, refresh_token: tokens.refresh_token }),
      });
      assert.equal(refreshed.statusCode, 200, refreshed.body);
      const next = json(refreshed);
      assert.notEqual(next.refresh_token, tokens.refresh_token);

      // The organization's client row holds the session: its administrators see it.
      const clients = json(
        await ctx().inject({ method: 'GET', url: '/v1/oauth2/clients', headers: org.admin.headers }),
      ).clients;
      assert.ok(clients.some((c: { name: string }) => c.name === 'Tessera web app'));

      const revoked = await ctx().inject({
        method: 'POST',
        url: '/v1/oauth2/revoke',
        ...form({ client_id: WEB_APP_CLIENT_ID, token: next.refresh_token }),
      });
      assert.equal(revoked.statusCode, 200);
      assert.equal(
        (
          await ctx().inject({
            method: 'GET',
            url: '/v1/user',
            headers: { authorization: `Bearer ${next.access_token}` },
          })
        ).statusCode,
        401,
      );
    });

    it("accepts only the app's own callback on the public URL's origin (loopback names alike)", async () => {
      const org = await createTestOrg(ctx());
      const user = await createTestUser(ctx(), org);
      assert.equal((await webAppSignIn(ctx(), user, 'http://localhost:43999/app/callback')).token?.statusCode, 200);
      for (const bad of [
        'https://evil.example/app/callback',
        'http://127.0.0.1:43998/app/callback',
        `${PUBLIC_URL}/app/other`,
        `${CALLBACK}?x=1`,
      ]) {
        const { page } = await webAppSignIn(ctx(), user, bad);
        assert.equal(page.statusCode, 400, bad);
        assert.match(page.body, /redirect_uri/);
      }
    });

    it("a token of one organization's web-app session is not another's, and a deleted web-app client turns the app off", async () => {
      const org = await createTestOrg(ctx());
      const user = await createTestUser(ctx(), org);
      const other = await createTestOrg(ctx());
      const otherUser = await createTestUser(ctx(), other);
      const a = json((await webAppSignIn(ctx(), user)).token!);
      const b = json((await webAppSignIn(ctx(), otherUser)).token!);
      assert.notEqual(a.refresh_token, b.refresh_token);

      const clientId = json(
        await ctx().inject({ method: 'GET', url: '/v1/oauth2/clients', headers: org.admin.headers }),
      ).clients.find((c: { name: string }) => c.name === 'Tessera web app').clientId;
      assert.equal(
        (await ctx().inject({ method: 'DELETE', url: `/v1/oauth2/clients/${clientId}`, headers: org.admin.headers }))
          .statusCode,
        204,
      );
      const refused = await ctx().inject({
        method: 'POST',
        url: '/v1/oauth2/token',
        ...form({ grant_type: 'refresh_token', client_id: WEB_APP_CLIENT_ID, refresh_token: a.refresh_token }),
      });
      assert.equal(refused.statusCode, 400);
      const { submitted } = await webAppSignIn(ctx(), user);
      assert.equal(submitted!.statusCode, 403);
      assert.match(submitted!.body, /turned off/);
      // Start-up seeding leaves a deleted client deleted; the other organization is unaffected.
      await seedWebAppClients(ctx().deps.db, Date.now(), await organizationIds(ctx().deps.db));
      assert.equal((await webAppSignIn(ctx(), user)).submitted!.statusCode, 403);
      assert.equal((await webAppSignIn(ctx(), otherUser)).token!.statusCode, 200);
    });
  },
  { env: { TESSERA_PUBLIC_URL: PUBLIC_URL } },
);

forEachEngine('assets: signed rendition URLs for <img> (GetRenditionUrls)', (ctx) => {
  let org: TestOrg;
  let worker: Worker;
  before(async () => {
    org = await createTestOrg(ctx());
    worker = assetWorker(ctx());
  });
  after(async () => worker.stop());

  it('hands a viewer hour-aligned signed URLs that load without credentials, and leaves out what the caller may not view', async () => {
    const created = await uploadAsset(ctx(), org, await jpeg(400, 300), 'harbour.jpg');
    await worker.drain();
    const stranger = await createTestOrg(ctx());
    const body = {
      ids: [created.objectId, '00000000-0000-7000-8000-000000000000'],
      renditions: ['imageThumb', 'imagePreview'],
    };
    const res = await ctx().inject({
      method: 'POST',
      url: '/v1/asset/rendition-urls',
      headers: org.admin.headers,
      payload: body,
    });
    assert.equal(res.statusCode, 200, res.body);
    const answer = json(res);
    assert.deepEqual(Object.keys(answer.urls), [created.objectId]);
    assert.deepEqual(Object.keys(answer.urls[created.objectId]).sort(), ['imagePreview', 'imageThumb']);
    assert.equal(answer.expires % 3_600_000, 0, 'aligned to the hour');
    assert.ok(answer.expires - Date.now() >= 3_600_000 - 60_000);
    const again = json(
      await ctx().inject({
        method: 'POST',
        url: '/v1/asset/rendition-urls',
        headers: org.admin.headers,
        payload: body,
      }),
    );
    assert.equal(
      again.urls[created.objectId].imageThumb,
      answer.urls[created.objectId].imageThumb,
      'the same URL while the hour lasts (browser cache)',
    );
    const image = await ctx().inject({ method: 'GET', url: pathOf(answer.urls[created.objectId].imageThumb) });
    assert.equal(image.statusCode, 200);
    assert.equal(image.headers['content-type'], 'image/jpeg');
    const tampered = await ctx().inject({
      method: 'GET',
      url: pathOf(answer.urls[created.objectId].imageThumb).replace('imageThumb', 'mezzaninePreview'),
    });
    assert.equal(tampered.statusCode, 403);
    // Any rendition name is asked for (the media renditions add videoProxy, page previews…): one the asset lacks is left out.
    const media = json(
      await ctx().inject({
        method: 'POST',
        url: '/v1/asset/rendition-urls',
        headers: org.admin.headers,
        payload: { ids: [created.objectId], renditions: ['imageThumb', 'videoProxy', 'constructor'] },
      }),
    );
    assert.deepEqual(Object.keys(media.urls[created.objectId]), ['imageThumb']);
    const hidden = json(
      await ctx().inject({
        method: 'POST',
        url: '/v1/asset/rendition-urls',
        headers: stranger.admin.headers,
        payload: body,
      }),
    );
    assert.deepEqual(hidden.urls, {}, 'another organization sees nothing');
  });

  it('names the bad field: no ids, too many, an unknown rendition', async () => {
    for (const [payload, field] of [
      [{ ids: [] }, 'ids'],
      [{ ids: Array.from({ length: 201 }, (_, i) => String(i)) }, 'ids'],
      [{ ids: ['x'], renditions: ['original'] }, 'renditions'],
      [{ ids: ['x'], renditions: ['../x'] }, 'renditions'],
    ] as const) {
      const res = await ctx().inject({
        method: 'POST',
        url: '/v1/asset/rendition-urls',
        headers: org.admin.headers,
        payload,
      });
      assert.equal(res.statusCode, 400, res.body);
      assert.match(res.body, new RegExp(field));
    }
  });

  securitySuite(ctx, 'POST /v1/asset/rendition-urls', {
    method: 'POST',
    readScope: true,
    prepare: () => ({ url: '/v1/asset/rendition-urls', body: { ids: ['00000000-0000-7000-8000-000000000000'] } }),
  });
});
