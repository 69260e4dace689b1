// SSRF bypass corpus (research §1.8, target TW7): every URL below points, one way or another, at a
// loopback "canary" receiver. With private targets disallowed, none may reach it — neither through
// the create-time check nor through the connect-time guard alone (check skipped).
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { sendOnce } from './send.ts';
import {
  assertAllowedTarget,
  createGuardedDispatcher,
  isTargetNotAllowed,
  type Resolver,
} from '../../../../core/net/ssrf.ts';

// A stand-in for DNS: wildcard services (nip.io, localtest.me), records pointing inside, split answers.
const RECORDS: Record<string, string[]> = {
  localhost: ['127.0.0.1', '::1'],
  'localhost.': ['127.0.0.1'],
  '127.0.0.1.nip.io': ['127.0.0.1'],
  'localtest.me': ['127.0.0.1'],
  'customer.localtest.me': ['127.0.0.1'],
  'mapped.example.com': ['::ffff:127.0.0.1'],
  'zero.example.com': ['0.0.0.0'],
  'v6only.example.com': ['::1'],
  'split.example.com': ['93.184.215.14', '127.0.0.1'],
  'split6.example.com': ['2606:4700:4700::1111', '::1'],
  'metadata.example.com': ['169.254.169.254'],
  'nat64.example.com': ['64:ff9b::7f00:1'],
  'sixtofour.example.com': ['2002:7f00:1::1'],
};
const resolver: Resolver = async (hostname) => {
  const list = RECORDS[hostname.toLowerCase()];
  if (!list) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

const HOSTS = [
  '127.0.0.1',
  '127.1',
  '127.0.1',
  '127.000.000.001',
  '2130706433',
  '017700000001',
  '0x7f000001',
  '0x7f.1',
  '0x7f.0x0.0x0.0x1',
  '0177.0.0.1',
  '00000177.0.0.1',
  '0x00007f.1',
  '%31%32%37.0.0.1',
  '127。0。0。1',
  '①②⑦.0.0.1',
  '127.0.0.1.',
  '127.127.127.127',
  '0',
  '0.0.0.0',
  '[::]',
  '[::1]',
  '[0000::1]',
  '[::0:1]',
  '[0:0:0:0:0:0:0:1]',
  '[::ffff:127.0.0.1]',
  '[::ffff:7f00:1]',
  '[0:0:0:0:0:ffff:127.0.0.1]',
  '[::ffff:0:127.0.0.1]',
  '[::127.0.0.1]',
  '[64:ff9b::127.0.0.1]',
  '[2002:7f00:1::]',
  'localhost',
  'LOCALHOST',
  'localhost.',
  '127.0.0.1.nip.io',
  'localtest.me',
  'customer.localtest.me',
  'mapped.example.com',
  'zero.example.com',
  'v6only.example.com',
  'split.example.com',
  'split6.example.com',
  'metadata.example.com',
  'nat64.example.com',
  'sixtofour.example.com',
];

describe('SSRF bypass corpus against a loopback canary', () => {
  let canary: Server;
  let port = 0;
  let hits = 0;
  const dispatcher = createGuardedDispatcher({ allowPrivate: false, resolver, connectTimeoutMs: 2000 });
  const urls = () => HOSTS.flatMap((h) => [`http://${h}:${port}/hook`, `https://${h}:${port}/hook`]);

  before(async () => {
    canary = createServer((_req, res) => {
      hits += 1;
      res.end('reached');
    });
    // Listen on every local address (0.0.0.0 and ::), so a bypass to any of them would be seen.
    await new Promise<void>((resolve, reject) => {
      canary.once('error', (err: NodeJS.ErrnoException) =>
        err.code === 'EAFNOSUPPORT' || err.code === 'EADDRNOTAVAIL'
          ? canary.listen(0, '0.0.0.0', resolve)
          : reject(err),
      );
      canary.listen(0, '::', resolve);
    });
    port = (canary.address() as AddressInfo).port;
  });
  after(async () => {
    await dispatcher.close();
    canary.closeAllConnections();
    await new Promise<void>((resolve) => canary.close(() => resolve()));
  });

  it(`the corpus has at least 60 cases (${HOSTS.length * 2})`, () => assert.ok(HOSTS.length * 2 >= 60));

  it('the create-time check refuses every case', async () => {
    for (const url of urls()) {
      await assert.rejects(
        assertAllowedTarget(url, { allowPrivate: false, resolver }),
        (err) => isTargetNotAllowed(err),
        url,
      );
    }
  });

  it('the connect-time guard alone (check skipped) never reaches the canary', async () => {
    for (const url of urls()) {
      const result = await sendOnce({
        url,
        body: '{}',
        headers: { 'content-type': 'application/json' },
        dispatcher,
        timeoutMs: 5000,
      });
      assert.equal(result.ok, false, url);
      assert.equal(result.errorClass, 'ssrf_blocked', `${url}: ${result.errorClass} ${result.error}`);
    }
    assert.equal(hits, 0);
  });

  it('userinfo and fragment tricks address the other host, not the canary', async () => {
    for (const url of [
      `http://127.0.0.1:${port}@evil.example/`,
      `http://evil.example#@127.0.0.1:${port}/`,
      `http://evil.example\\@127.0.0.1:${port}/`,
    ]) {
      assert.notEqual(new URL(url).hostname, '127.0.0.1');
      const result = await sendOnce({ url, body: '{}', headers: {}, dispatcher });
      assert.equal(result.ok, false);
      assert.equal(result.errorClass, 'dns', url);
    }
    assert.equal(hits, 0);
  });

  it('sanity: the canary is reachable when private targets are allowed', async () => {
    const open = createGuardedDispatcher({ allowPrivate: true, resolver });
    const result = await sendOnce({
      url: `http://localtest.me:${port}/hook`,
      body: '{}',
      headers: {},
      dispatcher: open,
    });
    assert.equal(result.ok, true);
    assert.equal(result.responseBody, 'reached');
    await open.close();
  });
});
