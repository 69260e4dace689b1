import assert from 'node:assert/strict';
import { it } from 'node:test';
import { decodeJwt } from 'jose';
import { forEachEngine, json } from './helpers/context.ts';
import { login } from './helpers/auth.ts';
import { createKey, REVOKE } from './helpers/api-keys.ts';
import { createTestOrg } from './helpers/factories.ts';
import { generateKey } from '../src/features/api-keys/index.ts';
import { signToken, type TokenClaims } from '../src/features/auth/keys/signing-keys.ts';

/** What the reference's own client code sends (issue 8, items 12, 15 and 21). */
forEachEngine('clients of the reference', (ctx) => {
  const JSON_CT = { 'content-type': 'application/json' };

  it('a body-less request with Content-Type: application/json and an empty body is valid', async () => {
    const org = await createTestOrg(ctx());
    const created = await ctx().inject({
      method: 'POST',
      url: '/webhooks/endpoint',
      headers: org.admin.headers,
      payload: [{ description: 'to delete', url: 'https://example.com/hook', eventTypes: ['user.created'] }],
    });
    assert.equal(created.statusCode, 200, created.body);
    for (const prefix of ['', '/v1']) {
      const again = prefix
        ? await ctx().inject({
            method: 'POST',
            url: '/v1/webhooks/endpoint',
            headers: org.admin.headers,
            payload: [{ description: 'to delete', url: 'https://example.com/hook', eventTypes: ['user.created'] }],
          })
        : created;
      const id = json(again).id as string;
      const res = await ctx().inject({
        method: 'DELETE',
        url: `${prefix}/webhooks/endpoint/${id}`,
        headers: { ...org.admin.headers, ...JSON_CT },
        payload: '',
      });
      assert.equal(res.statusCode, 204, res.body);
    }
    const session = await login(ctx(), org.admin);
    const logout = await ctx().inject({
      method: 'DELETE',
      url: '/v1/auth/token',
      headers: { accesstoken: session.session.accessToken, ...JSON_CT },
      payload: '',
    });
    assert.equal(logout.statusCode, 200, logout.body);
    // A route that needs a body still says so, naming it (400, not 500).
    const empty = await ctx().inject({ method: 'POST', url: '/v1/auth/token', headers: JSON_CT, payload: '' });
    assert.equal(empty.statusCode, 400, empty.body);
    assert.match(json(empty).message, /body/);
    const broken = await ctx().inject({
      method: 'POST',
      url: '/v1/auth/token',
      headers: JSON_CT,
      payload: '{"username":',
    });
    assert.equal(broken.statusCode, 400);
    assert.equal(json(broken).code, 'invalid_json');
    const poisoned = await ctx().inject({
      method: 'POST',
      url: '/v1/auth/token',
      headers: JSON_CT,
      payload: '{"__proto__":{"x":1},"username":"a","password":"b"}',
    });
    assert.equal(poisoned.statusCode, 400, 'prototype poisoning is still refused');
  });

  it('a foreign X-API-Key (gateway key, "undefined") beside a valid token is ignored', async () => {
    const org = await createTestOrg(ctx());
    const session = await login(ctx(), org.admin);
    const tokenHeaders: Record<string, string>[] = [
      { accesstoken: session.session.accessToken },
      { authorization: session.session.authorization },
      { authorization: `Bearer ${session.session.authorization}` },
      // The reference's clients send all three at once.
      { accesstoken: session.session.accessToken, authorization: session.session.authorization },
    ];
    for (const headers of tokenHeaders) {
      for (const foreign of ['undefined', 'AbCdEf0123456789gatewaykey', '']) {
        const res = await ctx().inject({
          method: 'GET',
          url: '/v1/user',
          headers: { ...headers, 'x-api-key': foreign },
        });
        assert.equal(res.statusCode, 200, `${JSON.stringify(headers)} + ${foreign}: ${res.body}`);
        assert.equal(json(res).userId, org.admin.userId);
      }
    }
    // Alone, a foreign key authenticates nobody.
    const alone = await ctx().inject({ method: 'GET', url: '/v1/user', headers: { 'x-api-key': 'undefined' } });
    assert.equal(alone.statusCode, 401);
  });

  it('a malformed, unknown or revoked Tessera key beside a valid token still gets 401', async () => {
    const org = await createTestOrg(ctx());
    const session = await login(ctx(), org.admin);
    const revoked = await createKey(ctx(), org);
    await ctx().inject({ method: 'POST', url: REVOKE, headers: org.admin.headers, payload: { id: revoked.id } });
    for (const key of [`tsk_${'A'.repeat(49)}`, 'tsk_short', generateKey(), revoked.key]) {
      const res = await ctx().inject({
        method: 'GET',
        url: '/v1/user',
        headers: { accesstoken: session.session.accessToken, 'x-api-key': key },
      });
      assert.equal(res.statusCode, 401, `${key}: ${res.body}`);
      assert.equal(json(res).message, 'Invalid API key');
    }
  });

  it('Authorization: Bearer tsk_… authenticates as the API key', async () => {
    const org = await createTestOrg(ctx());
    const key = await createKey(ctx(), org);
    const res = await ctx().inject({ method: 'GET', url: '/v1/user', headers: { authorization: `Bearer ${key.key}` } });
    assert.equal(res.statusCode, 200, res.body);
    assert.notEqual(json(res).userId, org.admin.userId, 'the key acts as its service account');
    await ctx().inject({ method: 'POST', url: REVOKE, headers: org.admin.headers, payload: { id: key.id } });
    const revoked = await ctx().inject({
      method: 'GET',
      url: '/v1/user',
      headers: { authorization: `Bearer ${key.key}` },
    });
    assert.equal(revoked.statusCode, 401);
    assert.equal(json(revoked).message, 'Invalid API key');
  });

  it('DELETE /v1/auth/token takes the token from Authorization, raw or Bearer', async () => {
    const org = await createTestOrg(ctx());
    const forms = [
      (s: { authorization: string; accessToken: string }) => ({ authorization: s.authorization }),
      (s: { authorization: string; accessToken: string }) => ({ authorization: `Bearer ${s.authorization}` }),
      (s: { authorization: string; accessToken: string }) => ({ authorization: `Bearer ${s.accessToken}` }),
    ];
    for (const form of forms) {
      const session = await login(ctx(), org.admin);
      const res = await ctx().inject({ method: 'DELETE', url: '/v1/auth/token', headers: form(session.session) });
      assert.equal(res.statusCode, 200, res.body);
      const after = await ctx().inject({
        method: 'GET',
        url: '/v1/user',
        headers: { accesstoken: session.session.accessToken },
      });
      assert.equal(after.statusCode, 401, 'the session ended');
    }
    const none = await ctx().inject({ method: 'DELETE', url: '/v1/auth/token' });
    assert.equal(none.statusCode, 401);
    assert.match(json(none).message, /AccessToken or Authorization/);
  });

  it('401 responses carry WWW-Authenticate, and an expired token says it expired', async () => {
    const org = await createTestOrg(ctx());
    const none = await ctx().inject({ method: 'GET', url: '/v1/user' });
    assert.equal(none.statusCode, 401);
    assert.match(String(none.headers['www-authenticate']), /^Bearer realm="tessera"/);
    const bad = await ctx().inject({ method: 'GET', url: '/v1/user', headers: { accesstoken: 'not-a-token' } });
    assert.equal(bad.statusCode, 401);
    assert.ok(bad.headers['www-authenticate']);
    const session = await login(ctx(), org.admin);
    const claims = decodeJwt(session.session.accessToken) as TokenClaims;
    const now = Math.floor(ctx().deps.clock.now() / 1000);
    const expired = await signToken(ctx().deps, { ...claims, iat: now - 7200, exp: now - 1 });
    const res = await ctx().inject({ method: 'GET', url: '/v1/user', headers: { accesstoken: expired } });
    assert.equal(res.statusCode, 401);
    assert.match(json(res).message, /expired/i);
    assert.match(String(res.headers['www-authenticate']), /error="invalid_token".*expired/);
  });

  it("AccessToken: undefined beside a valid Authorization is ignored (the training guide's runKeywordSearch headers)", async () => {
    const org = await createTestOrg(ctx());
    const session = await login(ctx(), org.admin);
    // The reference's training code (training/search.md, runKeywordSearch) sends `accessToken` from a
    // variable that is unset when the client signed in through Authorization only: it arrives as "undefined".
    const body = {
      from: 0,
      searchTerm: ['*'],
      sortBy: [{ metadataDefinitionSearchField: 'createdepoch', order: 'desc' }],
      operation: 'AND',
      limit: 10,
    };
    for (const placeholder of ['undefined', 'null', 'UNDEFINED', ' undefined ']) {
      for (const authorization of [session.session.authorization, `Bearer ${session.session.authorization}`]) {
        const res = await ctx().inject({
          method: 'POST',
          url: '/v1/search/keyword',
          headers: {
            accept: 'application/json',
            authorization,
            accesstoken: placeholder,
            'content-type': 'application/json',
            'x-api-key': 'undefined',
          },
          payload: body,
        });
        assert.equal(res.statusCode, 200, `${placeholder}: ${res.body}`);
      }
      const user = await ctx().inject({
        method: 'GET',
        url: '/v1/user',
        headers: { authorization: session.session.authorization, accesstoken: placeholder },
      });
      assert.equal(json(user).userId, org.admin.userId);
    }
    // Alone, the placeholder authenticates nobody; a real but bad AccessToken is still refused.
    const alone = await ctx().inject({ method: 'GET', url: '/v1/user', headers: { accesstoken: 'undefined' } });
    assert.equal(alone.statusCode, 401);
    const bad = await ctx().inject({
      method: 'GET',
      url: '/v1/user',
      headers: { accesstoken: 'not-a-token', authorization: session.session.authorization },
    });
    assert.equal(bad.statusCode, 401);
  });

  it('a 401 names the accepted credential headers', async () => {
    const none = await ctx().inject({ method: 'GET', url: '/v1/user' });
    assert.equal(none.statusCode, 401);
    assert.match(json(none).message, /AccessToken/);
    assert.match(json(none).message, /Authorization: Bearer/);
    assert.match(json(none).message, /X-API-Key/);
    assert.deepEqual(json(none).acceptedCredentials, ['AccessToken', 'Authorization: Bearer', 'X-API-Key']);
    const badKey = await ctx().inject({
      method: 'GET',
      url: '/v1/user',
      headers: { 'x-api-key': `tsk_${'A'.repeat(49)}` },
    });
    assert.equal(badKey.statusCode, 401);
    assert.deepEqual(json(badKey).acceptedCredentials, ['AccessToken', 'Authorization: Bearer', 'X-API-Key']);
  });

  it('a wrong method on a known path is 405 with Allow; an unknown path stays 404', async () => {
    const org = await createTestOrg(ctx());
    const del = await ctx().inject({ method: 'DELETE', url: '/v1/user', headers: org.admin.headers });
    assert.equal(del.statusCode, 405, del.body);
    assert.equal(json(del).code, 'method_not_allowed');
    assert.equal(del.headers.allow, 'GET, HEAD, POST');
    const doc = await ctx().inject({ method: 'DELETE', url: '/openapi.json' });
    assert.equal(doc.statusCode, 405);
    assert.equal(doc.headers.allow, 'GET, HEAD');
    // Also before authentication, and for parameterised paths.
    const put = await ctx().inject({ method: 'PUT', url: '/v1/asset/00000000-0000-4000-8000-000000000000/link' });
    assert.equal(put.statusCode, 405);
    assert.equal(put.headers.allow, 'GET, HEAD, POST, PATCH');
    const tokens = await ctx().inject({ method: 'GET', url: '/v1/auth/token' });
    assert.equal(tokens.statusCode, 405);
    assert.match(String(tokens.headers.allow), /POST/);
    assert.match(String(tokens.headers.allow), /DELETE/);
    const unknown = await ctx().inject({ method: 'GET', url: '/v1/nope/nothing' });
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.headers.allow, undefined);
  });
});
