import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import {
  assertAllowedTarget,
  classifyAddress,
  createGuardedDispatcher,
  isTargetNotAllowed,
  type Resolver,
  type TargetNotAllowedError,
} from './ssrf.ts';

const PUBLIC_V4 = '93.184.215.14';
const fixed =
  (map: Record<string, string[]>): Resolver =>
  async (hostname) => {
    const list = map[hostname];
    if (!list) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

async function rejectsWith(promise: Promise<unknown>, reason?: string): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(isTargetNotAllowed(err), `expected TargetNotAllowedError, got ${String(err)}`);
    if (reason) assert.equal((err as TargetNotAllowedError).reason, reason);
    return true;
  });
}

describe('classifyAddress', () => {
  const cases: [string, string][] = [
    ['8.8.8.8', 'public'],
    ['1.1.1.1', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.1', 'public'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'cgnat'],
    ['100.127.255.255', 'cgnat'],
    ['100.128.0.1', 'public'],
    ['169.254.169.254', 'metadata'],
    ['169.254.1.1', 'link_local'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'this_network'],
    ['255.255.255.255', 'broadcast'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.0.192', 'reserved'],
    ['198.18.0.1', 'benchmark'],
    ['198.19.255.255', 'benchmark'],
    ['192.0.2.10', 'documentation'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['::ffff:8.8.8.8', 'public'],
    ['::ffff:0:10.0.0.1', 'private'],
    ['::127.0.0.1', 'reserved'],
    ['64:ff9b::127.0.0.1', 'loopback'],
    ['64:ff9b::8.8.8.8', 'public'],
    ['64:ff9b:1::1', 'private'],
    ['2002:7f00:1::', 'loopback'],
    ['2002:0808:0808::1', 'public'],
    ['fc00::1', 'unique_local'],
    ['fd12:3456:789a::1', 'unique_local'],
    ['fe80::1', 'link_local'],
    ['fe80::1%eth0', 'link_local'],
    ['fec0::1', 'site_local'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation'],
    ['2001::1', 'reserved'],
    ['100::1', 'reserved'],
    ['2606:4700:4700::1111', 'public'],
    ['2a00:1450:4001:82b::200e', 'public'],
    ['localhost', 'invalid'],
    ['2130706433', 'invalid'],
    ['0x7f.1', 'invalid'],
    ['1.2.3', 'invalid'],
    ['256.1.1.1', 'invalid'],
    ['010.0.0.1', 'invalid'],
    ['::ffff:010.0.0.1', 'invalid'],
    ['', 'invalid'],
  ];
  for (const [ip, expected] of cases) {
    it(`${ip || '(empty)'} is ${expected}`, () => assert.equal(classifyAddress(ip), expected));
  }
});

describe('assertAllowedTarget', () => {
  const strict = { allowPrivate: false, resolver: fixed({ 'hooks.example.com': [PUBLIC_V4, '2606:4700:4700::1111'] }) };

  it('accepts http and https URLs whose every address is public', async () => {
    assert.equal(
      (await assertAllowedTarget('https://hooks.example.com/tessera', strict)).hostname,
      'hooks.example.com',
    );
    assert.equal((await assertAllowedTarget('http://8.8.8.8:8080/x', strict)).port, '8080');
    assert.ok(await assertAllowedTarget('https://[2606:4700:4700::1111]/', strict));
  });

  it('refuses other schemes, credentials in the URL and garbage', async () => {
    await rejectsWith(assertAllowedTarget('ftp://hooks.example.com/', strict), 'scheme');
    await rejectsWith(assertAllowedTarget('file:///etc/passwd', strict), 'scheme');
    await rejectsWith(assertAllowedTarget('javascript:alert(1)', strict), 'scheme');
    await rejectsWith(assertAllowedTarget('https://user:pw@hooks.example.com/', strict), 'credentials');
    await rejectsWith(assertAllowedTarget('https://user@hooks.example.com/', strict), 'credentials');
    await rejectsWith(assertAllowedTarget('not a url', strict), 'invalid_url');
  });

  it('refuses literal internal addresses in every encoding', async () => {
    for (const url of [
      'http://127.0.0.1/',
      'http://2130706433/',
      'http://0x7f.1/',
      'http://0x7f000001/',
      'http://0177.0.0.1/',
      'http://127.1/',
      'http://[::ffff:127.0.0.1]/',
      'http://[::1]:8080/',
      'http://[0:0:0:0:0:0:0:1]/',
      'http://[fd00::1]/',
      'http://[64:ff9b::7f00:1]/',
      'http://169.254.169.254/latest/meta-data/',
      'http://[::ffff:a9fe:a9fe]/',
      'http://0.0.0.0:3000/',
      'http://0/',
      'http://10.0.0.1/',
      'http://100.100.100.200/',
      'http://198.18.0.1/',
    ]) {
      await rejectsWith(assertAllowedTarget(url, strict));
    }
  });

  it('refuses a hostname resolving to loopback (localhost) and accepts it when private targets are allowed', async () => {
    await rejectsWith(assertAllowedTarget('http://localhost:8080/hook', { allowPrivate: false }), 'loopback');
    assert.equal(
      (await assertAllowedTarget('http://localhost:8080/hook', { allowPrivate: true })).hostname,
      'localhost',
    );
    assert.ok(await assertAllowedTarget('http://127.0.0.1/', { allowPrivate: true }));
  });

  it('refuses a name if ANY of its addresses is internal (wildcard DNS, split answers)', async () => {
    const resolver = fixed({
      '127.0.0.1.nip.io': ['127.0.0.1'],
      'mixed.example.com': [PUBLIC_V4, '10.0.0.5'],
      'v6.example.com': [PUBLIC_V4, 'fd00::2'],
    });
    await rejectsWith(assertAllowedTarget('https://127.0.0.1.nip.io/', { allowPrivate: false, resolver }), 'loopback');
    await rejectsWith(assertAllowedTarget('https://mixed.example.com/', { allowPrivate: false, resolver }), 'private');
    await rejectsWith(
      assertAllowedTarget('https://v6.example.com/', { allowPrivate: false, resolver }),
      'unique_local',
    );
  });

  it('reports an unresolvable host as a dns problem', async () => {
    await rejectsWith(assertAllowedTarget('https://nowhere.example.com/', strict), 'dns');
    await rejectsWith(
      assertAllowedTarget('https://empty.example.com/', { allowPrivate: false, resolver: async () => [] }),
      'dns',
    );
  });
});

describe('createGuardedDispatcher', () => {
  let server: Server;
  let port = 0;
  let hits = 0;
  before(async () => {
    server = createServer((req, res) => {
      hits += 1;
      res.setHeader('content-type', 'text/plain');
      res.end(`host=${req.headers.host}`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('refuses to connect to 127.0.0.1 when private targets are not allowed, even without a URL check', async () => {
    const dispatcher = createGuardedDispatcher({ allowPrivate: false });
    const before = hits;
    for (const url of [
      `http://127.0.0.1:${port}/`,
      `http://2130706433:${port}/`,
      `http://0x7f.1:${port}/`,
      `http://[::ffff:127.0.0.1]:${port}/`,
      `http://[::1]:${port}/`,
      `http://localhost:${port}/`,
    ]) {
      await rejectsWith(request(url, { dispatcher }));
    }
    assert.equal(hits, before, 'the receiver was never reached');
    await dispatcher.close();
  });

  it('defeats DNS rebinding: the address connected to is the address checked', async () => {
    // First answer public (passes the create-time check), later answers loopback.
    let calls = 0;
    const resolver: Resolver = async () => [{ address: calls++ === 0 ? PUBLIC_V4 : '127.0.0.1', family: 4 }];
    const url = `http://rebind.example.com:${port}/`;
    assert.ok(await assertAllowedTarget(url, { allowPrivate: false, resolver }));
    const dispatcher = createGuardedDispatcher({ allowPrivate: false, resolver });
    const before = hits;
    await rejectsWith(request(url, { dispatcher }), 'loopback');
    assert.equal(hits, before);
    await dispatcher.close();
  });

  it('connects to loopback when private targets are allowed, keeping the Host header', async () => {
    const dispatcher = createGuardedDispatcher({
      allowPrivate: true,
      resolver: fixed({ 'receiver.test': ['127.0.0.1'] }),
    });
    const direct = await request(`http://127.0.0.1:${port}/`, { dispatcher });
    assert.equal(direct.statusCode, 200);
    await direct.body.text();
    const named = await request(`http://receiver.test:${port}/`, { dispatcher });
    assert.equal(await named.body.text(), `host=receiver.test:${port}`);
    await dispatcher.close();
  });

  it('surfaces an unresolvable name as a DNS error, not as an SSRF refusal', async () => {
    const dispatcher = createGuardedDispatcher({ allowPrivate: false, resolver: fixed({}) });
    await assert.rejects(
      request(`http://nowhere.example.com:${port}/`, { dispatcher }),
      (err: NodeJS.ErrnoException) => {
        assert.equal(isTargetNotAllowed(err), false);
        assert.equal(err.code, 'ENOTFOUND');
        return true;
      },
    );
    await dispatcher.close();
  });
});
