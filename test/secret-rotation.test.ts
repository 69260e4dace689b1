import assert from 'node:assert/strict';
import { afterEach, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { buildApp } from '../src/app.ts';
import { parseConfig } from '../src/config.ts';
import { createDeps, type Deps } from '../src/deps.ts';
import type { App } from '../src/core/http/app-types.ts';
import { createLog } from '../src/core/log.ts';
import { sealPending, verifyChain } from '../src/features/audit/index.ts';
import { checkSecretKey } from '../src/features/auth/index.ts';
import { CREATE as CREATE_KEY } from './helpers/api-keys.ts';
import { forEachEngine, json, type TestContext } from './helpers/context.ts';
import { testResolver } from './helpers/credentials.ts';
import { createTestOrg } from './helpers/factories.ts';
import { spawnTessera, tesseraEnv } from './helpers/tessera-process.ts';

/**
 * Issue 28, item 2: rotating TESSERA_SECRET_KEY without downtime (decision 0013, docs/operations.md ›
 * "Rotating the secret key"). One database lives through the whole procedure: K1 alone, K1 with K2
 * staged, K2 with K1 as previous (both kinds of process side by side), `tessera rotate-secrets`, K2 alone.
 * Every credential made under K1 keeps working while K1 is held; after the rotation the encrypted ones
 * all work under K2 alone, and the hashed ones work when they were used while K1 was still held.
 */
const K1 = 'rotation-key-one-0123456789abcdef0123456789';
const K2 = 'rotation-key-two-0123456789abcdef0123456789';
const K3 = 'rotation-key-three-0123456789abcdef01234567';

interface Instance {
  app: App;
  deps: Deps;
  close(): Promise<void>;
}

const open = new Set<Instance>();

/** A process of the installation with these keys: the secret check as at start, then the app. */
async function start(ctx: TestContext, current: string, previous: string[] = []): Promise<Instance> {
  const config = parseConfig({
    TESSERA_DATA_DIR: ctx.dataDir,
    TESSERA_LOG_LEVEL: 'silent',
    TESSERA_SECRET_KEY: current,
    ...(previous.length > 0 ? { TESSERA_SECRET_KEY_PREVIOUS: previous.join(',') } : {}),
    TESSERA_ALLOW_PRIVATE_TARGETS: 'true',
    TESSERA_PUBLIC_URL: ctx.config.publicUrl,
    ...(ctx.database.kind === 'postgres' ? { DATABASE_URL: ctx.database.url } : {}),
  });
  const deps = createDeps(config, { clock: ctx.clock, log: createLog('silent'), poolSize: 3 });
  const check = await checkSecretKey(deps);
  if (!check.ok) {
    await deps.close();
    throw new Error('secret check refused the keys');
  }
  const app = await buildApp(deps, { extraResolvers: [testResolver(deps)] });
  const instance: Instance = {
    app,
    deps,
    close: async () => {
      open.delete(instance);
      await app.close();
      await deps.close();
    },
  };
  open.add(instance);
  return instance;
}

/** A `tessera` command run as its own process on the installation, with these keys. */
async function command(ctx: TestContext, args: string[], current: string, previous: string[] = []) {
  const child = spawnTessera(
    args,
    tesseraEnv(ctx, {
      TESSERA_SECRET_KEY: current,
      ...(previous.length > 0 ? { TESSERA_SECRET_KEY_PREVIOUS: previous.join(',') } : {}),
    }),
  );
  const code = await child.exited;
  return { code, output: child.output() };
}

const form = (body: Record<string, string>) => ({
  method: 'POST' as const,
  url: '/v1/oauth2/token',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  payload: new URLSearchParams(body).toString(),
});

forEachEngine(
  'secret key rotation without downtime',
  (ctx) => {
    afterEach(async () => {
      for (const instance of [...open]) await instance.close();
    });
    it('K1 → K2 staged → K2 with K1 previous → rotate-secrets → K2 alone; K3 alone is refused', async () => {
      const one = await start(ctx(), K1);
      const org = await createTestOrg(ctx());
      const admin = org.admin.headers;
      const as = (instance: Instance, request: InjectOptions) => instance.app.inject(request);

      // --- Under K1: one credential of each kind.
      const apiKey = async (instance: Instance, name: string) => {
        const res = await as(instance, {
          method: 'POST',
          url: CREATE_KEY,
          headers: admin,
          payload: { name, roleId: org.roles.viewer },
        });
        assert.equal(res.statusCode, 200, res.body);
        return json<{ key: string }>(res).key;
      };
      const usedKey = await apiKey(one, 'used during the rotation');
      const unusedKey = await apiKey(one, 'not used during the rotation');
      const keyWorks = async (instance: Instance, key: string) =>
        (await as(instance, { method: 'GET', url: '/v1/user', headers: { 'x-api-key': key } })).statusCode;
      assert.equal(await keyWorks(one, usedKey), 200);

      const endpoint = async (instance: Instance) => {
        const res = await as(instance, {
          method: 'POST',
          url: '/webhooks/endpoint',
          headers: admin,
          payload: [{ description: 'Asset sync', url: 'http://127.0.0.1:9/hook', eventTypes: ['asset.created'] }],
        });
        assert.equal(res.statusCode, 200, res.body);
        return json<{ id: string; secret: string }>(res);
      };
      const secretOf = async (instance: Instance, id: string) => {
        const res = await as(instance, { method: 'GET', url: `/webhooks/endpoint/${id}/secret`, headers: admin });
        assert.equal(res.statusCode, 200, res.body);
        return json<{ key: string }>(res).key;
      };
      const hook1 = await endpoint(one);

      const client = await as(one, {
        method: 'POST',
        url: '/v1/oauth2/clients',
        headers: admin,
        payload: { name: 'Partner', redirectUris: ['https://partner.example/cb'], confidential: true },
      });
      assert.equal(client.statusCode, 201, client.body);
      const { clientId, clientSecret } = json<{ clientId: string; clientSecret: string }>(client);
      // The client authenticates (then the grant is refused: no such refresh token): 400, not 401.
      const clientAuthenticates = async (instance: Instance) =>
        (
          await as(
            instance,
            form({
              grant_type: 'refresh_token',
              refresh_token: 'rt_unknown',
              client_id: clientId,
              client_secret: clientSecret,
            }),
          )
        ).statusCode;
      assert.equal(await clientAuthenticates(one), 400);

      const signIn = async (instance: Instance) => {
        const res = await as(instance, {
          method: 'POST',
          url: '/v1/auth/token',
          payload: { username: org.admin.username, password: org.admin.password },
        });
        assert.equal(res.statusCode, 200, res.body);
        return json<{ session: { accessToken: string; refreshToken: string } }>(res).session;
      };
      const refreshes = async (instance: Instance, refreshToken: string) =>
        (await as(instance, { method: 'POST', url: '/v1/auth/token', payload: { refreshToken } })).statusCode;
      const session1 = await signIn(one);
      const usesToken = async (instance: Instance, accessToken: string) =>
        (await as(instance, { method: 'GET', url: '/v1/user', headers: { accesstoken: accessToken } })).statusCode;

      const board = await as(one, {
        method: 'POST',
        url: '/v1/storyboards',
        headers: admin,
        payload: { title: 'Board', status: 'published', blocks: [{ type: 'heading', text: 'Hello' }] },
      });
      assert.equal(board.statusCode, 201, board.body);
      const shareLink = async (instance: Instance) => {
        const res = await as(instance, {
          method: 'POST',
          url: `/v1/storyboards/${json(board).id}/links`,
          headers: { ...admin, 'content-type': 'application/json' },
          payload: {},
        });
        assert.equal(res.statusCode, 201, res.body);
        return json<{ token: string }>(res).token;
      };
      const opens = async (instance: Instance, token: string) =>
        (await as(instance, { method: 'GET', url: `/shared/storyboards/${token}` })).statusCode;
      const link1 = await shareLink(one);
      assert.equal(await opens(one, link1), 200);
      await sealPending(one.deps.db, one.deps.engine, one.deps.keys);

      // --- Step 1: K2 staged (accepted, not used) beside K1 processes. Nothing changes for anyone.
      const staged = await start(ctx(), K1, [K2]);
      assert.equal(await keyWorks(staged, usedKey), 200);
      assert.equal(await secretOf(staged, hook1.id), hook1.secret);

      // --- Step 2: K2 current with K1 previous, while K1+K2-staged processes still serve.
      const two = await start(ctx(), K2, [K1]);
      assert.equal(await keyWorks(two, usedKey), 200, 'an API key hashed under K1 authenticates (and is re-keyed)');
      assert.equal(await keyWorks(staged, usedKey), 200, '… and still works on a process whose current key is K1');
      assert.equal(
        await secretOf(two, hook1.id),
        hook1.secret,
        'the webhook secret sealed under K1 opens: same signatures',
      );
      assert.equal(await clientAuthenticates(two), 400, 'the OAuth client secret hashed under K1 authenticates');
      assert.equal(await refreshes(two, session1.refreshToken), 200, 'a refresh token hashed under K1 refreshes');
      assert.equal(await usesToken(two, session1.accessToken), 200, 'a token signed before the rotation verifies');
      assert.equal(await opens(two, link1), 200, 'a share link hashed under K1 opens');
      // What a K2 process makes works on the K1 processes that have K2 staged (the rolling window).
      const hook2 = await endpoint(two);
      assert.equal(await secretOf(staged, hook2.id), hook2.secret);
      const keyMadeOnTwo = await apiKey(two, 'made under K2');
      assert.equal(await keyWorks(staged, keyMadeOnTwo), 200);
      const session2 = await signIn(two);
      assert.equal(await usesToken(staged, session2.accessToken), 200);
      assert.equal(await refreshes(staged, session2.refreshToken), 200);
      await staged.close();
      await one.close();
      // Every process at step 2 now: a credential used re-keys to K2 (a step-1 process re-keyed what it
      // used to its own current key, K1: harmless while both are held everywhere, and undone by the next use).
      for (const key of [usedKey, keyMadeOnTwo]) assert.equal(await keyWorks(two, key), 200);
      for (const session of [session1, session2]) assert.equal(await refreshes(two, session.refreshToken), 200);
      await sealPending(two.deps.db, two.deps.engine, two.deps.keys);

      // --- Step 3: re-encrypt everything under K2. Counts per table, no secret printed; run twice: idempotent.
      const rotated = await command(ctx(), ['rotate-secrets'], K2, [K1]);
      assert.equal(rotated.code, 0, rotated.output);
      assert.match(rotated.output, /webhook_endpoints\.secret\s+1 re-encrypted, 1 already current/);
      assert.match(rotated.output, /auth_signing_keys\.private_jwk_sealed\s+1 re-encrypted/);
      // The unused API key is still under K1; the used one and the one made on K2 are current.
      assert.match(rotated.output, /api_keys\.key_hash\s+1 under a previous key, 2 current/);
      assert.match(rotated.output, /auth_refresh_tokens\.token_hash\s+0 under a previous key, 2 current/);
      assert.match(rotated.output, /oauth_clients\.secret_hash\s+0 under a previous key, 1 current/);
      assert.match(rotated.output, /storyboard_links\.token_hash\s+0 under a previous key, 1 current/);
      for (const secret of [K1, K2, hook1.secret, hook2.secret, clientSecret, usedKey, unusedKey])
        assert.ok(!rotated.output.includes(secret), 'no secret in the output');
      const again = await command(ctx(), ['rotate-secrets'], K2, [K1]);
      assert.equal(again.code, 0, again.output);
      assert.match(again.output, /webhook_endpoints\.secret\s+0 re-encrypted, 2 already current/);
      await two.close();

      // --- Step 4: K2 alone. Encrypted secrets all work; hashed ones used during the rotation work; the unused key does not.
      const after = await start(ctx(), K2);
      assert.equal(await secretOf(after, hook1.id), hook1.secret);
      assert.equal(await secretOf(after, hook2.id), hook2.secret);
      assert.equal(await keyWorks(after, usedKey), 200);
      assert.equal(await keyWorks(after, keyMadeOnTwo), 200);
      assert.equal(await keyWorks(after, unusedKey), 401, 'never used while K1 was held: still under K1 (documented)');
      assert.equal(await clientAuthenticates(after), 400);
      assert.equal(await refreshes(after, session1.refreshToken), 200);
      assert.equal(await opens(after, link1), 200);
      const session3 = await signIn(after);
      assert.equal(await usesToken(after, session3.accessToken), 200, 'the re-encrypted signing key signs');
      await sealPending(after.deps.db, after.deps.engine, after.deps.keys);
      const chain = await verifyChain(after.deps.db, after.deps.keys, org.orgId);
      assert.equal(
        chain.ok,
        true,
        `the audit chain written under K1 and K2 verifies under K2 alone: ${JSON.stringify(chain.broken)}`,
      );
      assert.ok(chain.checked > 5);
      await after.close();

      // A key the database never knew is refused at start; so is K1 alone now that the database names K2.
      for (const key of [K3, K1]) {
        const refused = await command(ctx(), ['migrate'], key);
        assert.equal(refused.code, 2, refused.output);
        assert.match(refused.output, /TESSERA_SECRET_KEY/);
        assert.ok(!refused.output.includes(key));
      }
      const accepted = await command(ctx(), ['migrate'], K3, [K2]);
      assert.equal(accepted.code, 0, 'the next rotation starts with K2 as previous');
    });
  },
  { env: { TESSERA_SECRET_KEY: K1 } },
);
