import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseConfig, ConfigError } from '../src/config.ts';
import { createTestContext, ENGINES, type TestContext } from './helpers/context.ts';
import { createTestOrg, createTestUser } from './helpers/factories.ts';

// Issue 8, item 7: TESSERA_TRUST_PROXY names whom to trust (a hop count or proxy addresses), never everyone.

const base = { TESSERA_DATA_DIR: '/tmp/tessera-config-test', TESSERA_SECRET_KEY: 'x'.repeat(40) };

it('TESSERA_TRUST_PROXY=true is refused, naming the setting and what to give instead', () => {
  for (const value of ['true', 'yes', 'on']) {
    assert.throws(
      () => parseConfig({ ...base, TESSERA_TRUST_PROXY: value }),
      (e: unknown) =>
        e instanceof ConfigError &&
        /TESSERA_TRUST_PROXY/.test(String((e as Error).message)) &&
        /number of proxies/.test((e as Error).message),
    );
  }
  assert.equal(parseConfig({ ...base }).trustProxy, false);
  assert.equal(parseConfig({ ...base, TESSERA_TRUST_PROXY: 'false' }).trustProxy, false);
  assert.equal(parseConfig({ ...base, TESSERA_TRUST_PROXY: '2' }).trustProxy, 2);
  assert.deepEqual(parseConfig({ ...base, TESSERA_TRUST_PROXY: '10.0.0.0/8, loopback,::1' }).trustProxy, [
    '10.0.0.0/8',
    'loopback',
    '::1',
  ]);
  for (const bad of ['11', '10.0.0.0/33', 'proxy.example', '1.2.3.4/8/9'])
    assert.throws(() => parseConfig({ ...base, TESSERA_TRUST_PROXY: bad }), ConfigError, bad);
});

/** The IP a sign-in is recorded with (GET /v1/auth/sessions), for a request from `socket` carrying `xff`. */
async function recordedIp(ctx: TestContext, socket: string, xff?: string): Promise<string> {
  const org = await createTestOrg(ctx);
  const user = await createTestUser(ctx, org);
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/v1/auth/token',
    remoteAddress: socket,
    headers: xff ? { 'x-forwarded-for': xff } : {},
    payload: { username: user.username, password: user.password },
  });
  assert.equal(res.statusCode, 200, res.body);
  const sessions = await ctx.inject({
    method: 'GET',
    url: '/v1/auth/sessions',
    headers: { accesstoken: res.json().session.accessToken },
  });
  return sessions.json().sessions[0].ip;
}

for (const engine of ENGINES) {
  for (const [setting, cases] of [
    [undefined, [['10.0.0.5', '6.6.6.6', '10.0.0.5']]],
    [
      '1',
      [
        ['10.0.0.5', '6.6.6.6, 1.2.3.4', '1.2.3.4'],
        ['203.0.113.9', '6.6.6.6', '6.6.6.6'],
      ],
    ],
    [
      '10.0.0.0/8',
      [
        ['10.0.0.5', '6.6.6.6, 1.2.3.4', '1.2.3.4'],
        ['203.0.113.9', '6.6.6.6', '203.0.113.9'],
      ],
    ],
  ] as const) {
    describe(`client IP with TESSERA_TRUST_PROXY=${setting ?? '(unset)'} [${engine.name}]`, {
      skip: engine.skip,
    }, () => {
      let ctx: TestContext;
      before(async () => {
        ctx = await createTestContext(engine.name, setting ? { env: { TESSERA_TRUST_PROXY: setting } } : {});
      });
      after(() => ctx.close());
      for (const [socket, xff, expected] of cases) {
        it(`from ${socket} with X-Forwarded-For "${xff}" records ${expected}`, async () => {
          assert.equal(await recordedIp(ctx, socket, xff), expected);
        });
      }
    });
  }
}

for (const engine of ENGINES) {
  describe(`per-IP login throttle with TESSERA_TRUST_PROXY=10.0.0.0/8 [${engine.name}]`, { skip: engine.skip }, () => {
    let ctx: TestContext;
    before(async () => {
      ctx = await createTestContext(engine.name, { env: { TESSERA_TRUST_PROXY: '10.0.0.0/8' } });
    });
    after(() => ctx.close());
    const attempt = (socket: string, xff: string, username: string, password: string) =>
      ctx.app.inject({
        method: 'POST',
        url: '/v1/auth/token',
        remoteAddress: socket,
        headers: { 'x-forwarded-for': xff },
        payload: { username, password },
      });

    it('a client outside the trusted proxies cannot escape it by sending a new X-Forwarded-For each time', async () => {
      const org = await createTestOrg(ctx);
      const user = await createTestUser(ctx, org);
      for (let i = 0; i < 51; i++)
        assert.equal(
          (await attempt('203.0.113.9', `198.51.100.${i}`, `spray-${i}`, 'wrong-password!')).statusCode,
          401,
        );
      const blocked = await attempt('203.0.113.9', '198.51.100.250', user.username, user.password);
      assert.equal(blocked.statusCode, 429, blocked.body);
      // Behind the trusted proxy, each forwarded client is counted on its own address.
      assert.equal((await attempt('10.0.0.5', '198.51.100.251', user.username, user.password)).statusCode, 200);
    });
  });
}
