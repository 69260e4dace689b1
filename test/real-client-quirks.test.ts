// The reference's own client code sends, on every call, a gateway `X-API-Key` that is not Tessera's, the
// token both as `AccessToken` and as a raw `Authorization`, `Content-Type: application/json` even on
// requests without a body, and paths with a trailing slash. None of that may change an answer: every
// documented operation is sent twice, as a plain client would and as the reference's client does, each
// to its own new organization (so that both see the same state), and the two statuses must be equal.
// Every route added later is covered without a change here.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine, type TestContext } from './helpers/context.ts';
import { documented } from './helpers/documented.ts';
import { createTestOrg } from './helpers/factories.ts';

const PLACEHOLDER_ID = '0190a4b2-0000-7000-8000-000000000001';

async function signIn(ctx: TestContext): Promise<string> {
  const org = await createTestOrg(ctx);
  const res = await ctx.inject({
    method: 'POST',
    url: '/v1/auth/token',
    payload: { username: org.admin.username, password: org.admin.password },
  });
  assert.equal(res.statusCode, 200, res.body);
  return (res.json() as { session: { accessToken: string } }).session.accessToken;
}

forEachEngine("the reference client's headers and trailing slashes never change an answer", (ctx) => {
  it('every documented operation answers the same with and without them', async () => {
    const { operations } = await documented(ctx());
    const plainToken = await signIn(ctx());
    const quirkyToken = await signIn(ctx());
    const differences: string[] = [];
    let compared = 0;
    let succeeded = 0;
    for (const { path, method, body } of operations) {
      const url = path.replace(/\{[^}]+\}/g, PLACEHOLDER_ID);
      const payload = method === 'GET' || method === 'DELETE' || body === null ? undefined : JSON.stringify(body);
      const plain = await ctx().inject({
        method: method as 'GET',
        url,
        headers: { accesstoken: plainToken, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(payload === undefined ? {} : { payload }),
      });
      const quirky = await ctx().inject({
        method: method as 'GET',
        url: url.endsWith('/') ? url : `${url}/`,
        headers: {
          'x-api-key': 'gateway-3f9a2c7e5b1d4a8f9c0e',
          accesstoken: quirkyToken,
          authorization: quirkyToken,
          'content-type': 'application/json',
        },
        ...(payload === undefined ? {} : { payload }),
      });
      compared += 1;
      if (plain.statusCode < 300) succeeded += 1;
      if (plain.statusCode !== quirky.statusCode)
        differences.push(
          `${method} ${path}: ${plain.statusCode} plainly, ${quirky.statusCode} as the reference's client → ${quirky.body.slice(0, 160)}`,
        );
    }
    assert.ok(compared > 150, `only ${compared} operations were compared`);
    // Not a walk of refusals: a good share of the operations reach their handlers and succeed.
    assert.ok(succeeded > 30, `only ${succeeded} of ${compared} operations succeeded`);
    assert.deepEqual(differences, []);
  });
});
