import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from './helpers/context.ts';
import { slowClient } from './helpers/net.ts';

// Small timeouts through the settings, so that each slow client is cut off quickly; the tests
// assert only that the server ends the connection (and how), never how long it took.
const env = {
  TESSERA_HEADERS_TIMEOUT_MS: '300',
  TESSERA_REQUEST_TIMEOUT_MS: '800',
  TESSERA_IDLE_TIMEOUT_MS: '1500',
  TESSERA_KEEP_ALIVE_TIMEOUT_MS: '400',
};

forEachEngine(
  'API server timeouts (issue 23, defect 14)',
  (ctx) => {
    let port = 0;
    before(async () => {
      await ctx().app.listen({ port: 0, host: '127.0.0.1' });
      port = (ctx().app.server.address() as { port: number }).port;
    });
    after(() => ctx().app.server.close());

    it("cuts off a client trickling its headers with 408 in Tessera's error format", async () => {
      const slow = await slowClient(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n', 'x');
      assert.equal(slow.closed, true);
      assert.match(slow.text, /^HTTP\/1\.1 408 /);
      assert.match(slow.text, /"code":"bad_request"/);
    });

    it('cuts off a client trickling a request body (a slow-body upload or sign-in) with 408', async () => {
      const slow = await slowClient(
        port,
        'POST /v1/auth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"username":"',
        'a',
      );
      assert.equal(slow.closed, true);
      assert.match(slow.text, /^HTTP\/1\.1 408 /);
    });

    it('closes a connection that sends nothing, and a kept-alive one after its answer', async () => {
      const silent = await slowClient(port, '', '', { everyMs: 1000 });
      assert.equal(silent.closed, true);
      const kept = await slowClient(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n', '', { everyMs: 1000 });
      assert.equal(kept.closed, true);
      assert.match(kept.text, /^HTTP\/1\.1 200 /);
    });

    it('serves a prompt client as before', async () => {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      assert.equal(res.status, 200);
      await res.arrayBuffer();
    });
  },
  { env },
);
