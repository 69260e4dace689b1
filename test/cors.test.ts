import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine } from './helpers/context.ts';
import { login } from './helpers/auth.ts';
import { createTestOrg } from './helpers/factories.ts';
import { ConfigError, parseConfig } from '../src/config.ts';

const APP = 'https://app.example.com';

forEachEngine(
  'CORS with TESSERA_CORS_ORIGINS',
  (ctx) => {
    it('answers a preflight before authentication, allowing the credential headers', async () => {
      const res = await ctx().inject({
        method: 'OPTIONS',
        url: '/v1/user',
        headers: {
          origin: APP,
          'access-control-request-method': 'PATCH',
          'access-control-request-headers': 'accesstoken, authorization, x-api-key, content-type',
        },
      });
      assert.equal(res.statusCode, 204, res.body);
      assert.equal(res.headers['access-control-allow-origin'], APP);
      const allowed = String(res.headers['access-control-allow-headers']).toLowerCase();
      for (const header of ['accesstoken', 'authorization', 'x-api-key', 'content-type'])
        assert.ok(allowed.includes(header), `${header} in ${allowed}`);
      assert.match(String(res.headers['access-control-allow-methods']), /PATCH/);
      assert.match(String(res.headers.vary), /Origin/i);
    });

    it('puts the headers on answers and on errors, for listed origins only', async () => {
      const org = await createTestOrg(ctx());
      const session = await login(ctx(), org.admin);
      const ok = await ctx().inject({
        method: 'GET',
        url: '/v1/user',
        headers: { origin: 'http://localhost:3000', accesstoken: session.session.accessToken },
      });
      assert.equal(ok.statusCode, 200);
      assert.equal(ok.headers['access-control-allow-origin'], 'http://localhost:3000');
      assert.match(String(ok.headers['access-control-expose-headers']), /X-Request-Id/);
      const denied = await ctx().inject({ method: 'GET', url: '/v1/user', headers: { origin: APP } });
      assert.equal(denied.statusCode, 401);
      assert.equal(denied.headers['access-control-allow-origin'], APP, 'a browser client can read the 401');
      const stranger = await ctx().inject({
        method: 'GET',
        url: '/v1/user',
        headers: { origin: 'https://evil.example', accesstoken: session.session.accessToken },
      });
      assert.equal(stranger.headers['access-control-allow-origin'], undefined);
      const strangerPreflight = await ctx().inject({
        method: 'OPTIONS',
        url: '/v1/user',
        headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET' },
      });
      assert.equal(strangerPreflight.headers['access-control-allow-origin'], undefined);
    });
  },
  { env: { TESSERA_CORS_ORIGINS: `${APP}, http://localhost:3000` } },
);

forEachEngine('CORS by default', (ctx) => {
  it('allows no origin unless configured', async () => {
    const res = await ctx().inject({ method: 'GET', url: '/healthz', headers: { origin: APP } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['access-control-allow-origin'], undefined);
    const preflight = await ctx().inject({
      method: 'OPTIONS',
      url: '/v1/user',
      headers: { origin: APP, 'access-control-request-method': 'GET' },
    });
    assert.equal(preflight.headers['access-control-allow-origin'], undefined);
    assert.ok(preflight.statusCode >= 400 && preflight.statusCode < 500);
  });
});

it('TESSERA_CORS_ORIGINS is validated at start', () => {
  assert.deepEqual(parseConfig({ TESSERA_CORS_ORIGINS: '*' }).corsOrigins, ['*']);
  assert.deepEqual(parseConfig({ TESSERA_CORS_ORIGINS: 'https://a.example, https://b.example:8443/' }).corsOrigins, [
    'https://a.example',
    'https://b.example:8443',
  ]);
  assert.deepEqual(parseConfig({}).corsOrigins, []);
  for (const bad of ['app.example.com', 'https://a.example/path', 'ftp://a.example', '*, https://a.example']) {
    assert.throws(
      () => parseConfig({ TESSERA_CORS_ORIGINS: bad }),
      (e: unknown) => e instanceof ConfigError && e.variable === 'TESSERA_CORS_ORIGINS',
      bad,
    );
  }
});
