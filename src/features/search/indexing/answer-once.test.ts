import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { it } from 'node:test';
import { forEachEngine } from '../../../../test/helpers/context.ts';
import { createTestOrg } from '../../../../test/helpers/factories.ts';
import { jpeg, uploadAsset } from '../../../../test/helpers/assets.ts';
import { keywordTotal } from '../../../../test/helpers/search.ts';

/**
 * The app's onSend hook that holds an asset write's answer until the index covers it (decision
 * 0027) must not make Fastify answer twice: a hook that is asynchronous for every request leaves
 * the reply unwritten when a handler that sent it resolves, and Fastify then sends an empty second
 * answer ("Reply was already sent", then ERR_HTTP_HEADERS_SENT).
 */
const lines: string[] = [];
const sink = new Writable({
  write(chunk, _encoding, callback) {
    lines.push(String(chunk));
    callback();
  },
});
const doubleAnswers = () => lines.filter((l) => /already sent|ERR_HTTP_HEADERS_SENT/.test(l));

forEachEngine(
  'one answer per request while writes wait for the search index',
  (ctx) => {
    it('a handler that sends and then resolves is answered once, with its body (GET /v1/user, uncached)', async () => {
      const c = ctx();
      const org = await createTestOrg(c);
      lines.length = 0;
      for (let i = 0; i < 3; i++) {
        const res = await c.inject({ method: 'GET', url: '/v1/user', headers: org.admin.headers });
        assert.equal(res.statusCode, 200, res.body);
        assert.ok(res.body.includes(org.admin.userId), res.body);
      }
      assert.deepEqual(doubleAnswers(), []);
    });

    it('an asset write is answered once, with its body, after the index covers it', async () => {
      const c = ctx();
      const org = await createTestOrg(c);
      const a = await uploadAsset(c, org, await jpeg(8, 8), 'harbour.jpg');
      lines.length = 0;
      c.clock.advance(1000);
      const patch = await c.inject({
        method: 'PATCH',
        url: `/v1/assets/asset/${a.objectId}`,
        headers: org.admin.headers,
        payload: { metadata: [{ name: 'Title', value: 'Harbour lights' }] },
      });
      assert.equal(patch.statusCode, 200, patch.body);
      assert.ok(patch.body.length > 0, 'the answer has its body');
      assert.equal(await keywordTotal(c, org.admin.headers, 'lights'), 1);
      assert.deepEqual(doubleAnswers(), []);
    });
  },
  { env: { TESSERA_LOG_LEVEL: 'warn' }, logTo: sink },
);
