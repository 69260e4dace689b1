// Issue 8, item 8: the smaller hardening cases.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine, json } from './helpers/context.ts';
import { login } from './helpers/auth.ts';
import { createTestOrg } from './helpers/factories.ts';

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

forEachEngine(
  'hardening: webhook targets are no DNS oracle',
  (ctx) => {
    it('a host that does not resolve and one that resolves to loopback get the same answer, without the address, naming the setting', async () => {
      const org = await createTestOrg(ctx());
      const messages = new Set<string>();
      for (const url of [
        'http://localhost:9/hook',
        'http://no-such-host-tessera.invalid/hook',
        'http://127.0.0.1/hook',
      ]) {
        const res = await ctx().inject({
          method: 'POST',
          url: '/webhooks/endpoint',
          headers: org.admin.headers,
          payload: [{ description: 'Oracle probe', url, eventTypes: ['*'] }],
        });
        assert.equal(res.statusCode, 400, res.body);
        const body = json(res);
        assert.equal(body.details[0].field, 'body.0.url');
        assert.doesNotMatch(
          res.body,
          /127\.0\.0\.1(?!\/hook)|::1|ENOTFOUND|EAI_|resolve[sd]? to a non-public|cannot resolve/,
          url,
        );
        assert.match(body.message, /TESSERA_ALLOW_PRIVATE_TARGETS=true/);
        messages.add(body.message);
      }
      assert.equal(messages.size, 1, [...messages].join('\n'));
      // Shape problems are still explained.
      const creds = await ctx().inject({
        method: 'POST',
        url: '/webhooks/endpoint',
        headers: org.admin.headers,
        payload: [{ description: 'Creds', url: 'https://u:p@example.com/hook', eventTypes: ['*'] }],
      });
      assert.match(json(creds).message, /credentials/);
    });
  },
  { env: { TESSERA_ALLOW_PRIVATE_TARGETS: 'false' } },
);

forEachEngine('hardening: tokens, OAuth errors, redirect URIs, long paths', (ctx) => {
  it('refuses JWTs whose base64url is not canonical (padding, flipped unused bits)', async () => {
    const org = await createTestOrg(ctx());
    const token = (await login(ctx(), org.admin)).session.accessToken;
    const use = (t: string) => ctx().inject({ method: 'GET', url: '/v1/user', headers: { accesstoken: t } });
    assert.equal((await use(token)).statusCode, 200);
    const parts = token.split('.');
    const variants: string[] = [`${token}==`, `${token}=`, `${parts[0]}.${parts[1]}=.${parts[2]}`];
    for (let i = 0; i < 3; i++) {
      const part = parts[i]!;
      if (part.length % 4 === 0) continue;
      const last = part.at(-1)!;
      const flipped = part.slice(0, -1) + B64URL[B64URL.indexOf(last) ^ 1];
      assert.deepEqual(
        Buffer.from(flipped, 'base64url'),
        Buffer.from(part, 'base64url'),
        'the same bytes, another spelling',
      );
      variants.push(parts.map((p, j) => (j === i ? flipped : p)).join('.'));
    }
    assert.ok(variants.length >= 5);
    for (const variant of variants) assert.equal((await use(variant)).statusCode, 401, variant.slice(-12));
    assert.equal((await use(token)).statusCode, 200, 'the canonical token still works');
  });

  it('OAuth token and revocation endpoints answer every failure with RFC 6749 error codes', async () => {
    const cases: { url: string; headers: Record<string, string>; payload: string }[] = [
      {
        url: '/v1/oauth2/token',
        headers: { 'content-type': 'application/json' },
        payload: '{"grant_type":"refresh_token"}',
      },
      {
        url: '/v1/oauth2/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: `grant_type=${'x'.repeat(3000)}`,
      },
      { url: '/v1/oauth2/token', headers: { 'content-type': 'text/plain' }, payload: 'grant_type=refresh_token' },
      { url: '/v1/oauth2/revoke', headers: { 'content-type': 'application/json' }, payload: '{"token":"x"}' },
      { url: '/v1/oauth2/revoke', headers: { 'content-type': 'text/plain' }, payload: 'token=x' },
    ];
    const RFC6749 = [
      'invalid_request',
      'invalid_client',
      'invalid_grant',
      'unauthorized_client',
      'unsupported_grant_type',
      'invalid_scope',
    ];
    for (const c of cases) {
      const res = await ctx().inject({ method: 'POST', ...c });
      assert.ok(res.statusCode === 400 || res.statusCode === 401, `${c.url} ${c.headers['content-type']}: ${res.body}`);
      const body = json(res);
      assert.ok(RFC6749.includes(body.error), res.body);
      assert.equal(body.status, undefined, "not Tessera's general error format");
      if (!c.payload.startsWith('{'))
        assert.equal(
          body.error,
          'invalid_request',
          `${c.url} ${c.headers['content-type']} ${c.payload.slice(0, 20)}: ${res.body}`,
        );
      assert.equal(typeof body.error_description, 'string');
      assert.equal(res.headers['cache-control'], 'no-store');
    }
    const unknown = await ctx().inject({
      method: 'POST',
      url: '/v1/oauth2/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'grant_type=refresh_token&refresh_token=rt_x&client_id=nope',
    });
    assert.equal(unknown.statusCode, 401);
    assert.equal(json(unknown).error, 'invalid_client');
  });

  it('refuses redirect URIs with user information', async () => {
    const org = await createTestOrg(ctx());
    for (const uri of [
      'https://user:pass@app.example.com/cb',
      'https://user@app.example.com/cb',
      'http://evil@127.0.0.1/cb',
    ]) {
      const res = await ctx().inject({
        method: 'POST',
        url: '/v1/oauth2/clients',
        headers: org.admin.headers,
        payload: { name: 'Phish', redirectUris: [uri] },
      });
      assert.equal(res.statusCode, 400, `${uri}: ${res.body}`);
      assert.match(json(res).message, /user information/);
    }
    const fine = await ctx().inject({
      method: 'POST',
      url: '/v1/oauth2/clients',
      headers: org.admin.headers,
      payload: { name: 'Fine', redirectUris: ['https://app.example.com/cb?next=a@b'] },
    });
    assert.equal(fine.statusCode, 201, fine.body);
  });

  it("an over-long path answers in Tessera's error format", async () => {
    const res = await ctx().inject({ method: 'GET', url: `/v1/user/${'a'.repeat(600)}` });
    assert.equal(res.statusCode, 414);
    const body = json(res);
    assert.equal(body.status, 'error');
    assert.equal(body.code, 'uri_too_long');
    assert.ok(body.requestId);
    assert.ok(res.body.length < 400, 'the path is not echoed');
    // Beyond Node's header limit the HTTP parser answers before Fastify: still our format.
    await ctx().app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const port = (ctx().app.server.address() as { port: number }).port;
      const raw = await fetch(`http://127.0.0.1:${port}/v1/user/${'a'.repeat(20_000)}`);
      assert.equal(raw.status, 431);
      const rawBody = (await raw.json()) as Record<string, unknown>;
      assert.equal(rawBody.status, 'error');
      assert.equal(rawBody.code, 'headers_too_large');
      assert.ok(rawBody.requestId);
      const medium = await fetch(`http://127.0.0.1:${port}/v1/user/${'a'.repeat(5000)}`);
      assert.equal(medium.status, 414);
      assert.equal(((await medium.json()) as Record<string, unknown>).code, 'uri_too_long');
    } finally {
      await ctx().app.server.close();
    }
  });
});
